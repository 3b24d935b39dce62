import { sql } from 'kysely';
import { bool, parseJson, toJson } from '../json.ts';
import { insertRows } from './bulk.ts';
import { feedIdFor } from './feeds.ts';
import { inAppControls, inAppMessage } from './in-app.ts';
import { executionDetail } from './jobs.ts';
import { crashPoint, yieldToLoop } from './lease.ts';
import { obeysPreferences, preferenceBlock, type PreferenceSettings } from './preferences.ts';
import { sequenceMessages } from './sequence.ts';
import type { ExecutionDetail } from './types.ts';
import { inTransaction, type Store } from '../db/store.ts';
import type { JobRow, SubscriberRow, WorkflowRow } from '../db/rows.ts';

// A trigger to many subscribers: the in-app steps at the head of the workflow run for every run at
// once, in a few statements whatever the number of runs: the subscribers' preferences (one read),
// the messages (an insert per 200), the jobs (one update), the streams told (one statement) and the
// messages numbered (engine/sequence.ts). The rows written are those the step would write run by
// run (in-app.ts, run.ts): the same message keyed by its job, the same execution detail, a step the
// subscriber's preferences turn off skipped with its reason.
//
// Each process writes these steps through one writer per database, which takes whatever is waiting
// (chunks of this trigger and of others made at the same time) into one transaction. Messages are
// numbered under a lock held until their transaction commits (sequence.ts), so writing
// transactions waited on one another anyway: one writer loses little, holds one pooled connection
// instead of one per trigger (other requests find the pool free), and pays one commit and
// one numbering for many triggers.
//
// A transaction whose jobs are no longer all pending (canceled, or taken over by another process)
// is rolled back; its chunks are then written one by one, and the runs of a chunk that fails alone
// go on one at a time, as any run does (run.ts's `advance`).

/**
 * Runs per chunk (what a trigger hands the writer at once) and per transaction: within both
 * databases' limits on parameters. On SQLite a transaction holds the one connection from its
 * first statement to its commit (every other request's query waits for it, even while it yields
 * to the event loop), so a transaction there is one chunk: a trigger to 100 subscribers is four
 * transactions, and the requests that came meanwhile are answered between two. (Triggers made at
 * the same time still share one: one recipient each, up to a chunk of them.) On PostgreSQL a
 * transaction blocks nobody's queries: a batch takes many chunks, for one commit and one numbering.
 */
const CHUNK = { sqlite: 25, postgres: 200 };
const BATCH = { sqlite: 25, postgres: 1000 };
/** Messages per insert statement (bulk.ts; on SQLite 7,400 parameters, within its 32,766). */
const INSERT_ROWS = 200;

/** Lets the event loop turn between two pieces of a batch's work (building a statement is synchronous). */
const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface FanOutRun {
  /** The run's jobs in step order, as written; a job run here is updated in place. */
  jobs: JobRow[];
  subscriber: SubscriberRow;
}

class ChunkMoved extends Error {}

/** One chunk's step to write: the runs of `workflow` triggered at `now`, their job at `step`. */
interface Part {
  workflow: WorkflowRow;
  chunk: FanOutRun[];
  step: number;
  now: Date;
  /** The fan-out (one call of fanOutInApp) the chunk is part of: the writer takes turns between them. */
  fanOut: object;
}

/**
 * Runs the leading in-app steps of `runs` (all of one workflow, triggered at `now`): each step for
 * every run before the next step. Leaves every other step, and the steps of a chunk that could not
 * run together, to `advance`.
 */
export async function fanOutInApp(store: Store, workflow: WorkflowRow, runs: FanOutRun[], now: Date): Promise<void> {
  let left = runs;
  for (let step = 0; left.length > 0 && left.every((r) => r.jobs[step]?.type === 'in_app' && r.jobs[step]!.status === 'pending'); step++) {
    const size = CHUNK[store.dialect];
    const chunks: FanOutRun[][] = [];
    for (let i = 0; i < left.length; i += size) chunks.push(left.slice(i, i + size));
    const written = await Promise.all(
      chunks.map(async (chunk) => {
        try {
          await write(store, { workflow, chunk, step, now, fanOut: runs });
          return chunk;
        } catch (err) {
          if (!(err instanceof ChunkMoved)) console.error(`in-app step ${step} of ${chunk.length} runs failed together; running them one by one:`, err);
          return [];
        } finally {
          crashPoint(`after-step-${step}`);
        }
      }),
    );
    left = written.flat();
  }
}

/** The writer of each database (keyed by its root Kysely instance). */
const writers = new WeakMap<object, Writer>();

/** Writes `part`: through the database's writer, or at once inside a caller's transaction (the seed). */
function write(store: Store, part: Part): Promise<void> {
  if (store.kysely.isTransaction) return writeParts(store, [part]);
  let writer = writers.get(store.kysely);
  if (!writer) {
    writer = new Writer(store);
    writers.set(store.kysely, writer);
  }
  return writer.write(part);
}

class Writer {
  #waiting: { part: Part; resolve: () => void; reject: (err: unknown) => void }[] = [];
  #busy = false;
  constructor(private readonly store: Store) {}

