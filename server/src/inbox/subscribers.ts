import type { Tenant } from '../db/keys.ts';
import { columnList, read, type Reader } from '../db/read.ts';
import type { SubscriberRow } from '../db/rows.ts';
import { inTransaction, type Store } from '../db/store.ts';
import { newSubscriberRow } from '../engine/subscribers.ts';
import { conflict, HttpError, notFound } from '../errors.ts';
import { nowIso } from '../ids.ts';
import { toJson } from '../json.ts';
import { subscriberView } from './views.ts';

// Subscribers: found, created or updated. Every query is confined to the key's environment: a
// subscriber of another one is a 404.

/**
 * Every column of a subscriber (the compiler tells when one is missing from this record), named in
 * FIND_SUBSCRIBER: a named statement's `select *` fails once another version adds a column
 * (inbox/views.ts, EVERY_COLUMN).
 */
const SUBSCRIBER_COLUMNS: Record<keyof SubscriberRow, true> = {
  id: true,
  environment_id: true,
  organization_id: true,
  subscriber_id: true,
  first_name: true,
  last_name: true,
  email: true,
  phone: true,
  avatar: true,
  locale: true,
  timezone: true,
  data: true,
  channels: true,
  topics: true,
  is_online: true,
  last_online_at: true,
  version: true,
  created_at: true,
  updated_at: true,
};
/**
 * findSubscriber's read: one text, run as a named statement on PostgreSQL outside a transaction and
 * at once on SQLite (db/read.ts). The inbox's marks, actions and streams opened each read it: the
 * most frequent statement of the capacity bench's load.
 */
const FIND_SUBSCRIBER = `select ${columnList(Object.keys(SUBSCRIBER_COLUMNS))} from "subscribers" where "environment_id" = ? and "subscriber_id" = ?`;

/** The subscriber `subscriberId` of the request's environment; 404 when there is none. */
export async function findSubscriber(store: Reader, tenant: Tenant, subscriberId: string): Promise<SubscriberRow> {
  const [row] = await read<SubscriberRow>(store, FIND_SUBSCRIBER, [tenant.environmentId, subscriberId], true);
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
  return (await upsertSubscriber(store, tenant, input, failIfExists)).row;
}

/** saveSubscriber, telling whether the subscriber was made. */
export async function upsertSubscriber(store: Store, tenant: Tenant, input: SubscriberInput, failIfExists: boolean): Promise<{ row: SubscriberRow; created: boolean }> {
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
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { row, created: true };
  if (failIfExists) {
    // The error body, with the existing subscriber's fields beside it (Novu's SDK reads a 409 as the Subscriber).
    const existing = await findSubscriber(store, tenant, input.subscriberId);
    throw conflict(`Subscriber '${input.subscriberId}' already exists`, subscriberView(existing));
  }
  const updated = await k
    .updateTable('subscribers')
    .set((eb) => ({ ...subscriberChanges(input), updated_at: now, version: eb('version', '+', 1) }))
    .where('environment_id', '=', tenant.environmentId)
    .where('subscriber_id', '=', input.subscriberId)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw notFound('Subscriber', input.subscriberId);
  return { row: updated, created: false };
}

/** Changes the given fields of an existing subscriber (a field left out keeps its value, null clears it); 404 when there is none. */
export async function patchSubscriber(store: Store, tenant: Tenant, subscriberId: string, input: Omit<SubscriberInput, 'subscriberId'>): Promise<SubscriberRow> {
  const updated = await store.kysely
    .updateTable('subscribers')
    .set((eb) => ({ ...subscriberChanges({ subscriberId, ...input }), updated_at: nowIso(), version: eb('version', '+', 1) }))
    .where('environment_id', '=', tenant.environmentId)
    .where('subscriber_id', '=', subscriberId)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw notFound('Subscriber', subscriberId);
  return updated;
}

/** Statuses of a job that has not finished: a removed subscriber's are canceled. */
const UNFINISHED_JOB_STATUSES = ['pending', 'queued', 'delayed', 'running'];

/**
 * Removes the subscriber with its messages, preferences and topic subscriptions, in one
 * transaction; its unfinished jobs are canceled (its notifications stay, as history). 404 when there is none.
 */
export async function removeSubscriber(store: Store, tenant: Tenant, subscriberId: string): Promise<void> {
  await inTransaction(store, async (trx) => {
    const k = trx.kysely;
    const row = await findSubscriber(trx, tenant, subscriberId);
    await k
      .updateTable('jobs')
      .set({ status: 'canceled', run_at: null, updated_at: nowIso() })
      .where('subscriber_id', '=', row.id)
      .where('status', 'in', UNFINISHED_JOB_STATUSES)
      .execute();
    await k.deleteFrom('messages').where('subscriber_id', '=', row.id).execute();
    await k.deleteFrom('preferences').where('subscriber_id', '=', row.id).execute();
    await k.deleteFrom('topic_subscriptions').where('subscriber_id', '=', row.id).execute();
    await k.deleteFrom('subscribers').where('id', '=', row.id).execute();
  });
  for (const listener of removalListeners) listener(tenant.environmentId, subscriberId);
}

/** The most subscribers one bulk create takes (as Novu). */
export const MAX_BULK_SUBSCRIBERS = 500;

/** Creates or updates each subscriber in order; which were created, updated, or failed (and why). */
export async function createSubscribers(store: Store, tenant: Tenant, inputs: SubscriberInput[]) {
  const created: { subscriberId: string }[] = [];
  const updated: { subscriberId: string }[] = [];
  const failed: { subscriberId: string; message: string }[] = [];
  for (const input of inputs) {
    try {
      const result = await upsertSubscriber(store, tenant, input, false);
      (result.created ? created : updated).push({ subscriberId: input.subscriberId });
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      failed.push({ subscriberId: input.subscriberId, message: err.message });
    }
  }
  return { created, updated, failed };
}

type RemovalListener = (environmentId: string, subscriberId: string) => void;
const removalListeners = new Set<RemovalListener>();

/** Calls `listener` after a subscriber is removed (what remembers subscribers' internal ids forgets it); returns the way to stop. */
export function onSubscriberRemoved(listener: RemovalListener): () => void {
  removalListeners.add(listener);
  return () => removalListeners.delete(listener);
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
