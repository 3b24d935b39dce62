import type { Kysely, UpdateQueryBuilder, UpdateResult } from 'kysely';
import type { Db } from '../db/index.ts';
import type { Tenant } from '../db/keys.ts';
import type { Database } from '../db/schema.ts';
import { fieldProblem, notFound } from '../errors.ts';
import { nowIso } from '../ids.ts';
import { parseJson, toJson } from '../json.ts';
import { withPayloads } from '../db/payloads.ts';
import { amongIds, read } from '../db/read.ts';
import type { MessageRow } from '../db/rows.ts';
import { loadEmbeds } from './embeds.ts';
import { findSubscriber } from './subscribers.ts';
import { EVERY_COLUMN } from './views.ts';

// A subscriber's messages: mark all (endpoint 7), mark some (extension), a CTA's action (1), delete
// by id (9) and by transaction (12). Every query is confined to the key's environment: a subscriber
// is looked up in it, and a message through that subscriber or by its environment. Each change that
// can change a count or a feed tells the subscriber's open streams (db/changes.ts).

export const MARK_AS = ['read', 'seen', 'unread', 'unseen'] as const;
export type MarkAs = (typeof MARK_AS)[number];

export const ACTION_TYPES = ['primary', 'secondary'] as const;
export const ACTION_STATUSES = ['pending', 'done'] as const;

/**
 * The most a message action's `payload` may hold, in bytes of JSON (UTF-8). The result is stored
 * on the message and sent with it in every feed page and stream event; bounded only by the body
 * limit (1 MB), one subscriber could make each of its messages a megabyte, its feed page of 20 some
 * 20 MB (a third of a second of the process's time each).
 * A button's result is a few fields.
 */
export const MAX_ACTION_PAYLOAD_BYTES = 4096;

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

/** Feed identifiers from a string (comma-separated allowed) or a list of them, each once; undefined when none was given. */
export function feedIdentifiers(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const list = (Array.isArray(value) ? value : [value]).flatMap((item) => item.split(',')).map((item) => item.trim()).filter(Boolean);
  return [...new Set(list)];
}

/**
 * Runs `write` in a transaction and tells the open streams of the subscribers it names (internal
 * ids) that their inbox changed, inside it: on PostgreSQL the notification then leaves at the
 * commit, or never, so a process killed between the write and the notification cannot leave
 * another process's stream telling a count that is no longer true.
 */
async function writeAndTell<T>(db: Db, write: (kysely: Kysely<Database>) => Promise<{ result: T; changed: string[] }>): Promise<T> {
  return db.kysely.transaction().execute(async (trx) => {
    const { result, changed } = await write(trx);
    if (changed.length > 0) await db.changes.publish(trx, changed.map((subscriberId) => ({ subscriberId })));
    return result;
  });
}

/**
 * Runs the update `build` makes of one subscriber's messages and, when it changed any, tells the
 * subscriber's streams; how many it changed. PostgreSQL: the update and its NOTIFY in one
 * statement (ChangeBus.writeAndPublish), no transaction of their own; SQLite: in a transaction
 * (writeAndTell).
 */
async function updateAndTell(db: Db, subscriberId: string, build: (kysely: Kysely<Database>) => MessageUpdate): Promise<number> {
  if (db.dialect === 'postgres') {
    const inOneStatement = db.changes.writeAndPublish(db.kysely, build(db.kysely).returning('messages.id'), [{ subscriberId }]);
    if (inOneStatement) return inOneStatement;
  }
  return writeAndTell(db, async (kysely) => {
    const result = await build(kysely).executeTakeFirst();
    const count = Number(result.numUpdatedRows);
    return { result: count, changed: count > 0 ? [subscriberId] : [] };
  });
}

/** The subscriber's messages among `ids`, their `columns` (a select list; one text for any number of ids on PostgreSQL: db/read.ts amongIds). */
function messagesAmong<R>(db: Db, subscriberId: string, ids: string[], columns: string): Promise<R[]> {
  const among = amongIds(db.dialect, 'id', ids);
  return read<R>(db, `select ${columns} from "messages" where "subscriber_id" = ? and ${among.condition}`, [subscriberId, ...among.params], among.fixed);
}

/** Marks every in-app message of the subscriber (of the given feeds only, when given); how many changed. */
export async function markAll(db: Db, tenant: Tenant, subscriberId: string, markAs: MarkAs, feedIdentifier?: string | string[]): Promise<number> {
  const subscriber = await findSubscriber(db, tenant, subscriberId);
  const feeds = feedIdentifiers(feedIdentifier);
  if (feeds && feeds.length === 0) return 0;
  const iso = nowIso();
  return updateAndTell(db, subscriber.id, (kysely) => {
    let update = kysely.updateTable('messages').where('subscriber_id', '=', subscriber.id).where('channel', '=', 'in_app');
    if (feeds) update = update.where('feed_identifier', 'in', feeds);
    return applyMark(update, markAs, iso);
  });
}

