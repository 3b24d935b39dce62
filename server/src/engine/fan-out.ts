import { sql } from 'kysely';
import { bool, parseJson, toJson } from '../json.ts';
import type { SubscriberRow, WorkflowRow } from '../views.ts';
import { feedIdFor } from './feeds.ts';
import { inAppControls, inAppMessage } from './in-app.ts';
import { executionDetail } from './jobs.ts';
import { crashPoint, yieldToLoop } from './lease.ts';
import { obeysPreferences, preferenceBlock, type PreferenceSettings } from './preferences.ts';
import { sequenceMessages } from './sequence.ts';
import { inTransaction, type ExecutionDetail, type JobRow, type Store } from './types.ts';

// A trigger to many subscribers: the in-app steps at the head of the workflow run for every run at
// once, a chunk of runs per transaction, in a few statements whatever the chunk's size: the
// subscribers' preferences (one read), the messages (one insert), the jobs (one update), the
// streams told (one statement) and the messages numbered (engine/sequence.ts). The rows written
// are those the step would write run by run (in-app.ts, run.ts): the same message keyed by its job,
// the same execution detail, a step the subscriber's preferences turn off skipped with its reason.
// A chunk whose jobs are no longer all pending (canceled, or taken over by another process) is
// rolled back, and its runs go on one at a time, as any run does (run.ts's `advance`).

/**
 * Runs per transaction: within both databases' limits on parameters, and on SQLite (whose statements
 * block the event loop) small enough that requests are answered between chunks within tens of ms.
 */
const CHUNK = { sqlite: 25, postgres: 200 };

export interface FanOutRun {
  /** The run's jobs in step order, as written; a job run here is updated in place. */
  jobs: JobRow[];
  subscriber: SubscriberRow;
}

class ChunkMoved extends Error {}

/**
 * Runs the leading in-app steps of `runs` (all of one workflow, triggered at `now`) chunk by chunk.
 * Leaves every other step, and the steps of a chunk that could not run together, to `advance`.
 */
export async function fanOutInApp(store: Store, workflow: WorkflowRow, runs: FanOutRun[], now: Date): Promise<void> {
  let left = runs;
  for (let step = 0; left.length > 0 && left.every((r) => r.jobs[step]?.type === 'in_app' && r.jobs[step]!.status === 'pending'); step++) {
    const next: FanOutRun[] = [];
    const size = CHUNK[store.dialect];
    for (let i = 0; i < left.length; i += size) {
      // Other requests are answered between two chunks (on SQLite a chunk's statements block the loop).
      if (i > 0 || step > 0) await yieldToLoop(store);
      const chunk = left.slice(i, i + size);
      try {
        await runChunk(store, workflow, chunk, step, now);
        next.push(...chunk);
      } catch (err) {
        if (!(err instanceof ChunkMoved)) console.error(`in-app step ${step} of ${chunk.length} runs failed together; running them one by one:`, err);
      }
      crashPoint(`after-step-${step}`);
    }
    left = next;
  }
}

async function runChunk(store: Store, workflow: WorkflowRow, chunk: FanOutRun[], step: number, now: Date): Promise<void> {
  const jobs = chunk.map((r) => r.jobs[step]!);
  const cv = inAppControls(jobs[0]!);
  const iso = now.toISOString();
  const done = await inTransaction(store, async (trx) => {
    const k = trx.kysely;
    const settings = new Map<string, PreferenceSettings>();
    if (obeysPreferences(workflow, 'in_app')) {
      const rows = await k
        .selectFrom('preferences')
        .select(['subscriber_id', 'workflow_id', 'setting', 'enabled'])
        .where('subscriber_id', 'in', chunk.map((r) => r.subscriber.id))
        .execute();
      for (const r of rows) {
        let map = settings.get(r.subscriber_id);
        if (!map) settings.set(r.subscriber_id, (map = new Map()));
        map.set(`${r.workflow_id}/${r.setting}`, bool(r.enabled));
      }
    }
    const feedId = cv.feedIdentifier ? await feedIdFor(trx, workflow.environment_id, cv.feedIdentifier, now) : null;
    const messages = [];
    const finished: { job: JobRow; status: string; details: string; provider: string | null }[] = [];
    for (const [i, run] of chunk.entries()) {
      const job = jobs[i]!;
      const details = (detail: ExecutionDetail) => toJson([...parseJson<ExecutionDetail[]>(job.execution_details, []), detail]);
      const why = preferenceBlock(settings.get(run.subscriber.id) ?? new Map(), workflow, 'in_app');
      if (why) {
        finished.push({ job, status: 'skipped', details: details(executionDetail(now, 'Skipped', `Step skipped: ${why}`)), provider: job.provider_id });
        continue;
      }
      messages.push(inAppMessage(job, { workflow, subscriber: run.subscriber, now }, cv, feedId));
      finished.push({ job, status: 'completed', details: details(executionDetail(now, 'Success', 'Message created')), provider: 'novu' });
    }
    if (messages.length > 0) {
      // A message already there (its step ran elsewhere) means this chunk is not ours to run together.
      const inserted = await k.insertInto('messages').values(messages).onConflict((oc) => oc.column('job_key').doNothing()).executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows) !== messages.length) throw new ChunkMoved();
    }
    // Each job as finishJob leaves it, only if it is still pending.
    const values = sql.join(finished.map((f) => sql`(${f.job.id}, ${f.status}, ${f.details}, ${f.provider})`));
    const updated = await sql`with v(id, status, details, provider) as (values ${values})
      update jobs set status = v.status, execution_details = v.details, provider_id = v.provider,
        locked_by = null, locked_until = null, updated_at = ${iso}
      from v where jobs.id = v.id and jobs.status = 'pending'`.execute(k);
    if (Number(updated.numAffectedRows) !== finished.length) throw new ChunkMoved();
    await trx.changes?.publish(k, messages.map((m) => ({ s: m.subscriber_id, m: m.id })));
    await sequenceMessages(trx, messages.map((m) => m.id));
    return finished;
  });
  for (const f of done) {
    Object.assign(f.job, { status: f.status, execution_details: f.details, provider_id: f.provider, locked_by: null, locked_until: null, updated_at: iso });
  }
}
