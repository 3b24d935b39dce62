import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../db/index.ts';
import type { Tenant } from '../db/keys.ts';
import { read } from '../db/read.ts';
import type { MessageRow, SubscriberRow } from '../db/rows.ts';
import { inTransaction, type Store } from '../db/store.ts';
import type { ChangeKind } from '../db/changes.ts';
import { engineSettings } from '../engine/settings.ts';
import { scheduled } from '../engine/waits.ts';
import { badRequest, notFound, unprocessable } from '../errors.ts';
import { nowIso } from '../ids.ts';
import { parseJson, toJson } from '../json.ts';
import { filterConditions, parseCountFilter, parseDataFilter, type Condition, type FamilyFilter } from './family-filter.ts';
import { familyItemView, familyWorkflowView, type FamilyItem } from './family-views.ts';
import { applyMark } from './messages.ts';
import { findSubscriber } from './subscribers.ts';

// The subscriber notifications family (/v2/subscribers/{subscriberId}/notifications/...), as Novu's
// published SDK defines it: the list with filters and a cursor, counts of up to 30 filters, the
// changes of one message (read, unread, archive, unarchive, snooze, unsnooze, an action completed
// or reverted, delete) and the bulk changes by filter. Every query is confined to the subscriber,
// looked up in the key's environment: a message of another subscriber or environment is not found.
// Every change tells the subscriber's open streams what it was (db/changes.ts), so other browser
// tabs update their counts.

/** The most filters one count request may carry, as Novu's validation allows. */
export const MAX_COUNT_FILTERS = 30;

export const ACTION_KINDS = ['primary', 'secondary'] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

/** The list's query, as its schema validated it. */
export interface ListQuery extends FamilyFilter {
  limit: number;
  after?: string;
  offset?: number;
}

/** The conditions and the parameters of a subscriber's in-app messages matching `conditions`. */
function whereOf(subscriberId: string, conditions: Condition[]): { text: string; params: unknown[] } {
  const all: Condition[] = [{ text: `"subscriber_id" = ?`, params: [subscriberId] }, { text: `"channel" = 'in_app'`, params: [] }, ...conditions];
  return { text: all.map((condition) => condition.text).join(' and '), params: all.flatMap((condition) => condition.params) };
}

/** The family items of `rows` (one subscriber's), their workflows read once. */
async function itemsOf(store: Store, rows: MessageRow[], subscriber: SubscriberRow): Promise<FamilyItem[]> {
  const workflowIds = [...new Set(rows.map((row) => row.template_id).filter((id): id is string => !!id))];
  const workflows = workflowIds.length ? await store.kysely.selectFrom('workflows').selectAll().where('id', 'in', workflowIds).execute() : [];
  const views = new Map(workflows.map((row) => [row.id, familyWorkflowView(row)]));
  return rows.map((row) => familyItemView(row, subscriber, row.template_id ? views.get(row.template_id) : undefined));
}

/** The filter as an answer echoes it: the keys given, `data` parsed. */
function echo(filter: FamilyFilter): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(filter)) if (value !== undefined) shown[key] = value;
  return shown;
}

/** GET .../notifications: newest first; `after` (a message id) or `offset` pages; `hasMore` from one row more. */
export async function listNotifications(db: Db, tenant: Tenant, subscriberId: string, query: ListQuery) {
  const subscriber = await findSubscriber(db, tenant, subscriberId);
  const { limit, after, offset, ...filter } = query;
  const conditions = filterConditions(db, filter, 'list');
  if (after !== undefined) {
    const [cursor] = await read<{ created_at: string; id: string }>(
      db,
      `select "created_at", "id" from "messages" where "id" = ? and "subscriber_id" = ? and "channel" = 'in_app'`,
      [after, subscriber.id],
    );
    if (!cursor) throw badRequest(`after must be the id of one of the subscriber's notifications ('${after}' is not)`);
    conditions.push({ text: `("created_at" < ? or ("created_at" = ? and "id" < ?))`, params: [cursor.created_at, cursor.created_at, cursor.id] });
  }
  const where = whereOf(subscriber.id, conditions);
  const skip = after === undefined ? (offset ?? 0) : 0;
  const rows = await read<MessageRow>(db, `select * from "messages" where ${where.text} order by "created_at" desc, "id" desc limit ? offset ?`, [
    ...where.params,
    limit + 1,
    skip,
  ]);
  const page = rows.slice(0, limit);
  return { data: await itemsOf(db, page, subscriber), hasMore: rows.length > limit, filter: echo(filter) };
}

