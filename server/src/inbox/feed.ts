import { withPayloads } from '../db/payloads.ts';
import type { Db } from '../db/index.ts';
import type { Tenant } from '../db/keys.ts';
import { columnList, keptCounts, read, type InboxCounts, type UnseenCounter } from '../db/read.ts';
import type { MessageRow } from '../db/rows.ts';
import { RawJson, rawJson } from '../json.ts';
import { buildAnswer, type Answer } from './answer.ts';
import { loadEmbeds } from './embeds.ts';
import { feedIdentifiers } from './messages.ts';
import { VISIBLE } from './family-filter.ts';
import { decodePayloadFilter, payloadMatches } from './payload-filter.ts';
import { findSubscriber } from './subscribers.ts';
import { EVERY_COLUMN, FEED_ITEM_COLUMNS, feedItemView, messageView } from './views.ts';

// The hot paths: the in-app feed (endpoint 10) and the unseen count (13). Both read one
// subscriber's in-app messages through the messages_feed / messages_unseen indexes (subscriber_id,
// channel, ...); the subscriber's internal id already confines them to the key's environment.

/** Endpoint 10's query, as its schema validated it. */
export interface FeedQuery {
  page: number;
  limit: number;
  read?: boolean;
  seen?: boolean;
  /** base64 of a JSON object the messages' payloads must contain (payload-filter.ts). */
  payload?: string;
  feedIdentifier?: string[];
  /** Extension: the projection. Top-level Message fields, comma-separated or repeated; `_id` always. */
  fields?: string[];
}

/** A page whose messages' payloads and contents hold this many characters is put together in steps. */
const LARGE_PAGE_CHARACTERS = 256 * 1024;
const turnOfTheLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
/** The fields whose column may be stored apart, once per trigger (db/payloads.ts): read with the reference. */
const STORED_APART_FIELDS = ['payload', 'overrides'];
/**
 * The fields the inbox's elements ask for (src/store/feed-pages.ts FEED_FIELDS): the feed's hottest
 * read. A projection of these fields only reads the columns of all of them, one text whatever its
 * subset, so it may run as a named statement (db/read.ts) like the page without projection; the
 * answer still holds only the fields named. Any other projection reads its own columns, unnamed.
 */
const ELEMENTS_FIELDS = ['_id', 'subject', 'content', 'createdAt', 'read', 'seen', 'avatar', 'cta', 'templateIdentifier', 'transactionId', 'payload'];
const ELEMENTS_COLUMNS = columnList([...ELEMENTS_FIELDS.map((field) => FEED_ITEM_COLUMNS[field]!), 'payload_id']);

/**
 * The projection's field names, or undefined for the whole Message (no `fields`, or nothing named).
 * Only the Message's own fields, in its order, whatever the order or the other names given: one
 * projection is one answer (and one entity tag), however its names are written.
 */
export function projection(value: string[] | undefined): Set<string> | undefined {
  const names = value?.flatMap((item) => item.split(',')).map((name) => name.trim()).filter(Boolean);
  if (!names?.length) return undefined;
  const named = new Set(names);
  return new Set(['_id', ...Object.keys(FEED_ITEM_COLUMNS).filter((name) => named.has(name))]);
}

/**
 * The feed's body as JSON text, in parts: own text at even indexes, an embedded object's JSON at
 * odd ones. A page's messages
 * share one subscriber and few templates: each embedded object is serialized once per page and
 * spliced into every message that holds it (the template is most of a message's bytes), instead of
 * once per message. JSON columns (rawJson) are spliced in as stored, never parsed. With a
 * projection, only the named fields (unknown names are ignored, as a spec server ignores the
 * parameter).
 */
