import { Type } from '@sinclair/typebox';
import type { UpdateQueryBuilder, UpdateResult } from 'kysely';
import type { App, AppContext } from '../app.ts';
import type { Database } from '../db/schema.ts';
import type { Store } from '../engine/types.ts';
import { fieldProblem, notFound } from '../errors.ts';
import { findSubscriber } from '../db/lookups.ts';
import { nowIso } from '../ids.ts';
import { parseJson, toJson } from '../json.ts';
import { Channel, JsonObject, StringEnum, SubscriberIdParam } from '../schemas.ts';
import { messageView, subscriberView, templateView, type MessageRow, type SubscriberRow, type SubscriberView, type TemplateView } from '../views.ts';

// Messages: mark-all (7), mark-as (extension), message action (1), delete by id (9) and by
// transaction (12). Every query is confined to the key's environment: a subscriber is looked up in
// it, and a message through that subscriber or by its environment.

export const MARK_AS = ['read', 'seen', 'unread', 'unseen'] as const;
export type MarkAs = (typeof MARK_AS)[number];

/**
 * The Message views of `rows`, with `subscriber` and `template` embedded. They are loaded once for
 * the whole page (one query each at most; none for the subscriber when the caller has it), not per message.
 */
export async function loadEmbeds<J = never>(store: Store, rows: MessageRow[], subscriber?: SubscriberRow, json?: Parameters<typeof messageView<J>>[3]) {
  const subscribers = new Map<string, SubscriberView>();
  if (subscriber) subscribers.set(subscriber.id, subscriberView(subscriber));
  const missing = [...new Set(rows.map((r) => r.subscriber_id).filter((id) => !subscribers.has(id)))];
  const templateIds = [...new Set(rows.map((r) => r.template_id).filter((id): id is string => !!id))];
  const [subscriberRows, templateRows] = await Promise.all([
    missing.length ? store.kysely.selectFrom('subscribers').selectAll().where('id', 'in', missing).execute() : [],
    templateIds.length ? store.kysely.selectFrom('workflows').selectAll().where('id', 'in', templateIds).execute() : [],
  ]);
  for (const s of subscriberRows) subscribers.set(s.id, subscriberView(s));
  const templates = new Map<string, TemplateView>(templateRows.map((t) => [t.id, templateView(t)]));
  return rows.map((r) => messageView<J>(r, subscribers.get(r.subscriber_id), r.template_id ? templates.get(r.template_id) : undefined, json));
}

type MessageUpdate = UpdateQueryBuilder<Database, 'messages', 'messages', UpdateResult>;

/**
 * Applies `markAs` to an update of messages, changing only the rows it really changes (so the
 * count of updated rows is the count of changed messages). decisions.md: `read` sets read and
 * seen; `unread` clears read; `seen` sets seen; `unseen` clears it; lastReadDate / lastSeenDate
 * are set when the flag becomes true. `read` also applies to a read message that was marked
 * unseen since, so that "mark all read" always leaves nothing unseen.
 */
export function applyMark(update: MessageUpdate, markAs: MarkAs, iso: string): MessageUpdate {
  switch (markAs) {
    case 'read':
      return update
        .set((eb) => ({
          read: 1,
          seen: 1,
          last_read_date: eb.case().when('read', '=', 0).then(iso).else(eb.ref('last_read_date')).end(),
          last_seen_date: eb.case().when('seen', '=', 0).then(iso).else(eb.ref('last_seen_date')).end(),
          updated_at: iso,
        }))
        .where((eb) => eb.or([eb('read', '=', 0), eb('seen', '=', 0)]));
    case 'unread':
      return update.set({ read: 0, updated_at: iso }).where('read', '=', 1);
    case 'seen':
      return update.set({ seen: 1, last_seen_date: iso, updated_at: iso }).where('seen', '=', 0);
    case 'unseen':
      return update.set({ seen: 0, updated_at: iso }).where('seen', '=', 1);
  }
}