/** The `filters` parameter of count: a JSON array of at most MAX_COUNT_FILTERS filter objects. */
export function parseCountFilters(text: string): FamilyFilter[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest('Invalid filters, the JSON object should be provided.');
  }
  if (!Array.isArray(parsed)) throw unprocessable('filters must be a JSON array of filters', { filters: { messages: ['must be a JSON array of filters'], value: null } });
  if (parsed.length > MAX_COUNT_FILTERS) {
    throw unprocessable(`filters must hold at most ${MAX_COUNT_FILTERS} filters`, { filters: { messages: [`must hold at most ${MAX_COUNT_FILTERS} filters`], value: null } });
  }
  return parsed.map((filter, index) => parseCountFilter(filter, index));
}

/**
 * GET .../notifications/count: the exact number of messages each filter matches, in the order
 * given. One statement counts them all, so every count of an answer comes from the same state of
 * the inbox; what every filter shares (the visible set, unread...) is its WHERE, so only those rows
 * are read, through the partial indexes.
 */
export async function countNotifications(db: Db, tenant: Tenant, subscriberId: string, filters: FamilyFilter[]) {
  const subscriber = await findSubscriber(db, tenant, subscriberId);
  if (filters.length === 0) return [];
  const keyOf = (condition: Condition) => JSON.stringify([condition.text, condition.params]);
  const perFilter = filters.map((filter) => filterConditions(db, filter, 'list'));
  const shared = perFilter[0]!.filter((condition) => perFilter.every((conditions) => conditions.some((other) => keyOf(other) === keyOf(condition))));
  const sharedKeys = new Set(shared.map(keyOf));
  const columns: string[] = [];
  const columnParams: unknown[] = [];
  perFilter.forEach((conditions, index) => {
    const own = conditions.filter((condition) => !sharedKeys.has(keyOf(condition)));
    if (own.length === 0) {
      columns.push(`count(*) as "c${index}"`);
      return;
    }
    columns.push(`count(*) filter (where ${own.map((condition) => condition.text).join(' and ')}) as "c${index}"`);
    columnParams.push(...own.flatMap((condition) => condition.params));
  });
  const where = whereOf(subscriber.id, shared);
  const [row] = await read<Record<string, number | string>>(db, `select ${columns.join(', ')} from "messages" where ${where.text}`, [...columnParams, ...where.params]);
  return filters.map((filter, index) => ({ count: Number(row?.[`c${index}`] ?? 0), filter: echo(filter) }));
}

/** One message of the subscriber, or 404. */
async function messageOf(store: Store, subscriber: SubscriberRow, messageId: string): Promise<MessageRow> {
  const row = await store.kysely
    .selectFrom('messages')
    .selectAll()
    .where('id', '=', messageId)
    .where('subscriber_id', '=', subscriber.id)
    .where('channel', '=', 'in_app')
    .executeTakeFirst();
  if (!row) throw notFound('Notification', messageId);
  return row;
}

/** Tells the subscriber's streams what changed (at the commit, on PostgreSQL). */
function told(store: Store, subscriber: SubscriberRow, what: ChangeKind, messageId?: string) {
  return store.changes?.publish(store.kysely, { subscriberId: subscriber.id, what, target: messageId });
}

/** The change of one message a PATCH of the family makes. */
export type MessageChange =
  | { kind: 'read' | 'unread' | 'archive' | 'unarchive' | 'unsnooze' }
  | { kind: 'snooze'; snoozeUntil: string }
  | { kind: 'complete' | 'revert'; action: ActionKind };

