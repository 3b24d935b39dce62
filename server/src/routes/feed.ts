import { Type } from '@sinclair/typebox';
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { App, AppContext } from '../app.ts';
import type { Tenant } from '../auth.ts';
import type { Dialect } from '../db/index.ts';
import { badRequest } from '../errors.ts';
import { findBadInput } from '../bad-input.ts';
import { RawJson, rawJson } from '../json.ts';
import { StringList, SubscriberIdParam } from '../schemas.ts';
import { findSubscriber } from '../db/lookups.ts';
import { feedIdentifiers, loadEmbeds } from './messages.ts';
import { MESSAGE_COLUMNS, messageView, type MessageRow } from '../views.ts';
import { makeAnswer } from '../answer-cache.ts';
import { chooseEncoding } from '../encoding.ts';
import { foldChangeRows, MAX_CHANGE_ROWS, type ChangeTable } from '../db/change-rows.ts';
import { keptCounts, read, readMany, type InboxCounts } from '../db/read.ts';

// The hot paths: the in-app feed (10) and the unseen count (13). Both read one subscriber's in-app
// messages through the messages_feed / messages_unseen indexes (subscriber_id, channel, ...); the
// subscriber's internal id already confines them to the key's environment.

const FeedQuery = Type.Object({
  page: Type.Integer({ minimum: 0, maximum: 100_000, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  read: Type.Optional(Type.Boolean()),
  seen: Type.Optional(Type.Boolean()),
  payload: Type.Optional(Type.String({ maxLength: 8192 })),
  feedIdentifier: Type.Optional(StringList()),
  // Extension: the projection. Top-level Message fields, comma-separated or repeated; `_id` always.
  fields: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 50 })),
});

/**
 * The columns of a whole Message (and of its embedded objects' lookup), named. PostgreSQL prepares
 * the page's query once per connection (db.prepared), and a prepared `select *` fails at every
 * use ("cached plan must not change result type") once a column is added to messages, as a
 * process of the next version does when it migrates at start while this one still serves.
 */
const EVERY_COLUMN = columnList(Object.values(MESSAGE_COLUMNS));

/** The select list of `columns`, `id` first, each once, quoted. */
function columnList(columns: Iterable<string>): string {
  return [...new Set(['id', ...columns])].map((c) => `"${c}"`).join(', ');
}

/** The projection's field names, or undefined for the whole Message (no `fields`, or nothing named). */
export function projection(value: string[] | undefined): Set<string> | undefined {
  const names = value?.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  return names?.length ? new Set(['_id', ...names]) : undefined;
}

/**
 * The feed's body as JSON text, in parts: own text at even indexes, an embedded object's JSON at
 * odd ones (the answer cache keeps those once for every answer that holds them). A page's messages
 * share one subscriber and few templates: each embedded object is serialized once per page and
 * spliced into every message that holds it (the template is most of a message's bytes), instead of
 * once per message. JSON columns (rawJson) are spliced in as stored, never parsed. With a
 * projection, only the named fields (unknown names are ignored, as a spec server ignores the
 * parameter).
 */
export function feedParts(views: ReturnType<typeof messageView<RawJson>>[], fields: Set<string> | undefined, rest: object): string[] {
  const once = new Map<object, string>();
  const json = (o: object) => once.get(o) ?? (once.set(o, JSON.stringify(o)), once.get(o)!);
  const parts: string[] = [];
  let own = '{"data":[';
  // (The projection's names in its order, or every field; a name no message has adds nothing.)
  const keys = fields && [...fields];
  views.forEach((view, i) => {
    const plain: Record<string, unknown> = {};
    const spliced: [string, object | RawJson][] = [];
    for (const k of keys ?? Object.keys(view)) {
      const v = (view as Record<string, unknown>)[k];
      if (k == 'subscriber' || k == 'template') v && spliced.push([k, v as object]);
      else if (v instanceof RawJson) spliced.push([k, v]);
      else plain[k] = v;
    }
    const text = JSON.stringify(plain);
    own += i ? ',' : '';
    if (!spliced.length) return void (own += text);
    own += text.slice(0, -1);
    spliced.forEach(([k, v], j) => {
      own += `${j || text.length > 2 ? ',' : ''}"${k}":`;
      if (v instanceof RawJson) own += v.text;
      else parts.push(own, json(v)), (own = '');
    });
    own += '}';
  });
  parts.push(`${own}],${JSON.stringify(rest).slice(1)}`);
  return parts;
}

