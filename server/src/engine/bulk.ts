import { sql } from 'kysely';
import type { Store } from './types.ts';

// Many rows in one statement with one parameter: the rows as a JSON array, read back into columns
// by the database (PostgreSQL: json_populate_recordset, typed by the table's own row type; SQLite:
// json_each and ->>). Building a statement with a parameter per value is what a large trigger paid
// for most (200 jobs: 4,200 values through Kysely's compiler, tens of ms of the event loop on a
// busy machine); a JSON string is made natively, and the statement's text depends only on the
// columns, so SQLite prepares it once.

type BulkTable = 'notifications' | 'jobs' | 'messages' | 'subscribers';

/**
 * Inserts `rows` (objects keyed by column, every one with the same keys) into `table`; with
 * `skipConflictOn`, a row whose value of that unique column (or columns) already exists is skipped. Returns how
 * many rows were inserted.
 */
export async function insertRows(store: Store, table: BulkTable, rows: object[], skipConflictOn?: string | string[]): Promise<number> {
  if (rows.length === 0) return 0;
  const columns = Object.keys(rows[0]!);
  const names = sql.join(columns.map((c) => sql.id(c)));
  const json = JSON.stringify(rows);
  const conflict = skipConflictOn ? sql` on conflict (${sql.join([skipConflictOn].flat().map((c) => sql.id(c)))}) do nothing` : sql``;
  const result =
    store.dialect === 'postgres'
      ? await sql`insert into ${sql.id(table)} (${names}) select ${names} from json_populate_recordset(null::${sql.id(table)}, ${json}::json)${conflict}`.execute(store.kysely)
      : // `where true`: SQLite's parser needs it between a SELECT and ON CONFLICT.
        await sql`insert into ${sql.id(table)} (${names}) select ${sql.join(columns.map((c) => sql`value ->> ${sql.lit(c)}`))} from json_each(${json}) where true${conflict}`.execute(
          store.kysely,
        );
  return Number(result.numAffectedRows ?? 0);
}
