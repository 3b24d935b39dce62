import { CompiledQuery } from 'kysely';
import type { Store } from '../db/store.ts';

// Many rows in one statement, built without Kysely's query builder: building an insert of a few
// thousand values through it was what a large trigger paid for most (200 jobs: 4,200 values, tens
// of ms of the event loop on a busy machine). PostgreSQL gets the rows as one JSON parameter, read
// back into columns by json_populate_recordset (typed by the table's own row type): one value to
// bind and parse. SQLite gets plain multi-row VALUES with a parameter per value (four times faster
// there than extracting each column from JSON), a text that depends only on the columns and the
// number of rows, so it is prepared once.

type BulkTable = 'notifications' | 'jobs' | 'messages' | 'subscribers';

/**
 * Inserts `rows` (objects keyed by column, every one with the same keys) into `table`; with
 * `skipConflictOn`, a row whose value of that unique column (or columns) already exists is skipped.
 * Returns how many rows were inserted. Mind SQLite's 32,766 parameters: rows x columns.
 */
export async function insertRows(store: Store, table: BulkTable, rows: object[], skipConflictOn?: string | string[]): Promise<number> {
  if (rows.length === 0) return 0;
  const columns = Object.keys(rows[0]!);
  const names = columns.map((c) => `"${c}"`).join(', ');
  const conflict = skipConflictOn ? ` on conflict (${[skipConflictOn].flat().map((c) => `"${c}"`).join(', ')}) do nothing` : '';
  const query =
    store.dialect === 'postgres'
      ? CompiledQuery.raw(`insert into "${table}" (${names}) select ${names} from json_populate_recordset(null::"${table}", $1::json)${conflict}`, [JSON.stringify(rows)])
      : CompiledQuery.raw(
          `insert into "${table}" (${names}) values ${Array<string>(rows.length).fill(`(${columns.map(() => '?').join(', ')})`).join(', ')}${conflict}`,
          rows.flatMap((row) => columns.map((c) => (row as Record<string, unknown>)[c] ?? null)),
        );
  const result = await store.kysely.executeQuery(query);
  return Number(result.numAffectedRows ?? 0);
}
