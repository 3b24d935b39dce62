import { randomInt } from 'node:crypto';
import type { Tenant } from '../db/keys.ts';
import type { IntegrationRow } from '../db/rows.ts';
import type { IntegrationTable } from '../db/schema.ts';
import { openIntegration, sealIntegration, secretsFor } from '../db/secrets.ts';
import type { Db } from '../db/index.ts';
import { conflict, HttpError, notFound, type FieldErrors } from '../errors.ts';
import { newId, nowIso } from '../ids.ts';
import { bool, int, parseJson, toJson } from '../json.ts';

// Integrations: create (endpoint 11), update (2), list (15). Create and update act in the key's
// environment (another environment's integration is a 404); the list shows the key's whole
// organization, as decisions.md says. Credentials and the inbound webhook signing key are sealed at
// rest (db/secrets.ts). The create and update answers return them as given; every other answer
// (the list, which every environment of the organization reads) masks them: `****` and, for a
// secret of MASK_SHOWS_TAIL_FROM characters or more, its last MASK_TAIL. They are never logged.

/** An integration as endpoint 11 takes it (and, all optional but the provider and channel, endpoint 2). */
export interface IntegrationInput {
  providerId: string;
  channel: string;
  name?: string;
  identifier?: string;
  _environmentId?: string;
  credentials?: Record<string, unknown>;
  active?: boolean;
  /** Accepted for compatibility; this service does not call providers to check them. */
  check?: boolean;
  conditions?: unknown[];
  configurations?: Record<string, unknown>;
}

/** Endpoint 2's body: every field of a create, all optional, but the provider and the channel, which stay as created. */
export type IntegrationChanges = Partial<Omit<IntegrationInput, 'providerId' | 'channel'>>;

/** Secrets this long or longer show their last MASK_TAIL characters when masked; shorter ones nothing. */
const MASK_SHOWS_TAIL_FROM = 12;
const MASK_TAIL = 4;

/** Credentials that name things rather than grant access: shown as stored. The others are masked. */
const PLAIN_CREDENTIALS = new Set<string>([
  'domain', 'host', 'port', 'region', 'accountSid', 'messageProfileId', 'from', 'senderName', 'projectName',
  'applicationId', 'clientId', 'baseUrl', 'redirectUrl', 'ipPoolName', 'apiKeyRequestHeader', 'secretKeyRequestHeader',
  'idPath', 'datePath', 'instanceId', 'alertUid', 'title', 'imageUrl', 'state', 'externalLink', 'channelId',
  'phoneNumberIdentification', 'senderId', 'AppIOBaseUrl',
]);

/** `****`, then the last characters of a secret long enough for them to give nothing away. */
export function maskSecret(value: unknown): unknown {
  if (typeof value === 'boolean' || value === null || value === undefined) return value;
  if (typeof value === 'string' && value.length >= MASK_SHOWS_TAIL_FROM) return `****${value.slice(-MASK_TAIL)}`;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskSecret(item)]));
  }
  return '****';
}

function maskCredentials(credentials: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(credentials).map(([key, value]) => [key, PLAIN_CREDENTIALS.has(key) ? value : maskSecret(value)]));
}

function maskConfigurations(configurations: Record<string, unknown>): Record<string, unknown> {
  if (configurations.inboundWebhookSigningKey === undefined) return configurations;
  return { ...configurations, inboundWebhookSigningKey: maskSecret(configurations.inboundWebhookSigningKey) };
}

/**
 * Credentials an active integration of a known provider must have (by the spec's credential names).
 * Providers not listed here require nothing.
 */
