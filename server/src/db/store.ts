import type { Kysely } from 'kysely';
import type { ChangeBus } from './changes.ts';
import type { Dialect } from './index.ts';
import type { Database } from './schema.ts';

/** What reads and writes need of the database: the Kysely instance (or a transaction of it) and its dialect. */
export interface Store {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /** Where new in-app messages are announced to open streams (absent: nobody listens). */
  changes?: ChangeBus;
}

/** Runs `fn` in a transaction, or inside the caller's when `store` already is one. */
export async function inTransaction<T>(store: Store, fn: (trx: Store) => Promise<T>): Promise<T> {
  if (store.kysely.isTransaction) return fn(store);
  return store.kysely.transaction().execute((trx) => fn({ kysely: trx, dialect: store.dialect, changes: store.changes }));
}
