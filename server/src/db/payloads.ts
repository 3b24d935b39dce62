import { sql, type RawBuilder } from 'kysely';
import { parseJson, toJson } from '../json.ts';
import { amongIds, read, type Reader } from './read.ts';
import type { Store } from './store.ts';

// A trigger's payload and overrides are stored once (the payloads table, migration 0013), not in
// each of its notifications, jobs and messages: those refer to it by payload_id and hold
// STORED_APART in their own columns. Rows written before keep their own payload (payload_id null).

/** What a row that refers to a stored payload holds in its own payload and overrides columns. */
export const STORED_APART = '{}';

/** A row with a payload of its own, or a reference to one stored apart. */
interface WithPayload {
  payload?: string;
  overrides?: string;
  payload_id?: string | null;
}

/**
 * A stored payload (with its overrides) of more than this many bytes is read by a statement of its
 * own, the event loop free before each: on SQLite a read runs on the event loop, and ten 1 MB
 * payloads read at once held it for the whole 10 MB.
 */
const LARGE_PAYLOAD_BYTES = 256 * 1024;

/** A payload as withPayloads reads it: a large one's texts left out (null). */
interface FoundPayload {
  id: string;
  bytes: number;
  payload: string | null;
  overrides: string | null;
}

/**
 * `rows` with the payload (and overrides, for rows that have the column) each refers to put in
 * their own columns, read once per payload: rows that hold their own are left as they are.
 */
