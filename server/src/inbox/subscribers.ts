import type { Tenant } from '../db/keys.ts';
import type { SubscriberRow } from '../db/rows.ts';
import type { Store } from '../db/store.ts';
import { newSubscriberRow } from '../engine/subscribers.ts';
import { conflict, notFound } from '../errors.ts';
import { nowIso } from '../ids.ts';
import { toJson } from '../json.ts';

// Subscribers: found, created or updated. Every query is confined to the key's environment: a
// subscriber of another one is a 404.

/** The subscriber `subscriberId` of the request's environment; 404 when there is none. */
export async function findSubscriber(store: Store, tenant: Tenant, subscriberId: string): Promise<SubscriberRow> {
  const row = await store.kysely
    .selectFrom('subscribers')
    .selectAll()
    .where('environment_id', '=', tenant.environmentId)
    .where('subscriber_id', '=', subscriberId)
    .executeTakeFirst();
  if (!row) throw notFound('Subscriber', subscriberId);
  return row;
}

/** A subscriber's profile as endpoint 8 takes it: a field left out keeps its value, null clears it. */
export interface SubscriberInput {
  subscriberId: string;
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  phone?: string | null;
  avatar?: string | null;
  locale?: string | null;
  timezone?: string | null;
  data?: Record<string, unknown> | null;
}

/**
 * Creates the subscriber, or updates the one with the same subscriberId with the fields given
 * (409 instead when `failIfExists`). Returns the subscriber as stored.
 */
export async function saveSubscriber(store: Store, tenant: Tenant, input: SubscriberInput, failIfExists: boolean): Promise<SubscriberRow> {
  const k = store.kysely;
  const now = nowIso();
  const row = newSubscriberRow(tenant, input.subscriberId, now, {
    first_name: input.firstName ?? null,
    last_name: input.lastName ?? null,
    email: input.email ?? null,
    phone: input.phone ?? null,
    avatar: input.avatar ?? null,
    locale: input.locale ?? null,
    timezone: input.timezone ?? null,
    data: input.data == null ? null : toJson(input.data),
  });
  const inserted = await k
    .insertInto('subscribers')
    .values(row)
    .onConflict((oc) => oc.columns(['environment_id', 'subscriber_id']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return row;
  if (failIfExists) throw conflict(`Subscriber '${input.subscriberId}' already exists`);
  const updated = await k
    .updateTable('subscribers')
    .set((eb) => ({ ...subscriberChanges(input), updated_at: now, version: eb('version', '+', 1) }))
    .where('environment_id', '=', tenant.environmentId)
    .where('subscriber_id', '=', input.subscriberId)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw notFound('Subscriber', input.subscriberId);
  return updated;
}

/** The columns a create-or-update input sets; fields left out keep their value. */
function subscriberChanges(input: SubscriberInput) {
  const changes: Partial<SubscriberRow> = {};
  const set = <C extends keyof SubscriberRow>(column: C, value: SubscriberRow[C] | undefined) => {
    if (value !== undefined) changes[column] = value;
  };
  set('first_name', input.firstName);
  set('last_name', input.lastName);
  set('email', input.email);
  set('phone', input.phone);
  set('avatar', input.avatar);
  set('locale', input.locale);
  set('timezone', input.timezone);
  if (input.data !== undefined) changes.data = input.data === null ? null : toJson(input.data);
  return changes;
}
