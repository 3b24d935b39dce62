import { CompiledQuery } from 'kysely';
import type { Db } from './index.ts';
import { batched } from '../batched.ts';

/**
 * What a read needs of the database: a Db, or a Store (a transaction's: neither readNow nor
 * prepared, so its reads go through Kysely, inside the transaction).
 */
export type Reader = Pick<Db, 'kysely' | 'dialect' | 'readNow' | 'prepared'>;

/** The select list of `columns`, `id` first, each once, quoted. */
export function columnList(columns: Iterable<string>): string {
  return [...new Set(['id', ...columns])].map((column) => `"${column}"`).join(', ');
}

/**
 * The condition that `column` is one of `ids`, its parameters, and whether its text is one whatever
 * the ids (read()'s `fixed`). PostgreSQL: the ids one array parameter, unnested in a subquery whose
 * row estimate does not depend on its value, so a named statement keeps one generic plan (with
 * `= any($1)` the estimate knew the array's length and every execution was planned again:
 * pg_prepared_statements, 8 custom plans of 8). SQLite: `in (?, ...)`, read at once.
 */
export function amongIds(dialect: Reader['dialect'], column: string, ids: readonly string[]): { condition: string; params: unknown[]; fixed: boolean } {
  if (dialect === 'postgres') return { condition: `"${column}" = any(array(select unnest(?::text[])))`, params: [ids], fixed: true };
  return { condition: `"${column}" in (${ids.map(() => '?').join(', ')})`, params: [...ids], fixed: false };
}

/**
 * Runs a read written with `?` placeholders (PostgreSQL's $1, $2... put in their place): on SQLite
 * at once, through the reads' statement cache (db.readNow) unless a transaction is open. `fixed`: a
 * text of a few shapes the client cannot multiply, run on PostgreSQL as a named statement
 * (db.prepared); a projection (but the elements' one, inbox/feed.ts), feed identifiers, a payload
 * filter or a list of ids written out (`in (?, ?, ...)`) make shapes without end, and a client
 * sending new ones would take the named slots from the hot reads.
 */
export async function read<R>(db: Reader, text: string, params: readonly unknown[], fixed = false): Promise<R[]> {
  const now = db.readNow?.<R>(text, params);
  if (now) return now;
  let placeholders = 0;
  const numbered = () => {
    placeholders++;
    return `$${placeholders}`;
  };
  const query = db.dialect === 'postgres' ? text.replace(/\?/g, numbered) : text;
  if (fixed && db.prepared) return db.prepared<R>(query, params);
  return (await db.kysely.executeQuery<R>(CompiledQuery.raw(query, params as unknown[]))).rows;
}

/**
 * PostgreSQL: a read for every call that reached it in one turn of the event loop, as one statement
 * (batched.ts): under load one round trip answers many calls; a call alone waits for nothing. Each
 * call's read still starts after the call, so it sees every write answered before it. `text` reads
 * the calls' keys from one JSON array of tuples, `jsonb_array_elements(?::jsonb) with ordinality as
 * k(v, n)`, and answers rows numbered by `n`: the array's row estimate does not depend on its
 * value, so PostgreSQL keeps one generic plan of the named statement (with arrays, unnest, whose
 * length a custom plan knows, it planned every execution again: 130 µs a batch of six against
 * 84 µs, pgbench, one connection). One statement in flight at a time: the calls that arrive
 * meanwhile make the next one larger (bench:server, unseen count, alternating: 25,865 and 26,342
 * req/s with one, 23,943 and 24,514 with two); a batch is short index reads, so what waits behind
 * it waits for one round trip.
 */
export function readMany<K extends unknown[], V>(db: Db, text: string): (key: K) => Promise<V> {
  const oneStatementAtATime = 1;
  return batched<K, V>(async (keys) => {
    const rows = await read<V & { n: number }>(db, text, [JSON.stringify(keys)], true);
    const found: V[] = [];
    // (`n` counts from 1, as ordinality does.)
    for (const { n, ...row } of rows) found[n - 1] = row as V;
    return found;
  }, oneStatementAtATime);
}

/** A subscriber's in-app counts as the triggers of migration 0007 keep them (SQLite). */
export interface InboxCounts {
  total: number;
  unseen: number;
  unread: number;
}
const NONE: InboxCounts = { total: 0, unseen: 0, unread: 0 };

/** SQLite: a subscriber's kept counts (by internal id); undefined on PostgreSQL, which counts. */
export async function keptCounts(db: Db, subscriberId: string): Promise<InboxCounts | undefined> {
  if (db.dialect !== 'sqlite') return undefined;
  const [counts] = await read<InboxCounts>(db, 'select total, unseen, unread from inbox_counts where subscriber_id = ?', [subscriberId]);
  return counts ?? NONE;
}

/**
 * How many of a subscriber's visible in-app messages (by internal id; neither archived nor snoozed) are unseen (`seen`: seen), capped at
 * `limit`: what endpoint 13 answers and the stream tells. SQLite: one row of kept counts;
 * PostgreSQL: one indexed count capped by a bounded subquery, batched (readMany) for every count
 * asked in one turn, whichever asked it.
 */
export type UnseenCounter = (subscriberId: string, seen: boolean, limit: number) => Promise<number>;

export function unseenCounter(db: Db): UnseenCounter {
  if (db.dialect === 'sqlite') {
    return async (subscriberId, seen, limit) => {
      const kept = (await keptCounts(db, subscriberId))!;
      return Math.min(seen ? kept.total - kept.unseen : kept.unseen, limit);
    };
  }
  const count = readMany<[subscriberId: string, seen: number, limit: number], { count: number }>(
    db,
    `select k.n, (select count(*) from (select 1 from "messages" where "subscriber_id" = k.v ->> 0 and "channel" = 'in_app' and "seen" = (k.v ->> 1)::int and "archived" = 0 and "snoozed_until" is null limit (k.v ->> 2)::int) as "capped") as "count"
       from jsonb_array_elements(?::jsonb) with ordinality as k(v, n)`,
  );
  return async (subscriberId, seen, limit) => (await count([subscriberId, seen ? 1 : 0, limit])).count;
}