export async function withPayloads<T extends WithPayload>(store: Reader, rows: T[]): Promise<T[]> {
  const ids = [...new Set(rows.flatMap((row) => (row.payload_id && row.payload === STORED_APART ? [row.payload_id] : [])))];
  if (ids.length === 0) return rows;
  // Small payloads in one statement; a large one's text left out, and read on its own below.
  // One text for any number of ids on PostgreSQL, so it runs as a named statement (db/read.ts).
  const among = amongIds(store.dialect, 'id', ids);
  const found = await read<FoundPayload>(
    store,
    `select "id", "bytes", case when "bytes" <= ? then "payload" end as "payload", case when "bytes" <= ? then "overrides" end as "overrides"
      from "payloads" where ${among.condition}`,
    [LARGE_PAYLOAD_BYTES, LARGE_PAYLOAD_BYTES, ...among.params],
    among.fixed,
  );
  const stored: { id: string; payload: string; overrides: string }[] = [];
  for (const row of found) {
    if (row.payload !== null && row.overrides !== null) {
      stored.push({ id: row.id, payload: row.payload, overrides: row.overrides });
      continue;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
    const large = await store.kysely.selectFrom('payloads').select(['id', 'payload', 'overrides']).where('id', '=', row.id).executeTakeFirst();
    if (large) stored.push(large);
  }
  const byId = new Map(stored.map((row) => [row.id, row]));
  for (const row of rows) {
    const found = row.payload_id && row.payload === STORED_APART ? byId.get(row.payload_id) : undefined;
    if (!found) continue;
    row.payload = found.payload;
    if (row.overrides !== undefined) row.overrides = found.overrides;
  }
  return rows;
}

/**
 * A digest job's events as it keeps them (its `digest` column): each event the payload of a trigger
 * it collected, in order. An event whose trigger stored its payload apart is kept as that payload's
 * id (at the same index of `payloadIds`, the event itself `{}`), not as a copy: a digest of many
 * large payloads would otherwise hold each one again. Events kept before hold the payload itself
 * (no `payloadIds`, or null at their index).
 */
interface KeptDigest {
  events?: unknown[];
  payloadIds?: (string | null)[];
}

/** The `digest` text with the payload of `job` (its trigger's) added as the last event, by reference when stored apart. */
export function addDigestEvent(digest: string | null, job: WithPayload): string {
  const kept = parseJson<KeptDigest & Record<string, unknown>>(digest, {});
  const events = kept.events ?? [];
  const payloadIds = kept.payloadIds ?? events.map(() => null);
  if (job.payload_id) {
    events.push({});
    payloadIds.push(job.payload_id);
  } else {
    events.push(parseJson<unknown>(job.payload, {}));
    payloadIds.push(null);
  }
  return toJson({ ...kept, events, payloadIds });
}

/** The number of events a `digest` text holds. */
export function digestEventCount(digest: string | null): number {
  return parseJson<KeptDigest>(digest, {}).events?.length ?? 0;
}

/**
 * `rows` (jobs) with the events of their `digest` put back whole: each event kept as a stored
 * payload's id replaced by that payload, read once per payload. What a run renders and what the
 * API shows; a digest written back must be the kept one (addDigestEvent), never this.
 */
export async function withDigestEvents<T extends { digest: string | null }>(store: Pick<Store, 'kysely'>, rows: T[]): Promise<T[]> {
  const kept = rows.map((row) => (row.digest?.includes('"payloadIds"') ? parseJson<KeptDigest & Record<string, unknown>>(row.digest, {}) : undefined));
  const ids = [...new Set(kept.flatMap((digest) => (digest?.payloadIds ?? []).filter((id): id is string => typeof id === 'string')))];
  const stored =
    ids.length === 0 ? [] : await store.kysely.selectFrom('payloads').select(['id', 'payload']).where('id', 'in', ids).execute();
  const byId = new Map(stored.map((row) => [row.id, row.payload]));
  rows.forEach((row, index) => {
    const digest = kept[index];
    if (!digest) return;
    const { payloadIds = [], ...rest } = digest;
    const events = (digest.events ?? []).map((event, position) => {
      const id = payloadIds[position];
      return id ? parseJson<unknown>(byId.get(id), {}) : event;
    });
    row.digest = toJson({ ...rest, events });
  });
  return rows;
}

/** SQL for the payload of `table`'s row (an alias, or the table): the one it refers to, else its own. */
export function payloadOf(table: string): RawBuilder<string> {
  return sql<string>`coalesce((select p.payload from payloads as p where p.id = ${sql.ref(`${table}.payload_id`)}), ${sql.ref(`${table}.payload`)})`;
}

/**
 * How old an unreferenced payload must be before the sweep deletes it. A trigger to topics stores
 * its payload before the pages of their subscribers' runs that refer to it are written (in the
 * background, minutes for millions of subscribers), so a young payload with nothing referring to
 * it yet may be one still in use.
 */
export const PAYLOAD_SWEEP_GRACE_MS = 24 * 60 * 60 * 1000;
/** Payloads one step of the sweep looks at. */
export const PAYLOAD_SWEEP_STEP = 1000;

/**
 * One step of the sweep of stored payloads: of the payloads after `after` in id order (ids begin
 * with their creation time), up to `limit` of them, deletes those older than PAYLOAD_SWEEP_GRACE_MS
 * that no notification, job or message refers to (a trigger that reached nobody: an empty topic,
 * every member excluded). Returns the last id looked at, or undefined once the table's end was
 * reached (the next sweep starts again from the first), and how many were deleted.
 */
export async function sweepPayloads(store: Pick<Store, 'kysely'>, after: string | undefined, now = Date.now(), limit = PAYLOAD_SWEEP_STEP): Promise<{ last?: string; deleted: number }> {
  let page = store.kysely.selectFrom('payloads').select('id').orderBy('id').limit(limit);
  if (after !== undefined) page = page.where('id', '>', after);
  const ids = (await page.execute()).map((row) => row.id);
  if (ids.length === 0) return { deleted: 0 };
  const before = new Date(now - PAYLOAD_SWEEP_GRACE_MS).toISOString();
  const unreferenced = (table: 'notifications' | 'jobs' | 'messages') => sql<boolean>`not exists (select 1 from ${sql.table(table)} as r where r.payload_id = payloads.id)`;
  const result = await store.kysely
    .deleteFrom('payloads')
    .where('id', 'in', ids)
    .where('created_at', '<', before)
    .where(unreferenced('notifications'))
    .where(unreferenced('jobs'))
    .where(unreferenced('messages'))
    .executeTakeFirst();
  return { last: ids.length < limit ? undefined : ids.at(-1), deleted: Number(result.numDeletedRows) };
}
