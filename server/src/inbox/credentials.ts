import type { Tenant } from '../db/keys.ts';
import type { SubscriberRow } from '../db/rows.ts';
import { inTransaction, type Store } from '../db/store.ts';
import { isWebhookUrl, refusedHost } from '../engine/webhook.ts';
import { badRequest, conflict, errorMessage, fieldProblem, HttpError, notFound, type FieldErrors } from '../errors.ts';
import { nowIso } from '../ids.ts';
import { parseJson, toJson } from '../json.ts';
import { findSubscriber } from './subscribers.ts';

// A subscriber's channel credentials (endpoints 4 and 5): chat webhooks and push device tokens, one
// entry per (providerId, integrationIdentifier) in the subscriber's `channels`.

/** Provider values accepted for subscriber credentials (chat and push): the spec's, and the six more Novu's SDK sends. */
export const CREDENTIAL_PROVIDERS = [
  'slack', 'discord', 'msteams', 'mattermost', 'ryver', 'zulip', 'grafana-on-call', 'getstream', 'rocket-chat',
  'whatsapp-business', 'chat-webhook', 'service-slack', 'webex-messaging', 'line', 'novu-slack', 'telegram', 'sendblue',
  'novu-web-chat', 'fcm', 'apns', 'expo', 'one-signal', 'pushpad', 'push-webhook', 'pusher-beams', 'appio',
] as const;

/** The credentials that are URLs: each must be an http(s) one. */
export const URL_FIELDS = ['webhookUrl', 'imageUrl', 'externalUrl'] as const;

/**
 * The most a subscriber's credentials (`channels`) may hold, in bytes of JSON. PATCH appends device
 * tokens and adds an entry per integrationIdentifier, so requests each within the body limit could
 * grow one subscriber without bound; the subscriber is embedded in every message of its feed, and a
 * page of them past what one string can hold failed with a 500. A few devices' tokens take a few KB.
 */
export const MAX_CHANNELS_BYTES = 65_536;

/** How often an update that met a concurrent one is tried again before the answer is 409. */
const MAX_ATTEMPTS = 10;

/** The credentials of one channel entry, as endpoints 4 and 5 take them. */
export interface ChannelCredentials {
  webhookUrl?: string;
  channel?: string;
  deviceTokens?: string[];
  alertUid?: string;
  title?: string;
  imageUrl?: string;
  state?: string;
  externalUrl?: string;
}

/** Endpoints 4 and 5's body. */
export interface CredentialsInput {
  providerId: (typeof CREDENTIAL_PROVIDERS)[number];
  integrationIdentifier?: string;
  credentials: ChannelCredentials;
}

/** A channel credential entry inside Subscriber.channels, as stored. */
export interface ChannelEntry {
  providerId: string;
  integrationIdentifier?: string;
  credentials: ChannelCredentials;
  _integrationId?: string;
}

/**
 * Appends (`append`: PATCH) or replaces (PUT) the credentials of one channel entry of the
 * subscriber; the subscriber as stored after. Two updates of one subscriber never lose each
 * other's entries (optimistic concurrency on its version).
 */
export async function updateCredentials(store: Store, tenant: Tenant, subscriberId: string, input: CredentialsInput, append: boolean): Promise<SubscriberRow> {
  checkCredentialUrls(input.credentials);
  // (An unknown subscriber is a 404 before anything is said of integrations.)
  await findSubscriber(store, tenant, subscriberId);
  const integration = await findIntegrationFor(store, tenant.environmentId, input.providerId, input.integrationIdentifier);
  // Every entry belongs to an integration (Novu's SDK reads none without): none active, nothing stored.
  if (!integration) {
    const which = input.integrationIdentifier === undefined ? '' : ` with identifier '${input.integrationIdentifier}'`;
    throw badRequest(`No active ${input.providerId} integration${which} in this environment: create one (POST /v1/integrations) before setting its credentials`);
  }
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const updated = await inTransaction(store, async (trx) => {
      // PostgreSQL: hold the row, so concurrent updates of one subscriber queue here rather than
      // each losing the version check below (a dozen at once ran out of attempts on a busy machine).
      // SQLite runs one transaction at a time, and the version check alone suffices.
      let select = trx.kysely.selectFrom('subscribers').selectAll().where('environment_id', '=', tenant.environmentId).where('subscriber_id', '=', subscriberId);
      if (trx.dialect === 'postgres') select = select.forUpdate();
      const row = await select.executeTakeFirst();
      if (!row) throw notFound('Subscriber', subscriberId);
      const channels = mergeChannel(parseJson<ChannelEntry[]>(row.channels, []), input, append, integration);
      const bytes = Buffer.byteLength(toJson(channels));
      // (A change that shrinks what a subscriber holds is let through, even past the cap.)
      if (bytes > MAX_CHANNELS_BYTES && bytes > Buffer.byteLength(row.channels || '[]')) {
        const problem = `would make the subscriber's credentials ${bytes} bytes of JSON; at most ${MAX_CHANNELS_BYTES} bytes (PUT replaces an entry's device tokens)`;
        throw fieldProblem('credentials', problem);
      }
      return trx.kysely
        .updateTable('subscribers')
        .set({ channels: toJson(channels), version: row.version + 1, updated_at: nowIso() })
        .where('id', '=', row.id)
        .where('version', '=', row.version)
        .returningAll()
        .executeTakeFirst();
    });
    if (updated) return updated;
  }
  throw conflict('The subscriber is being changed by other requests; try again');
}