export function feedParts(views: readonly object[], fields: Set<string> | undefined, rest: object): string[] {
  const serialized = new Map<object, string>();
  const jsonOf = (embedded: object) => {
    let text = serialized.get(embedded);
    if (text === undefined) {
      text = JSON.stringify(embedded);
      serialized.set(embedded, text);
    }
    return text;
  };
  const parts: string[] = [];
  let own = '{"data":[';
  // (The projection's names in its order, or every field; a name no message has adds nothing.)
  const names = fields ? [...fields] : undefined;
  views.forEach((view, index) => {
    const plain: Record<string, unknown> = {};
    const spliced: [name: string, value: object | RawJson][] = [];
    for (const name of names ?? Object.keys(view)) {
      const value = (view as Record<string, unknown>)[name];
      if (name === 'subscriber' || name === 'template') {
        if (value) spliced.push([name, value as object]);
      } else if (value instanceof RawJson) {
        spliced.push([name, value]);
      } else {
        plain[name] = value;
      }
    }
    const text = JSON.stringify(plain);
    if (index > 0) own += ',';
    if (spliced.length === 0) {
      own += text;
      return;
    }
    // The plain fields without the closing brace, then each spliced field (after a comma, unless
    // it is the first field of all: the plain fields' text is `{}`).
    own += text.slice(0, -1);
    const hasPlainFields = text !== '{}';
    spliced.forEach(([name, value], position) => {
      if (position > 0 || hasPlainFields) own += ',';
      own += `"${name}":`;
      if (value instanceof RawJson) {
        own += value.text;
      } else {
        parts.push(own, jsonOf(value));
        own = '';
      }
    });
    own += '}';
  });
  parts.push(`${own}],${JSON.stringify(rest).slice(1)}`);
  return parts;
}

/** The feed's body as one JSON text. */
export const feedJson = (...args: Parameters<typeof feedParts>) => feedParts(...args).join('');

/** Internal ids remembered (see Feed); past this many the memory starts again. */
const MAX_REMEMBERED_IDS = 50_000;

export interface FeedOptions {
  /** The unseen count's one reader, shared with the streams (db/read.ts). */
  unseen: UnseenCounter;
}

/** The feed and the unseen count of an app: what they remember between requests, and their reads. */
export class Feed {
  readonly #db: Db;
  readonly #unseen: UnseenCounter;
  /**
   * A subscriber's internal id never changes (subscribers are not renamed; a removed one is
   * forgotten, see forget), so the lookup is remembered: a feed page without the embedded
   * subscriber and an unseen count need no subscriber row.
   */
  readonly #internalIds = new Map<string, string>();
  constructor(db: Db, options: FeedOptions) {
    this.#db = db;
    this.#unseen = options.unseen;
  }

  /**
   * Endpoint 10: a page of the subscriber's in-app feed, newest first, paged from 0, `totalCount`
   * the real number of matches; as a finished answer in `encoding` (answer.ts).
   */
  async page(tenant: Tenant, subscriberId: string, query: FeedQuery, encoding: 'br' | 'gzip' | undefined): Promise<Answer> {
    const db = this.#db;
    const filter = query.payload !== undefined ? decodePayloadFilter(query.payload) : undefined;
    const feeds = feedIdentifiers(query.feedIdentifier);
    const fields = projection(query.fields);

    const embedSubscriber = !fields || fields.has('subscriber');
    const subscriber = embedSubscriber ? await findSubscriber(db, tenant, subscriberId) : undefined;
    const internalId = subscriber?.id ?? (await this.#internalId(tenant, subscriberId));

    // The query's text is written by hand (a query builder per request showed in profiles; SQLite
    // prepares each shape once); only a payload filter's part comes from the builder.
    // Archived and snoozed messages are out of this feed (the notifications family shows them).
    const conditions = ['"subscriber_id" = ?', `"channel" = 'in_app'`, VISIBLE];
    const params: unknown[] = [internalId];
    if (query.read !== undefined) {
      conditions.push('"read" = ?');
      params.push(query.read ? 1 : 0);
    }
    if (query.seen !== undefined) {
      conditions.push('"seen" = ?');
      params.push(query.seen ? 1 : 0);
    }
    if (feeds) {
      conditions.push(feeds.length > 0 ? `"feed_identifier" in (${feeds.map(() => '?').join(', ')})` : '1 = 0');
      params.push(...feeds);
    }
    if (filter) {
      const part = payloadMatches(db.dialect, filter).compile(db.kysely);
      conditions.push(part.sql.replace(/\$\d+/g, '?'));
      params.push(...part.parameters);
    }
    const where = `from "messages" where ${conditions.join(' and ')}`;
    const elementsProjection = fields !== undefined && [...fields].every((field) => ELEMENTS_FIELDS.includes(field));
    // A text of a few fixed shapes may run as a named statement (db/read.ts).
    const fixedShape = (!fields || elementsProjection) && !feeds && !filter;

    const offset = query.page * query.limit;
    // With a projection, only the columns of the named fields (a page's rows are most of its cost),
    // or those of the elements' fields (ELEMENTS_COLUMNS) when it names no other.
    // (A name is looked up as an own key: `toString` or `__proto__` names no column, as `nonsense` names none.)
    // Without one, every column a Message shows, named (EVERY_COLUMN: never `*`).
    let columns = EVERY_COLUMN;
    if (elementsProjection) {
      columns = ELEMENTS_COLUMNS;
    } else if (fields) {
      columns = columnList([
        ...[...fields].flatMap((field) => (Object.hasOwn(FEED_ITEM_COLUMNS, field) ? FEED_ITEM_COLUMNS[field]! : [])),
        ...(STORED_APART_FIELDS.some((field) => fields.has(field)) ? ['payload_id'] : []),
      ]);
    }
    const pageRows = await read<MessageRow>(db, `select ${columns} ${where} order by "created_at" desc, "id" desc limit ? offset ?`, [...params, query.limit, offset], fixedShape);
    // (The payloads stored apart are read only for an answer that shows them.)
    const showsPayloads = !fields || STORED_APART_FIELDS.some((field) => fields.has(field));
    const rows = showsPayloads ? await withPayloads(db, pageRows) : pageRows;
    const totalCount = await this.#totalCount(internalId, query, rows.length, offset, () =>
      read<{ count: number | string }>(db, `select count(*) as "count" ${where}`, params, !feeds && !filter),
    );
    // A page of large messages is put together in steps, the event loop serving other requests between them.
    const large = rows.reduce((sum, row) => sum + (row.payload?.length ?? 0) + (row.content?.length ?? 0), 0) >= LARGE_PAGE_CHARACTERS;
    if (large) await turnOfTheLoop();
    const embedTemplate = !fields || fields.has('template');
    const messages =
      embedSubscriber || embedTemplate
        ? await loadEmbeds<RawJson>(db, rows, subscriber, rawJson)
        : rows.map((row) => messageView<RawJson>(row, undefined, undefined, rawJson));
    const views = messages.map((message, index) => feedItemView(message, rows[index]!));
    const rest = { totalCount, hasMore: offset + rows.length < totalCount, pageSize: query.limit, page: query.page };
    if (large) await turnOfTheLoop();
    const parts = feedParts(views, fields, rest);
    if (large) await turnOfTheLoop();
    return buildAnswer(parts, encoding);
  }