/** The feed's body as one JSON text. */
export const feedJson = (...args: Parameters<typeof feedParts>) => feedParts(...args).join('');

const UnseenQuery = Type.Object({
  seen: Type.Boolean({ default: false }),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
});

/** What a feed answer is kept under (the answer cache): its inbox's and templates' versions; on PostgreSQL, with how many change rows each sum read. */
interface Versions {
  inbox: number | null;
  templates: number | null;
  inboxRows?: number;
  templateRows?: number;
}

/** Decodes the feed's `payload` filter: base64 (standard or URL-safe) of a JSON object; 400 otherwise. */
export function decodePayloadFilter(value: string): Record<string, unknown> {
  const compact = value.trim();
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
    throw badRequest('payload must be base64-encoded JSON');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(compact, 'base64').toString('utf8'));
  } catch {
    throw badRequest('payload must be base64-encoded JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw badRequest('payload must be base64-encoded JSON of an object');
  }
  // The same filter on both databases: what one of them cannot express is refused on both.
  const bad = findBadInput(parsed);
  if (bad) throw badRequest(`payload ${bad.path.join('.')} ${bad.problem}`.replace('payload  ', 'payload '));
  let leaves = 0;
  const count = (object: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(object)) {
      if (key.includes('"') || key.includes('\\')) throw badRequest('payload filter keys must not contain double quotes or backslashes');
      if (isPlainObject(value) && Object.keys(value).length > 0) count(value);
      else if (++leaves > MAX_FILTER_LEAVES) throw badRequest(`payload filter must have at most ${MAX_FILTER_LEAVES} values`);
    }
  };
  count(parsed as Record<string, unknown>);
  return parsed as Record<string, unknown>;
}

/** The most values a feed payload filter may compare (each is one test in the query). */
export const MAX_FILTER_LEAVES = 100;

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * `message.payload` contains `filter` (partial deep equality: every leaf of the filter equals the
 * value at its path; arrays compare whole). SQLite: one json_extract / json_type test per leaf.
 * PostgreSQL: jsonb containment (there an array matches when it contains the filter's elements).
 */
export function payloadMatches(dialect: Dialect, filter: Record<string, unknown>): RawBuilder<SqlBool> {
  if (dialect === 'postgres') return sql<SqlBool>`${sql.ref('payload')}::jsonb @> ${JSON.stringify(filter)}::jsonb`;
  const tests: ReturnType<typeof sql<SqlBool>>[] = [];
  const walk = (object: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(object)) {
      const path = `${prefix}."${key}"`;
      const extract = sql`json_extract(${sql.ref('payload')}, ${path})`;
      const type = sql`json_type(${sql.ref('payload')}, ${path})`;
      if (isPlainObject(value)) {
        if (Object.keys(value).length === 0) tests.push(sql<SqlBool>`${type} = 'object'`);
        else walk(value, path);
      } else if (Array.isArray(value)) {
        tests.push(sql<SqlBool>`(${type} = 'array' and ${extract} = json(${JSON.stringify(value)}))`);
      } else if (value === null) {
        tests.push(sql<SqlBool>`${type} = 'null'`);
      } else if (typeof value === 'boolean') {
        tests.push(sql<SqlBool>`${type} = ${value ? 'true' : 'false'}`);
      } else {
        // A string only equals a JSON string, a number only a JSON number (SQLite never equates text and numbers here).
        tests.push(sql<SqlBool>`${extract} = ${value as string | number}`);
      }
    }
  };
  walk(filter, '$');
  if (tests.length === 0) return sql<SqlBool>`1 = 1`;
  return sql<SqlBool>`(${sql.join(tests, sql` and `)})`;
}