/**
 * Marks some of the subscriber's messages (404 naming the first that is not one of them); their
 * views, in the order asked (one deleted meanwhile is left out).
 */
export async function markMessages(db: Db, tenant: Tenant, subscriberId: string, messageIds: string[], markAs: MarkAs) {
  const subscriber = await findSubscriber(db, tenant, subscriberId);
  const ids = [...new Set(messageIds)];
  const found = await messagesAmong<{ id: string }>(db, subscriber.id, ids, '"id"');
  const known = new Set(found.map((row) => row.id));
  const unknown = ids.find((id) => !known.has(id));
  if (unknown !== undefined) throw notFound('Message', unknown);
  const iso = nowIso();
  await updateAndTell(db, subscriber.id, (kysely) => applyMark(kysely.updateTable('messages').where('subscriber_id', '=', subscriber.id).where('id', 'in', ids), markAs, iso));
  const rows = await withPayloads(db, await messagesAmong<MessageRow>(db, subscriber.id, ids, EVERY_COLUMN));
  const byId = new Map(rows.map((row) => [row.id, row]));
  // (A message deleted since the check, by a request that came in between, is gone: left out.)
  return loadEmbeds(db, ids.flatMap((id) => byId.get(id) ?? []), subscriber);
}

/** A CTA button's action on a message. */
export interface MessageAction {
  type: (typeof ACTION_TYPES)[number];
  status: (typeof ACTION_STATUSES)[number];
  payload?: Record<string, unknown>;
}

/** Records the action's status and result on the message (cta.action); the message's view after. */
export async function setActionStatus(db: Db, tenant: Tenant, subscriberId: string, messageId: string, action: MessageAction) {
  const payload = action.payload ?? {};
  const bytes = Buffer.byteLength(JSON.stringify(payload));
  if (bytes > MAX_ACTION_PAYLOAD_BYTES) {
    throw fieldProblem('payload', `must be at most ${MAX_ACTION_PAYLOAD_BYTES} bytes of JSON (it is ${bytes})`);
  }
  const subscriber = await findSubscriber(db, tenant, subscriberId);
  const [row] = await read<MessageRow>(db, `select ${EVERY_COLUMN} from "messages" where "id" = ? and "subscriber_id" = ?`, [messageId, subscriber.id], true);
  if (!row) throw notFound('Message', messageId);
  await withPayloads(db, [row]);
  const cta = parseJson<Record<string, unknown>>(row.cta, {});
  const current = (cta.action ?? { buttons: [] }) as Record<string, unknown>;
  cta.action = { ...current, status: action.status, result: { type: action.type, payload } };
  const updatedAt = nowIso();
  const stored = (await updateAndTell(db, subscriber.id, (kysely) => kysely.updateTable('messages').set({ cta: toJson(cta), updated_at: updatedAt }).where('id', '=', row.id))) > 0;
  // (Deleted since it was read, by a request that came in between: nothing was stored.)
  if (!stored) throw notFound('Message', messageId);
  const [view] = await loadEmbeds(db, [{ ...row, cta: toJson(cta), updated_at: updatedAt }], subscriber);
  return view;
}

/** Deletes a message of the environment; with `owner`, only if it is that subscriber's. 404 when there is none. */
export async function deleteMessage(db: Db, tenant: Tenant, messageId: string, owner?: string): Promise<void> {
  const subscriber = owner === undefined ? undefined : await findSubscriber(db, tenant, owner);
  const deleted = await writeAndTell(db, async (kysely) => {
    let query = kysely.deleteFrom('messages').where('id', '=', messageId).where('environment_id', '=', tenant.environmentId);
    if (subscriber) query = query.where('subscriber_id', '=', subscriber.id);
    const result = await query.returning('subscriber_id').execute();
    return { result: result.length, changed: result.map((row) => row.subscriber_id) };
  });
  if (deleted === 0) throw notFound('Message', messageId);
}

/** Deletes the messages of a transaction, of one channel when given; 404 when none matched. */
export async function deleteTransactionMessages(db: Db, tenant: Tenant, transactionId: string, channel?: string): Promise<void> {
  const deleted = await writeAndTell(db, async (kysely) => {
    let query = kysely.deleteFrom('messages').where('environment_id', '=', tenant.environmentId).where('transaction_id', '=', transactionId);
    if (channel) query = query.where('channel', '=', channel);
    const result = await query.returning('subscriber_id').execute();
    return { result: result.length, changed: [...new Set(result.map((row) => row.subscriber_id))] };
  });
  if (deleted === 0) {
    throw notFound(`Messages of transaction '${transactionId}'${channel ? ` in channel ${channel}` : ''}`);
  }
}