/** When a snooze given as `snoozeUntil` ends, as ISO; 422 when it is not a date at least the minimum ahead. */
export function snoozeEnd(snoozeUntil: string, now = Date.now()): string {
  const time = Date.parse(snoozeUntil);
  const minimumMs = engineSettings().snoozeMinMs;
  const seconds = Math.round(minimumMs / 1000);
  const problem = (message: string) => unprocessable(`snoozeUntil ${message}`, { snoozeUntil: { messages: [message], value: snoozeUntil } });
  if (!Number.isFinite(time)) throw problem('must be a date (ISO 8601)');
  if (time < now + minimumMs) throw problem(`Snooze time must be at least ${seconds} ${seconds === 1 ? 'second' : 'seconds'} in the future`);
  return new Date(time).toISOString();
}

/** PATCH .../notifications/{id}/...: changes one message of the subscriber; its item after. */
export async function changeNotification(db: Db, tenant: Tenant, subscriberId: string, messageId: string, change: MessageChange): Promise<FamilyItem> {
  const subscriber = await findSubscriber(db, tenant, subscriberId);
  const snoozeUntil = change.kind === 'snooze' ? snoozeEnd(change.snoozeUntil) : undefined;
  const row = await inTransaction(db, async (trx) => {
    const current = await messageOf(trx, subscriber, messageId);
    const iso = nowIso();
    const k = trx.kysely;
    const mine = k.updateTable('messages').where('id', '=', current.id);
    switch (change.kind) {
      case 'read':
      case 'unread':
        await applyMark(mine, change.kind, iso).execute();
        break;
      case 'archive':
        await mine.set({ archived: 1, archived_at: current.archived ? current.archived_at : iso, snoozed_until: null, updated_at: iso }).execute();
        await k.deleteFrom('message_wakes').where('message_id', '=', current.id).execute();
        break;
      case 'unarchive':
        await mine.set({ archived: 0, archived_at: null, updated_at: iso }).where('archived', '=', 1).execute();
        break;
      case 'snooze': {
        // Novu's snooze: the message counts as seen, and leaves the archive.
        await mine
          .set({ snoozed_until: snoozeUntil!, seen: 1, last_seen_date: current.seen ? current.last_seen_date : iso, archived: 0, archived_at: null, updated_at: iso })
          .execute();
        const runAt = Date.parse(snoozeUntil!);
        await k
          .insertInto('message_wakes')
          .values({ message_id: current.id, subscriber_id: subscriber.id, environment_id: tenant.environmentId, run_at: runAt, locked_by: null, locked_until: null, created_at: iso })
          .onConflict((oc) => oc.column('message_id').doUpdateSet({ run_at: runAt, locked_by: null, locked_until: null }))
          .execute();
        break;
      }
      case 'unsnooze':
        await mine.set({ snoozed_until: null, updated_at: iso }).where('snoozed_until', 'is not', null).execute();
        await k.deleteFrom('message_wakes').where('message_id', '=', current.id).execute();
        break;
      case 'complete':
      case 'revert': {
        const cta = parseJson<Record<string, unknown>>(current.cta, {});
        const action = (cta.action ?? { buttons: [] }) as Record<string, unknown>;
        cta.action = { ...action, status: change.kind === 'complete' ? 'done' : 'pending', result: { type: change.action, payload: {} } };
        await mine.set({ cta: toJson(cta), updated_at: iso }).execute();
        // Completing an action reads the message, as Novu does.
        if (change.kind === 'complete') await applyMark(k.updateTable('messages').where('id', '=', current.id), 'read', iso).execute();
        break;
      }
    }
    await told(trx, subscriber, change.kind, current.id);
    return messageOf(trx, subscriber, messageId);
  });
  if (snoozeUntil) scheduled(Date.parse(snoozeUntil));
  const [item] = await itemsOf(db, [row], subscriber);
  return item!;
}