  write(part: Part): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ part, resolve, reject });
      if (!this.#busy) {
        this.#busy = true;
        // The chunks handed over in this turn of the event loop go together.
        setImmediate(() => {
          this.#drain();
        });
      }
    });
  }

  async #drain() {
    const limit = BATCH[this.store.dialect];
    let lastFanOut: object | undefined;
    while (this.#waiting.length > 0) {
      // Turns: a batch begins with the oldest chunk of another fan-out than the last batch began
      // with, so a trigger to one subscriber waits for one transaction of a large trigger made just
      // before it, not for all of them (its answer waits for its message).
      const another = this.#waiting.findIndex((waiting) => waiting.part.fanOut !== lastFanOut);
      const batch = this.#waiting.splice(another >= 0 ? another : 0, 1);
      lastFanOut = batch[0]!.part.fanOut;
      let runs = batch[0]!.part.chunk.length;
      // Then every other chunk, oldest first, that still fits.
      for (let index = 0; index < this.#waiting.length && runs < limit; ) {
        const size = this.#waiting[index]!.part.chunk.length;
        if (runs + size > limit) {
          index++;
          continue;
        }
        runs += size;
        batch.push(...this.#waiting.splice(index, 1));
      }
      try {
        await writeParts(this.store, batch.map((waiting) => waiting.part));
        for (const waiting of batch) waiting.resolve();
      } catch (err) {
        if (batch.length === 1) {
          batch[0]!.reject(err);
        } else {
          // One chunk's jobs moved (or one failed): the others are still to write, each alone.
          for (const waiting of batch) await writeParts(this.store, [waiting.part]).then(waiting.resolve, waiting.reject);
        }
      }
      // Requests are answered between two transactions (on SQLite their statements block the loop).
      await yieldToLoop(this.store);
    }
    this.#busy = false;
  }
}

/** Writes the step of every part's runs in one transaction; throws ChunkMoved (rolled back) when a job is no longer pending. */
async function writeParts(store: Store, parts: Part[]): Promise<void> {
  const done = await inTransaction(store, async (trx) => {
    const k = trx.kysely;
    const settings = new Map<string, PreferenceSettings>();
    const obeying = parts.filter((part) => obeysPreferences(part.workflow, 'in_app')).flatMap((part) => part.chunk.map((run) => run.subscriber.id));
    if (obeying.length > 0) {
      const rows = await k
        .selectFrom('preferences')
        .select(['subscriber_id', 'workflow_id', 'setting', 'enabled'])
        .where('subscriber_id', 'in', [...new Set(obeying)])
        .execute();
      for (const row of rows) {
        let map = settings.get(row.subscriber_id);
        if (!map) {
          map = new Map();
          settings.set(row.subscriber_id, map);
        }
        map.set(`${row.workflow_id}/${row.setting}`, bool(row.enabled));
      }
    }
    const feeds = new Map<string, string>();
    const messages = [];
    const finished: { job: JobRow; status: string; details: string; provider: string | null; iso: string }[] = [];
    for (const [index, { workflow, chunk, step, now }] of parts.entries()) {
      if (index > 0) await breathe();
      const jobs = chunk.map((run) => run.jobs[step]!);
      const controls = inAppControls(jobs[0]!);
      const iso = now.toISOString();
      let feedId: string | null = null;
      if (controls.feedIdentifier) {
        const key = `${workflow.environment_id}/${controls.feedIdentifier}`;
        feedId = feeds.get(key) ?? (await feedIdFor(trx, workflow.environment_id, controls.feedIdentifier, now));
        feeds.set(key, feedId);
      }
      for (const [position, run] of chunk.entries()) {
        const job = jobs[position]!;
        const details = (detail: ExecutionDetail) => toJson([...parseJson<ExecutionDetail[]>(job.execution_details, []), detail]);
        const why = preferenceBlock(settings.get(run.subscriber.id) ?? new Map(), workflow, 'in_app');
        if (why) {
          finished.push({ job, status: 'skipped', details: details(executionDetail(now, 'Skipped', `Step skipped: ${why}`)), provider: job.provider_id, iso });
          continue;
        }
        messages.push(inAppMessage(job, { workflow, subscriber: run.subscriber, now }, controls, feedId));
        finished.push({ job, status: 'completed', details: details(executionDetail(now, 'Success', 'Message created')), provider: 'novu', iso });
      }
    }
    for (let start = 0; start < messages.length; start += INSERT_ROWS) {
      await breathe();
      const rows = messages.slice(start, start + INSERT_ROWS);
      // A message already there (its step ran elsewhere) means these runs are not ours to run together.
      if ((await insertRows(trx, 'messages', rows, 'job_key')) !== rows.length) throw new ChunkMoved();
    }
    // Each job as finishJob leaves it, only if it is still pending. PostgreSQL: the rows as one JSON
    // parameter (a batch's thousand rows would otherwise be 5,000 values to build and bind).
    const values =
      trx.dialect === 'postgres'
        ? sql`select * from json_to_recordset(${JSON.stringify(finished.map((done) => ({ id: done.job.id, status: done.status, details: done.details, provider: done.provider, at: done.iso })))}::json)
            as r(id text, status text, details text, provider text, at text)`
        : sql`values ${sql.join(finished.map((done) => sql`(${done.job.id}, ${done.status}, ${done.details}, ${done.provider}, ${done.iso})`))}`;
    const updated = await sql`with v(id, status, details, provider, at) as (${values})
      update jobs set status = v.status, execution_details = v.details, provider_id = v.provider,
        locked_by = null, locked_until = null, updated_at = v.at
      from v where jobs.id = v.id and jobs.status = 'pending'`.execute(k);
    if (Number(updated.numAffectedRows) !== finished.length) throw new ChunkMoved();
    await trx.changes?.publish(k, messages.map((message) => ({ subscriberId: message.subscriber_id, messageId: message.id })));
    await sequenceMessages(trx, messages.map((message) => message.id));
    return finished;
  });
  for (const finished of done) {
    Object.assign(finished.job, { status: finished.status, execution_details: finished.details, provider_id: finished.provider, locked_by: null, locked_until: null, updated_at: finished.iso });
  }
}
