import { addDigestEvent, digestEventCount, withPayloads } from '../db/payloads.ts';
import { sql } from 'kysely';
import { parseJson, toJson } from '../json.ts';
import { UNIT_MS, type DelayControls, type DigestControls, type TimeUnit } from './controls.ts';
import { executionDetail, finishJob } from './jobs.ts';
import type { ExecutionDetail, JobOutcome, RunContext, StepHandler } from './types.ts';
import { inTransaction, type Store } from '../db/store.ts';
import type { JobRow, StoredStep } from '../db/rows.ts';

// The steps that wait: `delay` and `digest`. Their job becomes `delayed` with `run_at` (epoch ms) set
// to when it is due; the scheduler (scheduler.ts) claims it then and resumes the run. Nothing waits
// in memory, so a restart loses nothing.

/** Listeners told when this process scheduled a job, so a scheduler can wake up for it in time. */
const scheduledListeners = new Set<(runAt: number) => void>();

export function onScheduled(listener: (runAt: number) => void): () => void {
  scheduledListeners.add(listener);
  return () => scheduledListeners.delete(listener);
}

/** Tells this process's scheduler that something is due at `runAt` (epoch ms), so it wakes in time. */
export function scheduled(runAt: number) {
  for (const listener of scheduledListeners) listener(runAt);
}

function storedStep(job: JobRow): StoredStep {
  return parseJson<StoredStep>(job.step, { _id: '', name: '', type: job.type as StoredStep['type'], controlValues: {} });
}

/** A wait's length: `amount` of `unit` (seconds when the unit is unknown, nothing when the amount is not a positive number). */
function windowMs(amount: unknown, unit: unknown): number {
  const count = typeof amount === 'number' && Number.isFinite(amount) && amount > 0 ? amount : 0;
  return count * (UNIT_MS[unit as TimeUnit] ?? UNIT_MS.seconds);
}

/** A `delay` step: the job waits until now + amount x unit. */
export const delayStep: StepHandler = async (store, job, ctx) => {
  const controls = storedStep(job).controlValues as DelayControls;
  const runAt = ctx.now.getTime() + windowMs(controls.amount, controls.unit);
  const detail = executionDetail(ctx.now, 'Pending', `Delayed for ${controls.amount} ${controls.unit}, until ${new Date(runAt).toISOString()}`, {
    raw: toJson({ runAt: new Date(runAt).toISOString() }),
  });
  await finishJob(store, job, 'delayed', detail, ctx.now, job.provider_id, { run_at: runAt });
  scheduled(runAt);
  return 'waiting';
};

/** The value the digest groups by: `payload[digestKey]` (a dotted path reads nested fields). */
function digestValue(payload: Record<string, unknown>, digestKey: string | undefined): string {
  if (!digestKey) return '';
  let value: unknown = payload;
  for (const segment of digestKey.split('.')) {
    value = value !== null && typeof value === 'object' && Object.hasOwn(value, segment) ? (value as Record<string, unknown>)[segment] : undefined;
  }
  return value === undefined ? '' : JSON.stringify(value);
}

/**
 * A `digest` step. The first trigger of a group (same workflow step, subscriber and
 * `payload[digestKey]`; an absent key is a group of its own) opens a window of amount x unit: its job
 * waits, holding the events in `digest.events`, its own payload first. A trigger of the same group
 * inside the window adds its payload there and stops: its digest job becomes `merged`, its notification
 * points at the first one (`_digestedNotificationId`) and its later jobs are `skipped`. When the window
 * ends the first run goes on once, with every event (see render-context.ts).
 *
 * The lookup and the merge are one transaction; on PostgreSQL an advisory lock on the group serialises
 * concurrent triggers of one group (SQLite serialises writers anyway), so a group never opens twice.
 */
