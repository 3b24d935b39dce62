import { sql } from 'kysely';
import type { Store } from '../db/store.ts';

// In-app messages are numbered in the order they become visible (`messages.seq`), so a stream's
// Last-Event-ID replay (inbox/stream.ts) never misses one committed late: the numbers are given
// by the last statement of the writing transaction, under a lock held until it commits. A
// transaction that has its numbers therefore commits before the next one gets any.
//
// PostgreSQL: a transaction-level advisory lock, then a sequence. SQLite: one writer at a time
// already (the file's write lock), so the next numbers follow the highest one.

/** Any constant of our own: the advisory lock that orders the numbering of messages. */
const SEQ_LOCK = 0x6e6f7431;

/** Numbers the new in-app messages `ids` after every committed one. Call it last in their transaction. */
export async function sequenceMessages(trx: Store, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  if (trx.dialect === 'postgres') {
    // The lock is taken before any number is drawn (the one-row CTE is read first).
    await sql`with l as materialized (select pg_advisory_xact_lock(${SEQ_LOCK}))
      update messages set seq = nextval('messages_seq_numbers') from l where messages.id = any(${ids}::text[])`.execute(trx.kysely);
  } else {
    const { rows } = await sql<{ top: number }>`select coalesce(max(seq), 0) as top from messages`.execute(trx.kysely);
    // The ids are distinct: each message's rank among them gives it its own number.
    const list = JSON.stringify(ids);
    await sql`update messages set seq = ${rows[0]!.top} + (select count(*) from json_each(${list}) as j where j.value <= messages.id)
      where id in (select value from json_each(${list}))`.execute(trx.kysely);
  }
}