export const REQUIRED_CREDENTIALS: Record<string, readonly string[]> = {
  // email
  sendgrid: ['apiKey', 'from'],
  mailgun: ['apiKey', 'domain', 'from'],
  mailjet: ['apiKey', 'secretKey', 'from'],
  postmark: ['apiKey', 'from'],
  resend: ['apiKey', 'from'],
  mandrill: ['apiKey', 'from'],
  sendinblue: ['apiKey', 'from'],
  brevo: ['apiKey', 'from'],
  sparkpost: ['apiKey', 'from'],
  ses: ['apiKey', 'secretKey', 'region', 'from'],
  nodemailer: ['host', 'port', 'from'],
  // sms
  twilio: ['accountSid', 'token', 'from'],
  plivo: ['accountSid', 'token', 'from'],
  sns: ['apiKey', 'secretKey', 'region'],
  nexmo: ['apiKey', 'secretKey', 'from'],
  telnyx: ['apiKey', 'from'],
  messagebird: ['accessKey', 'from'],
  // chat: slack, discord, msteams... post to the subscriber's own webhook: nothing required here
  // push
  fcm: ['serviceAccount'],
  apns: ['secretKey', 'apiKey', 'projectName', 'applicationId'], // .p8 key, key id, team id, bundle id
  expo: ['apiKey'],
  'one-signal': ['applicationId', 'apiKey'],
  pushpad: ['apiKey', 'applicationId'],
  'pusher-beams': ['instanceId', 'secretKey'],
  'push-webhook': ['webhookUrl'],
};

/** 422 naming every required credential the provider lacks. */
function checkRequiredCredentials(providerId: string, credentials: Record<string, unknown>) {
  const missing = (REQUIRED_CREDENTIALS[providerId] ?? []).filter((field) => {
    const v = credentials[field];
    return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
  });
  if (missing.length === 0) return;
  const errors: FieldErrors = {};
  for (const field of missing) {
    errors[`credentials.${field}`] = { messages: ['is required when the integration is active'], value: credentials[field] ?? null };
  }
  throw new HttpError(
    422,
    `An active ${providerId} integration needs credentials: ${missing.join(', ')} (missing)`,
    errors,
  );
}

/** `_environmentId` may only name the key's own environment; any other is a 404, whether it exists or not. */
function checkEnvironment(given: string | undefined, environmentId: string) {
  if (given !== undefined && given !== environmentId) throw notFound('Environment', given);
}

const IDENTIFIER_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** Random characters after the provider in an identifier nobody gave. */
const IDENTIFIER_SUFFIX_LENGTH = 6;
/** How many random identifiers are tried before the answer asks for one. */
const IDENTIFIER_ATTEMPTS = 5;

function defaultIdentifier(providerId: string): string {
  let suffix = '';
  for (let i = 0; i < IDENTIFIER_SUFFIX_LENGTH; i++) suffix += IDENTIFIER_ALPHABET[randomInt(IDENTIFIER_ALPHABET.length)];
  return `${providerId}-${suffix}`;
}

