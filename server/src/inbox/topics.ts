import type { Kysely } from 'kysely';
import type { Tenant } from '../db/keys.ts';
import type { SubscriberRow, TopicRow, TopicSubscriptionRow } from '../db/rows.ts';
import { inTransaction, type Store } from '../db/store.ts';
import { badRequest, conflict, HttpError, notFound } from '../errors.ts';
import { newId, nowIso } from '../ids.ts';
import { optional, parseJson, toJson } from '../json.ts';

// Topics, with Novu's paths and shapes (`/v2/topics`): a key naming a group of subscribers that a
// trigger may address (`to: {type: 'Topic', topicKey}`), and the subscriptions that make the group.
// A topic and its subscriptions belong to one environment; a subscriber appears in a topic once.
// Lists page by `_id` cursors: `after=c` starts right after c, `before=c` ends right before it;
// `next` / `previous` are the page's last / first `_id` when more follow / precede it, else null.

/** A topic's key: letters, digits and `_ : - . @ +` (so an email address is a key too). */
export const TOPIC_KEY_PATTERN = '^[A-Za-z0-9_:.@+-]+$';

/** Lists count at most this many matches, then say so with `totalCountCapped`. */
const TOTAL_COUNT_CAP = 50_000;

/** The most subscribers one subscribe or unsubscribe request names. */
export const MAX_SUBSCRIPTIONS_PER_REQUEST = 100;

export interface TopicInput {
  key: string;
  name?: string;
  data?: Record<string, unknown>;
}

export interface CursorQuery {
  after?: string;
  before?: string;
  includeCursor?: boolean;
  limit: number;
  orderDirection?: 'ASC' | 'DESC';
}

/** One subscriber named by a subscribe or unsubscribe request: its subscriberId, and the subscription's identifier. */
export interface SubscriptionTarget {
  subscriberId: string;
  identifier?: string;
}

