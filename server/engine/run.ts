import type { SubscriberRow, WorkflowRow } from '../views.ts';
import { inAppStep } from './in-app.ts';
import type { JobOutcome, JobRow, RunContext, StepHandler, StepType, Store } from './types.ts';

export { executionDetail, finishJob } from './jobs.ts';

/**
 * The handler of each step type. A type without one leaves its job `pending` and the run stops
 * there: the scheduler (delay, digest) and the other channels (email, sms, chat, push) add theirs.
 */
export const stepHandlers: Partial<Record<StepType, StepHandler>> = {
  in_app: inAppStep,
};

/** Job statuses after which the run goes on with the next step. */
const PASSED = new Set(['completed', 'skipped', 'merged']);
/** Job statuses that end the run for good. */
const ENDED = new Set(['failed', 'canceled']);

/** Runs one job with the handler of its step type (see `stepHandlers`). */
export async function runJob(store: Store, job: JobRow, ctx: RunContext): Promise<JobOutcome> {
  const handler = stepHandlers[job.type as StepType];
  if (!handler) return 'waiting';
  return handler(store, job, ctx);
}

export interface AdvanceOptions {
  now?: Date;
  /** The notification's jobs when the caller has them (trigger does), to save a query. */
  jobs?: JobRow[];
  workflow?: WorkflowRow;
  subscriber?: SubscriberRow;
}

/**
 * Runs a notification's jobs in step order from the first one not yet passed, until one waits or
 * fails. Call it again to resume a run once a waiting job has completed (a due delay, say).
 */
export async function advance(store: Store, notificationId: string, options: AdvanceOptions = {}): Promise<JobOutcome> {
  const jobs =
    options.jobs ??
    (await store.kysely
      .selectFrom('jobs')
      .selectAll()
      .where('notification_id', '=', notificationId)
      .orderBy('step_index')
      .execute());
  let ctx: RunContext | undefined;
  for (const job of jobs) {
    if (PASSED.has(job.status)) continue;
    if (ENDED.has(job.status)) return 'failed';
    if (job.status !== 'pending') return 'waiting';
    ctx ??= await runContext(store, job, options);
    const outcome = await runJob(store, job, ctx);
    if (outcome !== 'completed') return outcome;
  }
  return 'completed';
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