export const digestStep: StepHandler = async (store, job, ctx): Promise<JobOutcome> => {
  const step = storedStep(job);
  const controls = step.controlValues as DigestControls;
  const payload = parseJson<Record<string, unknown>>(job.payload, {});
  const value = digestValue(payload, controls.digestKey);
  const nowMs = ctx.now.getTime();
  const iso = ctx.now.toISOString();

  let runAt: number | null = null;
  const outcome = await inTransaction(store, async (trx) => {
    if (trx.dialect === 'postgres') {
      const group = [job.environment_id, job.template_id, step._id, job.subscriber_id, value].join('\u001f'); // not NUL: PostgreSQL text cannot hold it
      await sql`select pg_advisory_xact_lock(hashtextextended(${group}, 0))`.execute(trx.kysely);
    }
    const open = await withPayloads(trx, await trx.kysely
      .selectFrom('jobs')
      .selectAll()
      .where('subscriber_id', '=', job.subscriber_id)
      .where('template_id', '=', job.template_id)
      .where('environment_id', '=', job.environment_id)
      .where('type', '=', 'digest')
      .where('status', '=', 'delayed')
      .where('run_at', '>', nowMs)
      .where('id', '!=', job.id)
      .orderBy('run_at')
      .execute());
    const first = open.find(
      (candidate) => storedStep(candidate)._id === step._id && digestValue(parseJson<Record<string, unknown>>(candidate.payload, {}), controls.digestKey) === value,
    );
    if (first) {
      // Its payload added by reference (the trigger stored it once), not copied.
      const digest = addDigestEvent(first.digest, job);
      const merged = await trx.kysely
        .updateTable('jobs')
        .set({ digest, updated_at: iso })
        .where('id', '=', first.id)
        .where('status', '=', 'delayed')
        .executeTakeFirst();
      if (Number(merged.numUpdatedRows) === 1) {
        const detail = executionDetail(ctx.now, 'Merged', `Digested into notification ${first.notification_id} (event ${digestEventCount(digest)})`, {
          raw: toJson({ digestedNotificationId: first.notification_id, digestJobId: first.id }),
        });
        await finishJob(trx, job, 'merged', detail, ctx.now, job.provider_id, { digest: toJson({ ...parseJson(job.digest, {}), events: [] }) });
        await trx.kysely
          .updateTable('notifications')
          .set({ digested_notification_id: first.notification_id, updated_at: iso })
          .where('id', '=', job.notification_id)
          .execute();
        await skipRest(trx, job, ctx.now, `Digested into notification ${first.notification_id}`);
        return 'waiting' as const;
      }
    }
    runAt = nowMs + windowMs(controls.amount, controls.unit);
    const digest = addDigestEvent(toJson({ ...parseJson<Record<string, unknown>>(job.digest, {}), events: [], payloadIds: [] }), job);
    const detail = executionDetail(ctx.now, 'Pending', `Digest window open until ${new Date(runAt).toISOString()}`, {
      raw: toJson({ runAt: new Date(runAt).toISOString(), digestKey: controls.digestKey ?? null }),
    });
    await finishJob(trx, job, 'delayed', detail, ctx.now, job.provider_id, { run_at: runAt, digest });
    return 'waiting' as const;
  });
  if (runAt !== null) scheduled(runAt);
  return outcome;
};

/** Marks the pending jobs after `job` in its run as skipped. */
async function skipRest(store: Store, job: JobRow, now: Date, why: string) {
  const rest = await store.kysely
    .selectFrom('jobs')
    .select(['id', 'execution_details'])
    .where('notification_id', '=', job.notification_id)
    .where('step_index', '>', job.step_index)
    .where('status', '=', 'pending')
    .execute();
  for (const pending of rest) {
    const details = parseJson<ExecutionDetail[]>(pending.execution_details, []);
    details.push(executionDetail(now, 'Skipped', why));
    await store.kysely
      .updateTable('jobs')
      .set({ status: 'skipped', execution_details: toJson(details), updated_at: now.toISOString() })
      .where('id', '=', pending.id)
      .where('status', '=', 'pending')
      .execute();
  }
}

/** The events of the last digest job before `index` that completed, for the steps after it. */
export function digestBefore(jobs: JobRow[], index: number): RunContext['digest'] {
  for (let before = index - 1; before >= 0; before--) {
    const job = jobs[before]!;
    if (job.type === 'digest' && job.status === 'completed') {
      return { events: parseJson<{ events?: Record<string, unknown>[] }>(job.digest, {}).events ?? [] };
    }
  }
  return undefined;
}