export function topicView(row: TopicRow) {
  return {
    _id: row.id,
    key: row.key,
    name: optional(row.name),
    data: parseJson<Record<string, unknown> | undefined>(row.data, undefined),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function subscriptionView(row: TopicSubscriptionRow, topic: TopicRow, subscriber: SubscriberRow) {
  return {
    _id: row.id,
    identifier: row.identifier,
    topic: topicView(topic),
    subscriber: {
      _id: subscriber.id,
      subscriberId: subscriber.subscriber_id,
      firstName: optional(subscriber.first_name),
      lastName: optional(subscriber.last_name),
      email: optional(subscriber.email),
      avatar: optional(subscriber.avatar),
    },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A subscription's identifier when the request gives none: stable for the (topic, subscriber) pair. */
const defaultIdentifier = (topicKey: string, subscriberId: string) => `${topicKey}:${subscriberId}`;

async function findTopicRow(store: Store, environmentId: string, key: string): Promise<TopicRow | undefined> {
  return store.kysely.selectFrom('topics').selectAll().where('environment_id', '=', environmentId).where('key', '=', key).executeTakeFirst();
}

/** The topic `key` of the key's environment; 404 when there is none. */
export async function findTopic(store: Store, tenant: Tenant, key: string): Promise<TopicRow> {
  const row = await findTopicRow(store, tenant.environmentId, key);
  if (!row) throw notFound('Topic', key);
  return row;
}

/**
 * Creates the topic, or updates the one with that key with the name and data given (`failIfExists`:
 * a 409 instead, carrying the existing topic beside the error body, as Novu's SDK reads it).
 */
export async function upsertTopic(store: Store, tenant: Tenant, input: TopicInput, failIfExists: boolean): Promise<{ row: TopicRow; created: boolean }> {
  const now = nowIso();
  const row: TopicRow = {
    id: newId(Date.parse(now)),
    environment_id: tenant.environmentId,
    organization_id: tenant.organizationId,
    key: input.key,
    name: input.name ?? null,
    data: input.data === undefined ? null : toJson(input.data),
    created_at: now,
    updated_at: now,
  };
  const inserted = await store.kysely
    .insertInto('topics')
    .values(row)
    .onConflict((oc) => oc.columns(['environment_id', 'key']).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { row, created: true };
  if (failIfExists) {
    const existing = await findTopic(store, tenant, input.key);
    throw conflict(`Topic '${input.key}' already exists`, topicView(existing));
  }
  return { row: await updateTopic(store, tenant, input.key, input), created: false };
}

/** Changes the name and data given (a field left out keeps its value); 404 when there is no such topic. */
export async function updateTopic(store: Store, tenant: Tenant, key: string, input: Omit<TopicInput, 'key'>): Promise<TopicRow> {
  const changes: Partial<TopicRow> = { updated_at: nowIso() };
  if (input.name !== undefined) changes.name = input.name;
  if (input.data !== undefined) changes.data = toJson(input.data);
  const updated = await store.kysely
    .updateTable('topics')
    .set(changes)
    .where('environment_id', '=', tenant.environmentId)
    .where('key', '=', key)
    .returningAll()
    .executeTakeFirst();
  if (!updated) throw notFound('Topic', key);
  return updated;
}

/** Deletes the topic and its subscriptions; 404 when there is no such topic. */
export async function deleteTopic(store: Store, tenant: Tenant, key: string): Promise<void> {
  await inTransaction(store, async (trx) => {
    const topic = await findTopic(trx, tenant, key);
    await trx.kysely.deleteFrom('topic_subscriptions').where('topic_id', '=', topic.id).execute();
    await trx.kysely.deleteFrom('topics').where('id', '=', topic.id).execute();
  });
}

/**
 * A page of rows of `table` matching `filter`, in `_id` order (ASC or DESC), from a cursor; with
 * the page's cursors and the (capped) count of matches. A cursor that is not a matching row is a 400.
 */
async function cursorPage<T extends 'topics' | 'topic_subscriptions'>(
  store: Store,
  table: T,
  filter: (query: any) => any,
  q: CursorQuery,
): Promise<{ rows: (T extends 'topics' ? TopicRow : TopicSubscriptionRow)[]; next: string | null; previous: string | null; totalCount: number; totalCountCapped: boolean }> {
  if (q.after !== undefined && q.before !== undefined) throw badRequest('Give either `after` or `before`, not both');
  // (Untyped: one function pages both tables; the rows are typed by `table` in the signature.)
  const k = store.kysely as unknown as Kysely<any>;
  const from = (): any => k.selectFrom(table as string);
  const ascending = q.orderDirection === 'ASC';
  const forward = ascending ? '>' : '<';
  const backward = ascending ? '<' : '>';
  const inclusive = (op: '<' | '>') => (q.includeCursor ? (`${op}=` as const) : op);
  const cursor = q.after ?? q.before;
  if (cursor !== undefined && !(await filter(from().select('id')).where('id', '=', cursor).executeTakeFirst())) {
    throw badRequest(`Cursor '${cursor}' is not in this list`);
  }
  const exists = async (op: '<' | '>', id: string) => !!(await filter(from().select('id')).where('id', op, id).limit(1).executeTakeFirst());
  let rows: any[];
  let next: string | null = null;
  let previous: string | null = null;
  if (q.before !== undefined) {
    const found = await filter(from().selectAll())
      .where('id', inclusive(backward), q.before)
      .orderBy('id', ascending ? 'desc' : 'asc')
      .limit(q.limit + 1)
      .execute();
    rows = found.slice(0, q.limit).reverse();
    if (rows.length > 0) {
      if (found.length > q.limit) previous = rows[0].id;
      if (await exists(forward, rows.at(-1).id)) next = rows.at(-1).id;
    }
  } else {
    let query = filter(from().selectAll());
    if (q.after !== undefined) query = query.where('id', inclusive(forward), q.after);
    const found = await query.orderBy('id', ascending ? 'asc' : 'desc').limit(q.limit + 1).execute();
    rows = found.slice(0, q.limit);
    if (rows.length > 0) {
      if (found.length > q.limit) next = rows.at(-1).id;
      if (q.after !== undefined && (await exists(backward, rows[0].id))) previous = rows[0].id;
    }
  }
  const counted = await k
    .selectFrom(filter(from().select('id')).limit(TOTAL_COUNT_CAP + 1).as('m'))
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  const n = Number(counted.n);
  return { rows, next, previous, totalCount: Math.min(n, TOTAL_COUNT_CAP), totalCountCapped: n > TOTAL_COUNT_CAP };
}

/** `LIKE` pattern for a substring, with the wildcards of the input escaped. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The environment's topics: `key` exact, `name` a substring (case as given), in `_id` cursor pages. */
export async function listTopics(store: Store, tenant: Tenant, q: CursorQuery & { key?: string; name?: string }) {
  const filter = (query: any) => {
    let filtered = query.where('environment_id', '=', tenant.environmentId);
    if (q.key !== undefined) filtered = filtered.where('key', '=', q.key);
    if (q.name) filtered = filtered.where('name', 'like', containing(q.name));
    return filtered;
  };
  const { rows, ...rest } = await cursorPage(store, 'topics', filter, q);
  return { data: rows.map(topicView), ...rest };
}

/** The subscriptions of the topic (404 when there is none), in `_id` cursor pages; `subscriberId` limits them to one subscriber. */
export async function listSubscriptions(store: Store, tenant: Tenant, key: string, q: CursorQuery & { subscriberId?: string }) {
  const topic = await findTopic(store, tenant, key);
  let onlyRowId: string | undefined;
  if (q.subscriberId !== undefined) {
    const subscriber = await subscriberRows(store, tenant, [q.subscriberId]);
    onlyRowId = subscriber.get(q.subscriberId)?.id ?? '';
  }
  const filter = (query: any) => {
    const filtered = query.where('topic_id', '=', topic.id);
    return onlyRowId === undefined ? filtered : filtered.where('subscriber_id', '=', onlyRowId);
  };
  const { rows, ...rest } = await cursorPage(store, 'topic_subscriptions', filter, q);
  const subscribers = await subscribersById(store, rows.map((row) => row.subscriber_id));
  return { data: rows.map((row) => subscriptionView(row, topic, subscribers.get(row.subscriber_id)!)), ...rest };
}

async function subscriberRows(store: Store, tenant: Tenant, subscriberIds: string[]): Promise<Map<string, SubscriberRow>> {
  if (subscriberIds.length === 0) return new Map();
  const rows = await store.kysely
    .selectFrom('subscribers')
    .selectAll()
    .where('environment_id', '=', tenant.environmentId)
    .where('subscriber_id', 'in', subscriberIds)
    .execute();
  return new Map(rows.map((row) => [row.subscriber_id, row]));
}

async function subscribersById(store: Store, ids: string[]): Promise<Map<string, SubscriberRow>> {
  if (ids.length === 0) return new Map();
  const rows = await store.kysely.selectFrom('subscribers').selectAll().where('id', 'in', [...new Set(ids)]).execute();
  return new Map(rows.map((row) => [row.id, row]));
}

/** What a subscribe or unsubscribe request did: each subscription, counts, and why a subscriber failed. */
interface SubscriptionsOutcome {
  data: ReturnType<typeof subscriptionView>[];
  meta: { totalCount: number; successful: number; failed: number };
  errors?: { subscriberId: string; code: string; message: string }[];
}

/** The outcome as the answer: a 400 carrying it when every subscriber failed. */
function settled(outcome: SubscriptionsOutcome, verb: string): SubscriptionsOutcome {
  if (outcome.meta.totalCount > 0 && outcome.meta.successful === 0) {
    throw new HttpError(400, `No subscriber could be ${verb}: ${outcome.errors?.map((e) => e.message).join('; ')}`, undefined, undefined, { ...outcome });
  }
  return outcome;
}

function unknownSubscriber(subscriberId: string) {
  return { subscriberId, code: 'SUBSCRIBER_NOT_FOUND', message: `Subscriber '${subscriberId}' not found` };
}

/**
 * Subscribes the subscribers to the topic, which is created when missing. Idempotent: a subscriber
 * already subscribed keeps its subscription (returned as it is). An unknown subscriber is listed in
 * `errors`; when every one is, the answer is a 400 with the same body.
 */
export async function subscribe(store: Store, tenant: Tenant, key: string, targets: SubscriptionTarget[]): Promise<SubscriptionsOutcome> {
  const topic = (await upsertTopic(store, tenant, { key }, false)).row;
  const unique = [...new Map(targets.map((target) => [target.subscriberId, target])).values()];
  const subscribers = await subscriberRows(store, tenant, unique.map((target) => target.subscriberId));
  const errors = unique.filter((target) => !subscribers.has(target.subscriberId)).map((target) => unknownSubscriber(target.subscriberId));
  const found = unique.filter((target) => subscribers.has(target.subscriberId));
  const now = nowIso();
  if (found.length > 0) {
    await store.kysely
      .insertInto('topic_subscriptions')
      .values(
        found.map((target) => ({
          id: newId(Date.parse(now)),
          environment_id: tenant.environmentId,
          topic_id: topic.id,
          subscriber_id: subscribers.get(target.subscriberId)!.id,
          identifier: target.identifier ?? defaultIdentifier(key, target.subscriberId),
          created_at: now,
          updated_at: now,
        })),
      )
      .onConflict((oc) => oc.columns(['topic_id', 'subscriber_id']).doNothing())
      .execute();
  }
  const rows = await subscriptionRows(store, topic.id, found.map((target) => subscribers.get(target.subscriberId)!.id));
  const byRowId = new Map([...subscribers.values()].map((row) => [row.id, row]));
  return settled(
    {
      data: rows.map((row) => subscriptionView(row, topic, byRowId.get(row.subscriber_id)!)),
      meta: { totalCount: targets.length, successful: rows.length, failed: errors.length },
      ...(errors.length > 0 ? { errors } : {}),
    },
    'subscribed',
  );
}

/** Unsubscribes the subscribers from the topic (404 when there is none); the subscriptions removed. */
export async function unsubscribe(store: Store, tenant: Tenant, key: string, targets: SubscriptionTarget[]): Promise<SubscriptionsOutcome> {
  const topic = await findTopic(store, tenant, key);
  const unique = [...new Set(targets.map((target) => target.subscriberId))];
  const subscribers = await subscriberRows(store, tenant, unique);
  const rowIds = [...subscribers.values()].map((row) => row.id);
  const rows = await subscriptionRows(store, topic.id, rowIds);
  if (rows.length > 0) await store.kysely.deleteFrom('topic_subscriptions').where('id', 'in', rows.map((row) => row.id)).execute();
  const subscribed = new Set(rows.map((row) => row.subscriber_id));
  const errors = unique
    .filter((subscriberId) => !subscribed.has(subscribers.get(subscriberId)?.id ?? ''))
    .map((subscriberId) =>
      subscribers.has(subscriberId)
        ? { subscriberId, code: 'SUBSCRIPTION_NOT_FOUND', message: `Subscriber '${subscriberId}' is not subscribed to topic '${key}'` }
        : unknownSubscriber(subscriberId),
    );
  const byRowId = new Map([...subscribers.values()].map((row) => [row.id, row]));
  return settled(
    {
      data: rows.map((row) => subscriptionView(row, topic, byRowId.get(row.subscriber_id)!)),
      meta: { totalCount: targets.length, successful: rows.length, failed: errors.length },
      ...(errors.length > 0 ? { errors } : {}),
    },
    'unsubscribed',
  );
}

async function subscriptionRows(store: Store, topicId: string, subscriberRowIds: string[]): Promise<TopicSubscriptionRow[]> {
  if (subscriberRowIds.length === 0) return [];
  return store.kysely
    .selectFrom('topic_subscriptions')
    .selectAll()
    .where('topic_id', '=', topicId)
    .where('subscriber_id', 'in', subscriberRowIds)
    .orderBy('id')
    .execute();
}