/** DELETE .../notifications/{id}: the message and its wake-up, if snoozed. */
export async function deleteNotification(db: Db, tenant: Tenant, subscriberId: string, messageId: string): Promise<void> {
  const subscriber = await findSubscriber(db, tenant, subscriberId);
  await inTransaction(db, async (trx) => {
    const deleted = await trx.kysely
      .deleteFrom('messages')
      .where('id', '=', messageId)
      .where('subscriber_id', '=', subscriber.id)
      .where('channel', '=', 'in_app')
      .executeTakeFirst();
    if (!Number(deleted.numDeletedRows)) throw notFound('Notification', messageId);
    await trx.kysely.deleteFrom('message_wakes').where('message_id', '=', messageId).execute();
    await told(trx, subscriber, 'delete', messageId);
  });
}

export const BULK_ACTIONS = ['read', 'seen', 'archive', 'read-archive', 'delete'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

/** A bulk change's body: Novu's `tags`, `data` (and `notificationIds` for seen), and the extensions filtering as the list does. */
export interface BulkBody {
  tags?: unknown;
  data?: unknown;
  notificationIds?: string[];
  contextKeys?: string[];
  severity?: FamilyFilter['severity'];
  read?: boolean;
  archived?: boolean;
  snoozed?: boolean;
}

/**
 * POST .../notifications/{read|seen|archive|read-archive|delete}: the change on every message the
 * body's filter matches (archived and snoozed ones included unless it says otherwise, as Novu's);
 * `seen` with `notificationIds` on those only. One statement; the streams are told once.
 */
export async function bulkChange(db: Db, tenant: Tenant, subscriberId: string, action: BulkAction, body: BulkBody): Promise<number> {
  const subscriber = await findSubscriber(db, tenant, subscriberId);
  // Novu's SDK sends `tags` as an object it cannot fill ({}): an empty object filters nothing.
  const tags = body.tags !== undefined && !(typeof body.tags === 'object' && body.tags !== null && !Array.isArray(body.tags) && Object.keys(body.tags).length === 0) ? body.tags : undefined;
  const filter: FamilyFilter = {
    tags: tags as FamilyFilter['tags'],
    data: parseDataFilterOrUndefined(body.data),
    contextKeys: body.contextKeys,
    severity: body.severity,
    read: action === 'read-archive' ? true : body.read,
    archived: body.archived,
    snoozed: body.snoozed,
  };
  const conditions = filterConditions(db, filter, 'bulk');
  if (action === 'seen' && body.notificationIds) {
    if (body.notificationIds.length === 0) return 0;
    conditions.push({ text: `"id" in (${body.notificationIds.map(() => '?').join(', ')})`, params: body.notificationIds });
  }
  const where = asSql(whereOf(subscriber.id, conditions));
  const iso = nowIso();
  const changed = await inTransaction(db, async (trx) => {
    const k = trx.kysely;
    const matching = k.updateTable('messages').where(where);
    let count = 0;
    switch (action) {
      case 'read':
      case 'seen':
        count = Number((await applyMark(matching, action, iso).executeTakeFirst()).numUpdatedRows);
        break;
      case 'archive':
      case 'read-archive':
        count = Number(
          (
            await matching
              .set({ archived: 1, archived_at: iso, snoozed_until: null, updated_at: iso })
              .where((eb) => eb.or([eb('archived', '=', 0), eb('snoozed_until', 'is not', null)]))
              .executeTakeFirst()
          ).numUpdatedRows,
        );
        break;
      case 'delete':
        count = Number((await k.deleteFrom('messages').where(where).executeTakeFirst()).numDeletedRows);
        break;
    }
    if (count > 0) await told(trx, subscriber, action === 'read-archive' ? 'archive' : action);
    return count;
  });
  return changed;
}

/** A bulk body's `data`: absent, null or '' filters nothing. */
function parseDataFilterOrUndefined(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return parseDataFilter(value);
}

/** Conditions written with `?` placeholders as a Kysely expression, each parameter bound in its place. */
function asSql(where: { text: string; params: unknown[] }): RawBuilder<SqlBool> {
  const pieces = where.text.split('?');
  let built: RawBuilder<unknown> = sql.raw(pieces[0]!);
  where.params.forEach((param, index) => {
    built = sql`${built}${sql.val(param)}${sql.raw(pieces[index + 1]!)}`;
  });
  return built as RawBuilder<SqlBool>;
}
