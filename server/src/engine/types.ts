import type { JobRow, SubscriberRow, WorkflowRow } from '../db/rows.ts';
import type { Store } from '../db/store.ts';

export const STEP_TYPES = ['in_app', 'email', 'sms', 'chat', 'push', 'delay', 'digest'] as const;
export type StepType = (typeof STEP_TYPES)[number];

/**
 * What running a job came to. `completed`: the run goes on with the next step. `waiting`: the job
 * stays as it is (pending, delayed...) and the run stops here until something resumes it
 * (`advance` again). `failed`: the job failed and the run stops.
 */
export type JobOutcome = 'completed' | 'waiting' | 'failed';

/** What a step handler may read besides the job itself. */
export interface RunContext {
  workflow: WorkflowRow | undefined;
  subscriber: SubscriberRow;
  /** The clock of this run: timestamps of everything it writes (the seed runs in the past). */
  now: Date;
  /** The subscriber's preferences, read by the first channel step of the run that needs them. */
  preferences?: Map<string, boolean>;
  /** The events of the digest step this run went through, when it went through one. */
  digest?: { events: Record<string, unknown>[] };
}

/** Runs one job of a given step type; it updates the job row itself. */
export type StepHandler = (store: Store, job: JobRow, ctx: RunContext) => Promise<JobOutcome>;

/** An execution detail, as the spec's Job.executionDetails holds them. */
export interface ExecutionDetail {
  _id: string;
  createdAt: string;
  status: string;
  detail: string;
  isRetry: boolean;
  isTest: boolean;
  providerId: string;
  raw: string;
  source: string;
}