function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/** The spec's Integration, its `credentials` and `configurations` given opened (or masked). */
export function integrationView(row: IntegrationRow, credentials: Record<string, unknown>, configurations: Record<string, unknown>) {
  return {
    _id: row.id,
    _environmentId: row.environment_id,
    _organizationId: row.organization_id,
    name: row.name,
    identifier: row.identifier,
    providerId: row.provider_id,
    channel: row.channel,
    credentials,
    configurations,
    active: bool(row.active),
    deleted: false,
    primary: bool(row.primary),
    conditions: parseJson<unknown[]>(row.conditions, []),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The integration's view; its secrets opened only for the create and update answers (`reveal`), masked otherwise. */
async function view(db: Db, row: IntegrationRow, reveal = false) {
  const opened = openIntegration(await secretsFor(db), row);
  if (reveal) return integrationView(row, opened.credentials, opened.configurations);
  return integrationView(row, maskCredentials(opened.credentials), maskConfigurations(opened.configurations));
}

/**
 * Keeps one primary among the active integrations of a channel in an environment: an inactive
 * integration is never primary, and when no active one is, the first active one (oldest) becomes it.
 */
async function settlePrimary(db: Db, environmentId: string, channel: string) {
  await db.kysely.transaction().execute(async (trx) => {
    await trx
      .updateTable('integrations')
      .set({ primary: 0 })
      .where('environment_id', '=', environmentId)
      .where('channel', '=', channel)
      .where('active', '=', 0)
      .where('primary', '=', 1)
      .execute();
    const current = await trx
      .selectFrom('integrations')
      .select('id')
      .where('environment_id', '=', environmentId)
      .where('channel', '=', channel)
      .where('active', '=', 1)
      .where('primary', '=', 1)
      .executeTakeFirst();
    if (current) return;
    const first = await trx
      .selectFrom('integrations')
      .select('id')
      .where('environment_id', '=', environmentId)
      .where('channel', '=', channel)
      .where('active', '=', 1)
      .orderBy('created_at')
      .orderBy('id')
      .executeTakeFirst();
    if (first) await trx.updateTable('integrations').set({ primary: 1 }).where('id', '=', first.id).execute();
  });
}

async function findIntegration(db: Db, environmentId: string, integrationId: string): Promise<IntegrationRow> {
  const row = await db.kysely.selectFrom('integrations').selectAll().where('environment_id', '=', environmentId).where('id', '=', integrationId).executeTakeFirst();
  if (!row) throw notFound('Integration', integrationId);
  return row;
}

/** Endpoint 11: creates an integration in the key's environment; its view, secrets revealed. */
export async function createIntegration(db: Db, tenant: Tenant, input: IntegrationInput) {
  const { organizationId, environmentId } = tenant;
  checkEnvironment(input._environmentId, environmentId);
  const credentials: Record<string, unknown> = { ...(input.credentials ?? {}) };
  const active = input.active ?? false;
  if (active) checkRequiredCredentials(input.providerId, credentials);

  const secrets = await secretsFor(db);
  const now = nowIso();
  let row: IntegrationRow | undefined;
  for (let attempt = 0; attempt < IDENTIFIER_ATTEMPTS && !row; attempt++) {
    const id = newId();
    const sealed = sealIntegration(secrets, id, credentials, input.configurations ?? {});
    const candidate: IntegrationRow = {
      id,
      environment_id: environmentId,
      organization_id: organizationId,
      name: input.name ?? input.providerId,
      identifier: input.identifier ?? defaultIdentifier(input.providerId),
      provider_id: input.providerId,
      channel: input.channel,
      credentials: sealed.credentials,
      configurations: sealed.configurations,
      conditions: toJson(input.conditions ?? []),
      active: int(active),
      primary: 0,
      created_at: now,
      updated_at: now,
    };
    const inserted = await db.kysely
      .insertInto('integrations')
      .values(candidate)
      .onConflict((oc) => oc.columns(['environment_id', 'identifier']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) row = candidate;
    else if (input.identifier !== undefined) {
      throw conflict(`An integration with identifier '${input.identifier}' already exists in this environment`);
    }
  }
  if (!row) throw conflict('Could not find a free identifier; give one');
  if (active) await settlePrimary(db, environmentId, row.channel);
  return view(db, await findIntegration(db, environmentId, row.id), true);
}

/** Endpoint 2: `credentials` and `configurations` replace the stored ones; its view, secrets revealed. */
export async function updateIntegration(db: Db, tenant: Tenant, integrationId: string, changes: IntegrationChanges) {
  const { environmentId } = tenant;
  const existing = await findIntegration(db, environmentId, integrationId);
  checkEnvironment(changes._environmentId, environmentId);
  const secrets = await secretsFor(db);
  const current = openIntegration(secrets, existing);
  const credentials = changes.credentials ? { ...changes.credentials } : current.credentials;
  const configurations = changes.configurations ?? current.configurations;
  const wasActive = existing.active === 1;
  const active = changes.active ?? wasActive;
  if (active) checkRequiredCredentials(existing.provider_id, credentials);

  const sealed = sealIntegration(secrets, existing.id, credentials, configurations);
  const columns: Partial<IntegrationTable> = {
    credentials: sealed.credentials,
    configurations: sealed.configurations,
    active: int(active),
    updated_at: nowIso(),
  };
  if (changes.name !== undefined) columns.name = changes.name;
  if (changes.identifier !== undefined) columns.identifier = changes.identifier;
  if (changes.conditions !== undefined) columns.conditions = toJson(changes.conditions);
  try {
    await db.kysely.updateTable('integrations').set(columns).where('id', '=', existing.id).execute();
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw conflict(`An integration with identifier '${changes.identifier}' already exists in this environment`);
    }
    throw err;
  }
  if (active !== wasActive) await settlePrimary(db, environmentId, existing.channel);
  return view(db, await findIntegration(db, environmentId, existing.id), true);
}

/** Endpoint 15: the integrations of the key's organization (all its environments), secrets masked. */
export async function listIntegrations(db: Db, tenant: Tenant) {
  const rows = await db.kysely
    .selectFrom('integrations')
    .selectAll()
    .where('organization_id', '=', tenant.organizationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return Promise.all(rows.map((row) => view(db, row)));
}
