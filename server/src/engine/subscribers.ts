import type { Tenant } from '../auth.ts';
import { newId } from '../ids.ts';
import { toJson } from '../json.ts';
import type { SubscriberRow } from '../views.ts';
import type { Store } from './types.ts';

/**
 * A recipient of a trigger: a subscriberId, or a subscriber object whose given fields are applied
 * (endpoint 8's body, `CreateSubscriberRequest` in the elements' api/types.ts; written out here so the
 * service's package stands alone).
 */
export interface RecipientInput {
  subscriberId: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
  avatar?: string;
  timezone?: string;
  locale?: string;
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

/** `to` of a trigger as a list of recipient objects, first occurrence of each subscriberId kept. */
export function normalizeRecipients(to: string | RecipientInput | (string | RecipientInput)[]): RecipientInput[] {
  const list = Array.isArray(to) ? to : [to];
  const seen = new Map<string, RecipientInput>();
  for (const entry of list) {
    const r = typeof entry === 'string' ? { subscriberId: entry } : entry;
    const prior = seen.get(r.subscriberId);
    seen.set(r.subscriberId, prior ? { ...prior, ...r } : r);
  }
  return [...seen.values()];
}

/**
 * The subscriber rows of the recipients, in order: unknown subscribers are created, and the fields
 * a recipient object gives are written to an existing subscriber.
 */
export async function resolveRecipients(store: Store, tenant: Tenant, recipients: RecipientInput[], now = new Date()): Promise<SubscriberRow[]> {
  const k = store.kysely;
  const ids = recipients.map((r) => r.subscriberId);
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
  let changed = false;
  // New subscribers given by id alone: one insert for them all (a large trigger names many).
  const bare = new Set(recipients.filter((r) => !existing.has(r.subscriberId) && Object.keys(r).length === 1));
  const list = [...bare];
  for (let i = 0; i < list.length; i += 500) {
    await k
      .insertInto('subscribers')
      .values(list.slice(i, i + 500).map((r) => newSubscriberRow(tenant, r.subscriberId, iso)))
      .onConflict((oc) => oc.columns(['environment_id', 'subscriber_id']).doNothing())
      .execute();
    changed = true;
  }
  for (const r of recipients) {
    if (bare.has(r)) continue;
    const fields: Record<string, string | null> = {};
    for (const [key, column] of Object.entries(FIELDS)) {
      const value = r[key as keyof typeof FIELDS];
      if (value !== undefined) fields[column] = value;
    }
    if (r.data !== undefined) fields.data = toJson(r.data);
    const row = existing.get(r.subscriberId);
    if (!row) {
      await k
        .insertInto('subscribers')
        .values(newSubscriberRow(tenant, r.subscriberId, iso, fields))
        // Created at the same moment by another request: then the given fields update it.
        .onConflict((oc) => {
          const target = oc.columns(['environment_id', 'subscriber_id']);
          return Object.keys(fields).length > 0 ? target.doUpdateSet({ ...fields, updated_at: iso }) : target.doNothing();
        })
        .execute();
      changed = true;
    } else if (Object.keys(fields).length > 0) {
      await k
        .updateTable('subscribers')
        .set({ ...fields, updated_at: iso })
        .where('id', '=', row.id)
        .execute();
      changed = true;
    }
  }
  const rows = changed ? await load() : existing;
  return recipients.map((r) => {
    const row = rows.get(r.subscriberId);
    if (!row) throw new Error(`subscriber '${r.subscriberId}' could not be created`);
    return row;
  });
}
