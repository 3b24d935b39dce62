import { sql, type RawBuilder } from 'kysely';
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
 * `rows` with the payload (and overrides, for rows that have the column) each refers to put in
 * their own columns, read once per payload: rows that hold their own are left as they are.
 */
export async function withPayloads<T extends WithPayload>(store: Pick<Store, 'kysely'>, rows: T[]): Promise<T[]> {
  const ids = [...new Set(rows.flatMap((row) => (row.payload_id && row.payload === STORED_APART ? [row.payload_id] : [])))];
  if (ids.length === 0) return rows;
  const stored = await store.kysely.selectFrom('payloads').select(['id', 'payload', 'overrides']).where('id', 'in', ids).execute();
  const byId = new Map(stored.map((row) => [row.id, row]));
  for (const row of rows) {
    const found = row.payload_id && row.payload === STORED_APART ? byId.get(row.payload_id) : undefined;
    if (!found) continue;
    row.payload = found.payload;
    if (row.overrides !== undefined) row.overrides = found.overrides;
  }
  return rows;
}

/** SQL for the payload of `table`'s row (an alias, or the table): the one it refers to, else its own. */
export function payloadOf(table: string): RawBuilder<string> {
  return sql<string>`coalesce((select p.payload from payloads as p where p.id = ${sql.ref(`${table}.payload_id`)}), ${sql.ref(`${table}.payload`)})`;
}
