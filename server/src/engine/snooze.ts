import type { Selectable } from 'kysely';
import { inTransaction, type Store } from '../db/store.ts';
import type { MessageWakeTable } from '../db/schema.ts';
import { parseJson, toJson } from '../json.ts';
import { crashPoint } from './lease.ts';
import { schedulerLateness } from './metrics.ts';
import { sequenceMessages } from './sequence.ts';

// Snoozed messages wake up durably. A snooze (inbox/family.ts) writes the message's `snoozed_until`
// and a row of message_wakes, one per message, in one transaction. Every scheduler claims due wakes
// as it claims due jobs: one statement leases a batch (PostgreSQL: FOR UPDATE SKIP LOCKED, so two
// processes never claim one wake); the wake then commits in one transaction with the deletion of its
// row. A process that dies holding a lease leaves the wake to be claimed again once the lease ends,
// and the message's update checks that it is still snoozed until that very time, so a wake retried,
// or met by an unsnooze or a new snooze in between, changes nothing twice.
//
// A woken message comes back as new: first in the feed (its createdAt is now; the first delivery
// stays in deliveredAt), unread, unseen, the time appended to deliveredAt, numbered again in commit
// order (engine/sequence.ts), so every open stream tells it once as a message.

export type WakeRow = Selectable<MessageWakeTable>;

/** Leases up to `batch` due wakes no other process holds. */
export async function claimWakes(store: Store, worker: string, now: number, batch: number, leaseMs: number): Promise<WakeRow[]> {
  const k = store.kysely;
  let due = k
    .selectFrom('message_wakes')
    .select('message_id')
    .where('run_at', '<=', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
    .orderBy('run_at')
    .limit(batch);
  if (store.dialect === 'postgres') due = due.forUpdate().skipLocked();
  return k
    .updateTable('message_wakes')
    .set({ locked_by: worker, locked_until: now + leaseMs })
    .where('message_id', 'in', due)
    .returningAll()
    .execute();
}

/** When the next wake no process holds is due (epoch ms), if there is one. */
export async function nextWake(store: Store, now: number): Promise<number | undefined> {
  const row = await store.kysely
    .selectFrom('message_wakes')
    .select('run_at')
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
    .orderBy('run_at')
    .limit(1)
    .executeTakeFirst();
  return row ? Number(row.run_at) : undefined;
}

/** Hands back the wakes `worker` holds (a graceful stop). */
export async function releaseWakes(store: Store, worker: string): Promise<void> {
  await store.kysely.updateTable('message_wakes').set({ locked_by: null, locked_until: null }).where('locked_by', '=', worker).execute();
}

/** Wakes the claimed messages, in one transaction; how many came back. */
export async function wakeMessages(store: Store, wakes: WakeRow[], worker: string, now: Date): Promise<number> {
  if (wakes.length === 0) return 0;
  crashPoint('after-wake-claim');
  const iso = now.toISOString();
  const woken = await inTransaction(store, async (trx) => {
    const k = trx.kysely;
    const ids = wakes.map((wake) => wake.message_id);
    // Only the wakes still this process's: one whose lease ran out may have been taken over.
    const held = await k.deleteFrom('message_wakes').where('message_id', 'in', ids).where('locked_by', '=', worker).returningAll().execute();
    const rows = held.length ? await k.selectFrom('messages').select(['id', 'subscriber_id', 'snoozed_until', 'redelivered_at']).where('id', 'in', held.map((wake) => wake.message_id)).execute() : [];
    const back: { id: string; subscriberId: string }[] = [];
    for (const wake of held) {
      const row = rows.find((candidate) => candidate.id === wake.message_id);
      // Still snoozed until this wake's time: an unsnooze, an archive or a new snooze since leaves it.
      if (!row || row.snoozed_until === null || Date.parse(row.snoozed_until) !== Number(wake.run_at)) continue;
      const redelivered = [...parseJson<string[]>(row.redelivered_at, []), iso];
      const updated = await k
        .updateTable('messages')
        .set({ snoozed_until: null, created_at: iso, read: 0, seen: 0, last_read_date: null, redelivered_at: toJson(redelivered), updated_at: iso })
        .where('id', '=', row.id)
        .where('snoozed_until', '=', row.snoozed_until)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) continue;
      back.push({ id: row.id, subscriberId: row.subscriber_id });
      schedulerLateness.observe(Math.max(0, now.getTime() - Number(wake.run_at)) / 1000);
    }
    // Told as new messages (on PostgreSQL at the commit); numbered last, as that holds a lock to the commit.
    await trx.changes?.publish(
      k,
      back.map((message) => ({ subscriberId: message.subscriberId, messageId: message.id, what: 'wake' as const, target: message.id })),
    );
    await sequenceMessages(trx, back.map((message) => message.id));
    return back.length;
  });
  crashPoint('after-wake');
  return woken;
}