/** 422 naming every credential URL that is not an http(s) one, or a webhook the chat step would refuse to reach. */
function checkCredentialUrls(credentials: ChannelCredentials) {
  const errors: FieldErrors = {};
  for (const field of URL_FIELDS) {
    const value = credentials[field];
    if (value !== undefined && !isHttpUrl(value)) {
      errors[`credentials.${field}`] = { messages: ['must be an http(s) URL'], value };
    }
  }
  // The chat step posts to webhookUrl: an address it would refuse to reach is refused here already.
  const hook = credentials.webhookUrl;
  if (hook !== undefined && !errors['credentials.webhookUrl']) {
    const why = isWebhookUrl(hook) ? refusedHost(hook) : 'it holds a user name or password';
    if (why) errors['credentials.webhookUrl'] = { messages: [`must be a public http(s) URL: ${why}`], value: hook };
  }
  if (Object.keys(errors).length > 0) throw new HttpError(422, errorMessage(errors), errors);
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * The active integration a credential entry belongs to: the one with that identifier and provider,
 * or, without an identifier, the provider's primary (else first) active integration.
 */
async function findIntegrationFor(store: Store, environmentId: string, providerId: string, identifier: string | undefined) {
  let query = store.kysely
    .selectFrom('integrations')
    .select('id')
    .where('environment_id', '=', environmentId)
    .where('provider_id', '=', providerId)
    .where('active', '=', 1);
  if (identifier !== undefined) query = query.where('identifier', '=', identifier);
  const row = await query.orderBy('primary', 'desc').orderBy('created_at').orderBy('id').executeTakeFirst();
  return row?.id;
}

/** The subscriber's channels with `input` applied: one entry per (providerId, integrationIdentifier). */
export function mergeChannel(channels: ChannelEntry[], input: CredentialsInput, append: boolean, integrationId: string | undefined): ChannelEntry[] {
  const same = (entry: ChannelEntry) => entry.providerId === input.providerId && entry.integrationIdentifier === input.integrationIdentifier;
  const existing = channels.find(same);
  const given = input.credentials;
  let credentials: ChannelCredentials;
  if (existing && append) {
    credentials = { ...existing.credentials, ...given };
    if (existing.credentials.deviceTokens || given.deviceTokens) {
      credentials.deviceTokens = unique([...(existing.credentials.deviceTokens ?? []), ...(given.deviceTokens ?? [])]);
    }
  } else {
    credentials = { ...given };
    if (given.deviceTokens) credentials.deviceTokens = unique(given.deviceTokens);
  }
  const entryIntegration = integrationId ?? existing?._integrationId;
  // (Its keys in this order: providerId, integrationIdentifier, credentials, _integrationId.)
  const entry: ChannelEntry = {
    providerId: input.providerId,
    ...(input.integrationIdentifier !== undefined ? { integrationIdentifier: input.integrationIdentifier } : {}),
    credentials,
    ...(entryIntegration ? { _integrationId: entryIntegration } : {}),
  };
  if (!existing) return [...channels, entry];
  return channels.map((other) => (other === existing ? entry : other));
}

const unique = (values: string[]) => [...new Set(values)];
