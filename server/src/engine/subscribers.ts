import type { Tenant } from '../db/keys.ts';
import { newId } from '../ids.ts';
import { toJson } from '../json.ts';
import { insertRows } from './bulk.ts';
import type { Store } from '../db/store.ts';
import type { SubscriberRow } from '../db/rows.ts';

/**
 * A recipient of a trigger: a subscriberId, or a subscriber object whose given fields are applied
 * (endpoint 8's body, `CreateSubscriberRequest` in the elements' api/types.ts; written out here so the
 * service's package stands alone).
 */
export interface RecipientInput {
  subscriberId: string;
  /** (null, as Novu's SDK may send, leaves the field as it is) */
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  phone?: string | null;
  avatar?: string | null;
  timezone?: string | null;
  locale?: string | null;
  data?: unknown;
}

/** A new subscriber's row: no profile, no channels, no topics; `fields` fill it in. */
export function newSubscriberRow(tenant: Tenant, subscriberId: string, iso: string, fields: Partial<SubscriberRow> = {}): SubscriberRow {
  return {
    id: newId(Date.parse(iso)),
    environment_id: tenant.environmentId,
    organization_id: tenant.organizationId,
    subscriber_id: subscriberId,
    first_name: null,
    last_name: null,
    email: null,
    phone: null,
    avatar: null,
    locale: null,
    timezone: null,
    data: null,
    channels: '[]',
    topics: '[]',
    is_online: 0,
    last_online_at: null,
    version: 0,
    created_at: iso,
    updated_at: iso,
    ...fields,
  };
}

const FIELDS = {
  firstName: 'first_name',
  lastName: 'last_name',
  email: 'email',
  phone: 'phone',
  avatar: 'avatar',
  locale: 'locale',
  timezone: 'timezone',
} as const;

function withoutNulls(recipient: RecipientInput): RecipientInput {
  return Object.fromEntries(Object.entries(recipient).filter(([, value]) => value !== null)) as RecipientInput;
}

/** New subscribers per insert statement (bulk.ts: within SQLite's parameters, 17 columns each). */
const SUBSCRIBERS_PER_INSERT = 500;

/**
 * `to` of a trigger as a list of recipient objects, first occurrence of each subscriberId kept. A
 * field given as null is left out: it leaves the subscriber's value as it is.
 */
export function normalizeRecipients(to: string | RecipientInput | (string | RecipientInput)[]): RecipientInput[] {
  const list = Array.isArray(to) ? to : [to];
  const seen = new Map<string, RecipientInput>();
  for (const entry of list) {
    const recipient = typeof entry === 'string' ? { subscriberId: entry } : withoutNulls(entry);
    const prior = seen.get(recipient.subscriberId);
    seen.set(recipient.subscriberId, prior ? { ...prior, ...recipient } : recipient);
  }
  return [...seen.values()];
}

/**
 * The subscriber rows of the recipients, in order: unknown subscribers are created, and the fields
 * a recipient object gives are written to an existing subscriber.
 */
export async function resolveRecipients(store: Store, tenant: Tenant, recipients: RecipientInput[], now = new Date()): Promise<SubscriberRow[]> {
  const k = store.kysely;
  const ids = recipients.map((recipient) => recipient.subscriberId);
  const load = async () =>
    new Map(
      (
        await k
          .selectFrom('subscribers')
          .selectAll()
          .where('environment_id', '=', tenant.environmentId)
          .where('subscriber_id', 'in', ids)
          .execute()
      ).map((row) => [row.subscriber_id, row]),
    );
  const existing = await load();
  const iso = now.toISOString();
  const fieldsOf = (recipient: RecipientInput) => {
    const fields: Record<string, string | null> = {};
    for (const [key, column] of Object.entries(FIELDS)) {
      const value = recipient[key as keyof typeof FIELDS];
      if (value !== undefined) fields[column] = value;
    }
    if (recipient.data !== undefined) fields.data = toJson(recipient.data);
    return fields;
  };
  const given = recipients.map(fieldsOf);
  // New subscribers: one insert for them all (a large trigger names many), with the fields given.
  const made = new Map<string, SubscriberRow>();
  recipients.forEach((recipient, index) => {
    if (existing.has(recipient.subscriberId)) return;
    made.set(recipient.subscriberId, newSubscriberRow(tenant, recipient.subscriberId, iso, given[index]!));
  });
  const rows = [...made.values()];
  for (let start = 0; start < rows.length; start += SUBSCRIBERS_PER_INSERT) {
    await insertRows(store, 'subscribers', rows.slice(start, start + SUBSCRIBERS_PER_INSERT), ['environment_id', 'subscriber_id']);
  }
  let current = made.size > 0 ? await load() : existing;
  // Fields given for a subscriber that existed (or was created at the same moment by another request) update it.
  let changed = false;
  for (const [index, recipient] of recipients.entries()) {
    const row = current.get(recipient.subscriberId);
    const fields = given[index]!;
    if (!row || Object.keys(fields).length === 0 || row.id === made.get(recipient.subscriberId)?.id) continue;
    await k
      .updateTable('subscribers')
      .set({ ...fields, updated_at: iso })
      .where('id', '=', row.id)
      .execute();
    changed = true;
  }
  if (changed) current = await load();
  return recipients.map((recipient) => {
    const row = current.get(recipient.subscriberId);
    if (!row) throw new Error(`subscriber '${recipient.subscriberId}' could not be created`);
    return row;
  });
}
