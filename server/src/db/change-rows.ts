import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

// PostgreSQL's change rows (migration 0008): every statement that changes a subscriber's in-app
// messages (or the subscriber, or an environment's workflows) inserts a row of weight 1, and the
// feed's answer cache keys its answers by their sum. Writers only insert; these keep the rows few.

/** Change rows of one key past which they are folded into one. */
export const MAX_CHANGE_ROWS = 32;

export type ChangeTable = 'inbox_changes' | 'template_changes';
const COLUMN = { inbox_changes: 'subscriber_id', template_changes: 'environment_id' } as const;

/**
 * Folds the change rows of one subscriber (or environment) into one row of their total weight, in
 * one statement: the sum, the version, stays, and rows a writer adds meanwhile stay as they are. A
 * fold of the same rows by another process at once skips those already deleted, so no weight is
 * counted twice or lost.
 */
export async function foldChangeRows(kysely: Kysely<Database>, table: ChangeTable, key: string): Promise<void> {
  const tableName = sql.table(table);
  const column = sql.ref(COLUMN[table]);
  await sql`with gone as (delete from ${tableName} where ${column} = ${key} returning weight)
    insert into ${tableName} (${column}, weight) select ${key}, sum(weight) from gone having sum(weight) > 0`.execute(kysely);
}

/**
 * One step of the sweep that folds the change rows of keys nobody reads (a subscriber who never opens
 * the feed, whose reads fold them otherwise): the keys after `after`, in order, up to `limit` of them,
 * each folded when it holds more than MAX_CHANGE_ROWS rows. Returns the last key looked at, or
 * undefined once the table's end was reached (the next sweep starts again from the first).
 */
export async function sweepChangeRows(kysely: Kysely<Database>, table: ChangeTable, after: string | undefined, limit = 1000): Promise<{ last?: string; folded: number }> {
  const tableName = sql.table(table);
  const column = sql.ref(COLUMN[table]);
  const { rows } = await sql<{ key: string; n: string | number }>`select ${column} as key, count(*) as n from ${tableName}
    where ${after === undefined ? sql`true` : sql`${column} > ${after}`} group by ${column} order by ${column} limit ${limit}`.execute(kysely);
  let folded = 0;
  for (const { key, n } of rows) {
    if (Number(n) <= MAX_CHANGE_ROWS) continue;
    await foldChangeRows(kysely, table, key);
    folded++;
  }
  return { last: rows.length < limit ? undefined : rows.at(-1)?.key, folded };
}