export function feedRoutes(app: App, ctx: AppContext) {
  const db = ctx.db;
  const k = db.kysely;
  const cache = ctx.feedCache;
  const run = <R>(text: string, params: readonly unknown[], fixed = false) => read<R>(db, text, params, fixed);

  // A subscriber's internal id never changes (subscribers are not deleted or renamed), so the
  // lookup is remembered: a feed page without the embedded subscriber and an unseen count need no
  // subscriber row.
  const internalIds = new Map<string, string>();
  const internalId = async (tenant: Tenant, subscriberId: string) => {
    const key = `${tenant.environmentId}/${subscriberId}`;
    let id = internalIds.get(key);
    if (!id) {
      id = (await findSubscriber(db, tenant, subscriberId)).id;
      if (internalIds.size >= 50_000) internalIds.clear();
      internalIds.set(key, id);
    }
    return id;
  };

  // 10. The in-app feed: newest first, paged from 0; `totalCount` is the real number of matches.
  app.get('/v1/subscribers/:subscriberId/notifications/feed', { schema: { params: SubscriberIdParam, querystring: FeedQuery } }, async (request, reply) => {
    const q = request.query;
    const filter = q.payload !== undefined ? decodePayloadFilter(q.payload) : undefined;
    const feeds = feedIdentifiers(q.feedIdentifier);
    const fields = projection(q.fields);
    // A HEAD answers the headers the same GET would: its encoding, and so its tag, too.
    const encoding = chooseEncoding(request.headers['accept-encoding']);

    // The answer cache (server/src/answer-cache.ts): keyed by the inbox's versions, read before
    // anything the answer shows, so a kept answer is never older than the versions it is kept
    // under. The key holds the query as validated (unknown parameters were dropped) and normalized;
    // the payload filter as sent (its decoded form would write a number past a double's range as null).
    let key: string | undefined;
    if (cache) {
      const tenant = request.tenant;
      const id = await internalId(tenant, request.params.subscriberId);
      const version = versionsOf ? await versionsOf([id, tenant.environmentId]) : (await run<Versions>(versionSql, [id, tenant.environmentId]))[0];
      if (version!.inboxRows! > MAX_CHANGE_ROWS) void fold('inbox_changes', id);
      if (version!.templateRows! > MAX_CHANGE_ROWS) void fold('template_changes', tenant.environmentId);
      key = JSON.stringify([tenant.environmentId, id, version!.inbox ?? 0, version!.templates ?? 0, q.page, q.limit, q.read ?? null, q.seen ?? null, q.payload ?? null, feeds ? [...feeds].sort() : null, fields ? [...fields] : null, encoding ?? null]);
      const kept = cache.get(tenant.environmentId, key);
      if (kept) return reply.sendAnswer(kept);
    }
    const embedSubscriber = !fields || fields.has('subscriber');
    const subscriber = embedSubscriber ? await findSubscriber(db, request.tenant, request.params.subscriberId) : undefined;
    const subscriberId = subscriber?.id ?? (await internalId(request.tenant, request.params.subscriberId));

    // The query's text is written by hand (a query builder per request showed in profiles; SQLite
    // prepares each shape once); only a payload filter's part comes from the builder.
    const conditions = ['"subscriber_id" = ?', `"channel" = 'in_app'`];
    const params: unknown[] = [subscriberId];
    if (q.read !== undefined) conditions.push('"read" = ?'), params.push(q.read ? 1 : 0);
    if (q.seen !== undefined) conditions.push('"seen" = ?'), params.push(q.seen ? 1 : 0);
    if (feeds) conditions.push(feeds.length ? `"feed_identifier" in (${feeds.map(() => '?').join(', ')})` : '1 = 0'), params.push(...feeds);
    if (filter) {
      const part = payloadMatches(db.dialect, filter).compile(k);
      conditions.push(part.sql.replace(/\$\d+/g, '?')), params.push(...part.parameters);
    }
    const where = `from "messages" where ${conditions.join(' and ')}`;

    const offset = q.page * q.limit;
    // With a projection, only the columns of the named fields (a page's rows are most of its cost).
    // (A name is looked up as an own key: `toString` or `__proto__` names no column, as `nonsense` names none.)
    // Without one, every column a Message shows, named (EVERY_COLUMN: never `*`).
    const columns = fields ? columnList([...fields].flatMap((f) => (Object.hasOwn(MESSAGE_COLUMNS, f) ? MESSAGE_COLUMNS[f]! : []))) : EVERY_COLUMN;
    const rows = await run<MessageRow>(`select ${columns} ${where} order by "created_at" desc, "id" desc limit ? offset ?`, [...params, q.limit, offset], !fields && !feeds && !filter);
    // A short page ends the list, so it tells the total by itself; else the kept counts tell it
    // when they can (SQLite, no other filter than one of read and seen); otherwise count.
    let totalCount: number;
    let kept: InboxCounts | undefined;
    if (rows.length < q.limit && (rows.length > 0 || offset === 0)) {
      totalCount = offset + rows.length;
    } else if (!filter && !feeds && (q.read === undefined || q.seen === undefined) && (kept = await keptCounts(db, subscriberId))) {
      const flag = q.read ?? q.seen;
      const off = q.read !== undefined ? kept.unread : kept.unseen;
      totalCount = flag === undefined ? kept.total : flag ? kept.total - off : off;
    } else {
      totalCount = Number((await run<{ count: number | string }>(`select count(*) as "count" ${where}`, params, !feeds && !filter))[0]!.count);
    }
    const views =
      embedSubscriber || fields.has('template')
        ? await loadEmbeds<RawJson>(db, rows, subscriber, rawJson)
        : rows.map((r) => messageView<RawJson>(r, undefined, undefined, rawJson));
    const rest = { totalCount, hasMore: offset + rows.length < totalCount, pageSize: q.limit, page: q.page };
    const answer = makeAnswer(feedParts(views, fields, rest), encoding);
    if (key) cache!.set(request.tenant.environmentId, key, answer);
    return reply.sendAnswer(answer);
  });

  // The versions an answer of the feed is kept under: the subscriber's inbox, the environment's
  // templates (migration 0008). SQLite: a row each, kept by triggers. PostgreSQL: sums of change
  // rows, with how many rows each sum read (versionsOf, below).
  const versionSql = `select (select version from inbox_counts where subscriber_id = ?) as inbox, (select version from template_versions where environment_id = ?) as templates`;

  // PostgreSQL: a page's versions, for every request that reached them in one turn of the event
  // loop, are one statement (db/read.ts, readMany; the unseen count is batched alike).
  const versionsOf =
    db.dialect == 'postgres'
      ? readMany<[subscriberId: string, environmentId: string], Versions>(
          db,
          `select k.n, i.inbox, t.templates, i.rows as "inboxRows", t.rows as "templateRows" from jsonb_array_elements(?::jsonb) with ordinality as k(v, n)
             cross join lateral (select coalesce(sum(weight), 0)::bigint as inbox, count(*) as rows from inbox_changes where subscriber_id = k.v ->> 0) as i
             cross join lateral (select coalesce(sum(weight), 0)::bigint as templates, count(*) as rows from template_changes where environment_id = k.v ->> 1) as t`,
        )
      : undefined;

  /** PostgreSQL: folds a subscriber's (or an environment's) change rows as they pile up (db/change-rows.ts), one fold at a time each. */
  const folding = new Set<string>();
  const fold = async (table: ChangeTable, value: string) => {
    if (folding.has(value)) return;
    folding.add(value);
    try {
      await foldChangeRows(k, table, value);
    } catch (err) {
      app.log.warn({ err }, 'folding change rows failed');
    } finally {
      folding.delete(value);
    }
  };

  // 13. The unseen (or, with seen=true, seen) count, capped at `limit`. Every open inbox asks for
  // it: on SQLite one row of kept counts; on PostgreSQL one indexed count capped by a bounded
  // subquery, batched with the streams' (db/read.ts, unseenCounter).
  app.get('/v1/subscribers/:subscriberId/notifications/unseen', { schema: { params: SubscriberIdParam, querystring: UnseenQuery } }, async (request) => {
    const subscriberId = await internalId(request.tenant, request.params.subscriberId);
    return { count: await ctx.unseen(subscriberId, request.query.seen === true, request.query.limit) };
  });
}
