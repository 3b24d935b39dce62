import { withDigestEvents, withPayloads } from '../db/payloads.ts';
import { chatStep, emailStep, pushStep, smsStep } from './channels.ts';
import { inAppStep } from './in-app.ts';
import { executionDetail, finishJob, JobMovedError } from './jobs.ts';
import { loadPreferences, obeysPreferences, preferenceBlock } from './preferences.ts';
import { crashPoint, yieldToLoop } from './lease.ts';
import type { JobOutcome, RunContext, StepHandler, StepType } from './types.ts';
import { delayStep, digestBefore, digestStep } from './waits.ts';
import type { Store } from '../db/store.ts';
import type { JobRow, SubscriberRow, WorkflowRow } from '../db/rows.ts';

export { executionDetail, finishJob, JobMovedError } from './jobs.ts';

/**
 * The handler of each step type. A type without one leaves its job `pending` and the run stops there.
 * `delay` and `digest` leave their job `delayed` until the scheduler (scheduler.ts) resumes the run.
 */
export const stepHandlers: Partial<Record<StepType, StepHandler>> = {
  in_app: inAppStep,
  email: emailStep,
  sms: smsStep,
  push: pushStep,
  chat: chatStep,
  delay: delayStep,
  digest: digestStep,
};

/**
 * Job statuses after which the run goes on with the next step. A `failed` delivery does not stop
 * the run: steps are saved with `shouldStopOnFail: false`.
 */
const PASSED = new Set(['completed', 'skipped', 'merged', 'failed']);
/** Job statuses that end the run for good. */
const ENDED = new Set(['canceled']);

/**
 * A run's outcome when none of its jobs is left to run (each passed, or the run was canceled), as
 * `advance` would give it; undefined while a job is left. A trigger's fan-out writes the in-app
 * steps of most runs at once, and such a run needs no turn of its own after.
 */
export function settledOutcome(jobs: JobRow[]): JobOutcome | undefined {
  let failed = false;
  for (const job of jobs) {
    if (ENDED.has(job.status)) return 'failed';
    if (!PASSED.has(job.status)) return undefined;
    failed ||= job.status === 'failed';
  }
  return failed ? 'failed' : 'completed';
}

/**
 * Runs one job with the handler of its step type (see `stepHandlers`). A channel step the
 * subscriber's preferences turn off (never in a critical workflow) is skipped instead, saying why;
 * the run goes on. Preferences are read when the step runs, so a change reaches a waiting run.
 */
export async function runJob(store: Store, job: JobRow, ctx: RunContext): Promise<JobOutcome> {
  const handler = stepHandlers[job.type as StepType];
  if (!handler) return 'waiting';
  if (obeysPreferences(ctx.workflow, job.type)) {
    ctx.preferences ??= await loadPreferences(store, job.subscriber_id);
    const why = preferenceBlock(ctx.preferences, ctx.workflow, job.type);
    if (why) {
      await finishJob(store, job, 'skipped', executionDetail(ctx.now, 'Skipped', `Step skipped: ${why}`), ctx.now);
      return 'completed';
    }
  }
  return handler(store, job, ctx);
}

export interface AdvanceOptions {
  now?: Date;
  /** The notification's jobs when the caller has them (trigger does), to save a query. */
  jobs?: JobRow[];
  workflow?: WorkflowRow;
  subscriber?: SubscriberRow;
  /**
   * The scheduler's worker id: jobs `queued` under its lock are this caller's to run (the scheduler
   * queues the step after a wait that ended). Without it only `pending` jobs run.
   */
  worker?: string;
}

/**
 * Runs a notification's jobs in step order from the first one not yet passed, until one waits (or the
 * run was canceled). Call it again to resume a run once a waiting job has completed (a due delay,
 * say). 'failed' when a job of the run failed, 'completed' when every one passed.
 */
export async function advance(store: Store, notificationId: string, options: AdvanceOptions = {}): Promise<JobOutcome> {
  // Their payloads, and the payloads a digest of the run collected by reference (db/payloads.ts).
  const jobs = await withDigestEvents(
    store,
    await withPayloads(
      store,
      options.jobs ??
        (await store.kysely
          .selectFrom('jobs')
          .selectAll()
          .where('notification_id', '=', notificationId)
          .orderBy('step_index')
          .execute()),
    ),
  );
  let ctx: RunContext | undefined;
  let failed = false;
  for (const [index, job] of jobs.entries()) {
    if (PASSED.has(job.status)) {
      failed ||= job.status === 'failed';
      continue;
    }
    if (ENDED.has(job.status)) return 'failed';
    const mine = job.status === 'queued' && options.worker !== undefined && job.locked_by === options.worker;
    if (job.status !== 'pending' && !mine) {
      // Resuming a run that had begun a wait before its process died: the rest holds no lease.
      if (job.status === 'delayed' && options.worker !== undefined) await releaseRest(store, job);
      return 'waiting';
    }
    // Let the event loop serve other requests between two steps: a large trigger writes many.
    if (ctx) await yieldToLoop(store);
    ctx ??= await runContext(store, job, options);
    ctx.digest = digestBefore(jobs, index);
    let outcome: JobOutcome;
    try {
      outcome = await runJob(store, job, ctx);
    } catch (err) {
      // Canceled (endpoint 18) or taken by another process while it ran: its writes were rolled back.
      if (err instanceof JobMovedError) return 'waiting';
      outcome = await failJob(store, job, ctx, err);
    }
    crashPoint(`after-step-${job.step_index}`);
    if (outcome === 'waiting') {
      // A wait began: the steps after it hold no lease until it ends (the scheduler hands them one).
      if (job.status === 'delayed') await releaseRest(store, job);
      return 'waiting';
    }
    failed ||= outcome === 'failed';
  }
  return failed ? 'failed' : 'completed';
}

/** Ends the leases of the pending jobs after `job` in its run. */
async function releaseRest(store: Store, job: JobRow): Promise<void> {
  await store.kysely
    .updateTable('jobs')
    .set({ locked_by: null, locked_until: null })
    .where('notification_id', '=', job.notification_id)
    .where('step_index', '>', job.step_index)
    .where('status', '=', 'pending')
    .execute();
}

/** A handler threw: the job fails with the reason in its execution details, and the run goes on. */
async function failJob(store: Store, job: JobRow, ctx: RunContext, err: unknown): Promise<JobOutcome> {
  console.error(`job ${job.id} (${job.type}) failed:`, err);
  try {
    await finishJob(store, job, 'failed', executionDetail(ctx.now, 'Failed', `Internal error: ${(err as Error).message ?? String(err)}`), ctx.now);
  } catch (again) {
    if (again instanceof JobMovedError) return 'waiting';
    throw again;
  }
  return 'failed';
}

async function runContext(store: Store, job: JobRow, options: AdvanceOptions): Promise<RunContext> {
  const workflow =
    options.workflow ??
    (await store.kysely.selectFrom('workflows').selectAll().where('id', '=', job.template_id).executeTakeFirst());
  const subscriber =
    options.subscriber ??
    (await store.kysely.selectFrom('subscribers').selectAll().where('id', '=', job.subscriber_id).executeTakeFirstOrThrow());
  return { workflow, subscriber, now: options.now ?? new Date() };
}