/** Feed identifiers from a string (comma-separated allowed) or a list of them. */
export function feedIdentifiers(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const list = (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  return [...new Set(list)];
}

const FeedIdentifierInput = Type.Union([
  Type.String({ maxLength: 2000 }),
  Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 }),
]);

const MarkAllBody = Type.Object({
  markAs: StringEnum(MARK_AS),
  feedIdentifier: Type.Optional(FeedIdentifierInput),
});

const MarkAsBody = Type.Object({
  messageId: Type.Union([
    Type.String({ minLength: 1, maxLength: 64 }),
    Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 100 }),
  ]),
  markAs: StringEnum(MARK_AS),
});

const ACTION_TYPES = ['primary', 'secondary'] as const;
const ActionParams = Type.Object({
  subscriberId: Type.String({ minLength: 1, maxLength: 255 }),
  messageId: Type.String({ minLength: 1, maxLength: 64 }),
  type: StringEnum(ACTION_TYPES),
});
/**
 * The most a message action's `payload` may hold, in bytes of JSON (UTF-8). The result is stored
 * on the message and sent with it in every feed page and stream event; bounded only by the body
 * limit (1 MB), one subscriber could make each of its messages a megabyte, its feed page of 20 some
 * 20 MB (a third of a second of the process's time each, and the shared feed answer cache's room).
 * A button's result is a few fields.
 */
export const MAX_ACTION_PAYLOAD_BYTES = 4096;

const ActionBody = Type.Object({
  status: StringEnum(['pending', 'done'] as const),
  payload: Type.Optional(JsonObject),
});