  /**
   * Endpoint 13: the subscriber's unseen (or, `seen`, seen) in-app messages, capped at `limit`.
   * Every open inbox asks for it: on SQLite one row of kept counts; on PostgreSQL one indexed count
   * capped by a bounded subquery, batched with the streams' (db/read.ts, unseenCounter).
   */
  async unseenCount(tenant: Tenant, subscriberId: string, seen: boolean, limit: number): Promise<number> {
    return this.#unseen(await this.#internalId(tenant, subscriberId), seen, limit);
  }

  /**
   * The number of matches of a page's query. A short page ends the list, so it tells the total by
   * itself; else the kept counts tell it when they can (SQLite, no other filter than one of read
   * and seen); otherwise `count` counts.
   */
  async #totalCount(internalId: string, query: FeedQuery, found: number, offset: number, count: () => Promise<{ count: number | string }[]>): Promise<number> {
    if (found < query.limit && (found > 0 || offset === 0)) return offset + found;
    const filtered = query.payload !== undefined || query.feedIdentifier !== undefined;
    const bothFlags = query.read !== undefined && query.seen !== undefined;
    const kept: InboxCounts | undefined = filtered || bothFlags ? undefined : await keptCounts(this.#db, internalId);
    if (kept) {
      const flag = query.read ?? query.seen;
      if (flag === undefined) return kept.total;
      const cleared = query.read !== undefined ? kept.unread : kept.unseen;
      return flag ? kept.total - cleared : cleared;
    }
    return Number((await count())[0]!.count);
  }

  /** Forgets a removed subscriber's internal id (one made again with its subscriberId gets a new one). */
  forget(environmentId: string, subscriberId: string): void {
    this.#internalIds.delete(`${environmentId}/${subscriberId}`);
  }

  async #internalId(tenant: Tenant, subscriberId: string): Promise<string> {
    const key = `${tenant.environmentId}/${subscriberId}`;
    let id = this.#internalIds.get(key);
    if (!id) {
      id = (await findSubscriber(this.#db, tenant, subscriberId)).id;
      if (this.#internalIds.size >= MAX_REMEMBERED_IDS) this.#internalIds.clear();
      this.#internalIds.set(key, id);
    }
    return id;
  }
}