export function messageRoutes(app: App, ctx: AppContext) {
  const db = ctx.db;
  const k = db.kysely;
  /** Tells the subscriber's open streams (routes/stream.ts) that the count may have changed. */
  const changed = (subscriberId: string) => db.changes.publish(k, { s: subscriberId });

  // 7. Mark all messages of a subscriber: 201 with the bare number of messages changed.
  app.post('/v1/subscribers/:subscriberId/messages/mark-all', { schema: { params: SubscriberIdParam, body: MarkAllBody } }, async (request, reply) => {
    const subscriber = await findSubscriber(db, request.tenant, request.params.subscriberId);
    const feeds = feedIdentifiers(request.body.feedIdentifier);
    let update = k.updateTable('messages').where('subscriber_id', '=', subscriber.id).where('channel', '=', 'in_app');
    if (feeds) {
      if (feeds.length === 0) return reply.code(201).send(0);
      update = update.where('feed_identifier', 'in', feeds);
    }
    const result = await applyMark(update, request.body.markAs, nowIso()).executeTakeFirst();
    if (Number(result.numUpdatedRows)) await changed(subscriber.id);
    return reply.code(201).send(Number(result.numUpdatedRows));
  });

  // Extension: mark one or several messages -> 201 Message[] (in the order asked; one deleted meanwhile is left out).
  app.post('/v1/subscribers/:subscriberId/messages/mark-as', { schema: { params: SubscriberIdParam, body: MarkAsBody } }, async (request, reply) => {
    const subscriber = await findSubscriber(db, request.tenant, request.params.subscriberId);
    const ids = [...new Set(Array.isArray(request.body.messageId) ? request.body.messageId : [request.body.messageId])];
    const found = await k.selectFrom('messages').select('id').where('subscriber_id', '=', subscriber.id).where('id', 'in', ids).execute();
    const known = new Set(found.map((r) => r.id));
    const unknown = ids.find((id) => !known.has(id));
    if (unknown !== undefined) throw notFound('Message', unknown);
    const update = k.updateTable('messages').where('subscriber_id', '=', subscriber.id).where('id', 'in', ids);
    await applyMark(update, request.body.markAs, nowIso()).execute();
    await changed(subscriber.id);
    const rows = await k.selectFrom('messages').selectAll().where('subscriber_id', '=', subscriber.id).where('id', 'in', ids).execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    // (A message deleted since the check, by a request that came in between, is gone: left out.)
    const views = await loadEmbeds(db, ids.flatMap((id) => byId.get(id) ?? []), subscriber);
    return reply.code(201).send(views);
  });

  // 1. Set message action status: 201 Message with cta.action.status and cta.action.result set.
  app.post(
    '/v1/subscribers/:subscriberId/messages/:messageId/actions/:type',
    { schema: { params: ActionParams, body: ActionBody } },
    async (request, reply) => {
      const { messageId, type } = request.params;
      const bytes = Buffer.byteLength(JSON.stringify(request.body.payload ?? {}));
      if (bytes > MAX_ACTION_PAYLOAD_BYTES) {
        const problem = `must be at most ${MAX_ACTION_PAYLOAD_BYTES} bytes of JSON (it is ${bytes})`;
        throw fieldProblem('payload', problem);
      }
      const subscriber = await findSubscriber(db, request.tenant, request.params.subscriberId);
      const row = await k
        .selectFrom('messages')
        .selectAll()
        .where('id', '=', messageId)
        .where('subscriber_id', '=', subscriber.id)
        .executeTakeFirst();
      if (!row) throw notFound('Message', messageId);
      const cta = parseJson<Record<string, unknown>>(row.cta, {});
      const action = (cta.action ?? { buttons: [] }) as Record<string, unknown>;
      cta.action = { ...action, status: request.body.status, result: { type, payload: request.body.payload ?? {} } };
      const updatedAt = nowIso();
      const updated = await k.updateTable('messages').set({ cta: toJson(cta), updated_at: updatedAt }).where('id', '=', row.id).executeTakeFirst();
      // (Deleted since it was read, by a request that came in between: nothing was stored.)
      if (!Number(updated.numUpdatedRows)) throw notFound('Message', messageId);
      await changed(subscriber.id);
      const [view] = await loadEmbeds(db, [{ ...row, cta: toJson(cta), updated_at: updatedAt }], subscriber);
      return reply.code(201).send(view);
    },
  );

  // 9. Delete a message.
  // Beyond the spec: `?subscriberId=` deletes the message only if it is that subscriber's (the
  // proxy adds it, since a message id alone names no subscriber).
  const DeleteQuery = Type.Object({ subscriberId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) });
  app.delete('/v1/messages/:messageId', { schema: { params: Type.Object({ messageId: Type.String({ minLength: 1, maxLength: 64 }) }), querystring: DeleteQuery } }, async (request) => {
    const owner = request.query.subscriberId;
    const subscriber = owner === undefined ? undefined : await findSubscriber(db, request.tenant, owner);
    let query = k
      .deleteFrom('messages')
      .where('id', '=', request.params.messageId)
      .where('environment_id', '=', request.tenant.environmentId);
    if (subscriber) query = query.where('subscriber_id', '=', subscriber.id);
    const result = await query.returning('subscriber_id').execute();
    if (result.length === 0) throw notFound('Message', request.params.messageId);
    await changed(result[0]!.subscriber_id);
    return { acknowledged: true, status: 'deleted' };
  });

  // 12. Delete the messages of a transaction, optionally of one channel: 204, or 404 when none matched.
  app.delete(
    '/v1/messages/transaction/:transactionId',
    {
      schema: {
        params: Type.Object({ transactionId: Type.String({ minLength: 1, maxLength: 255 }) }),
        querystring: Type.Object({ channel: Type.Optional(Channel) }),
      },
    },
    async (request, reply) => {
      let query = k
        .deleteFrom('messages')
        .where('environment_id', '=', request.tenant.environmentId)
        .where('transaction_id', '=', request.params.transactionId);
      if (request.query.channel) query = query.where('channel', '=', request.query.channel);
      const result = await query.returning('subscriber_id').execute();
      for (const s of new Set(result.map((r) => r.subscriber_id))) await changed(s);
      if (result.length === 0) {
        throw notFound(`Messages of transaction '${request.params.transactionId}'${request.query.channel ? ` in channel ${request.query.channel}` : ''}`);
      }
      return reply.code(204).send();
    },
  );
}
