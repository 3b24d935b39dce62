import { parseJson, toJson } from '../json.ts';
import { executionDetail } from './jobs.ts';
import { schedulerLateness } from './metrics.ts';
import { crashPoint, leaseMs, processWorker } from './lease.ts';
import { advance } from './run.ts';
import type { ExecutionDetail } from './types.ts';
import { claimWakes, nextWake, releaseWakes, wakeMessages } from './snooze.ts';
import { onScheduled } from './waits.ts';
import { sweepPayloads } from '../db/payloads.ts';
import { inTransaction, type Store } from '../db/store.ts';
import type { JobRow } from '../db/rows.ts';

// The persistent scheduler. Waiting jobs live in the database only: status `delayed` (a delay or a
// digest window) or `queued` (the step after a wait, handed to whoever woke the wait), with `run_at`
// (epoch ms) when due. Every process polls for due jobs and claims a batch with one statement that
// sets `locked_by`/`locked_until` (a lease); on PostgreSQL the candidates are picked with
// FOR UPDATE SKIP LOCKED, so two processes never claim one job, and SQLite runs one writer at a time.
// A claimed wait completes only if it is still `delayed` and still this process's
// (`... WHERE status = 'delayed' AND locked_by = me`), so a run canceled by endpoint 18 never goes
// on. A process that dies holding a lease leaves its jobs to be claimed again once the lease ends;
// a graceful stop hands its leases back at once. The same goes for the `pending` jobs of runs a
// trigger or a scheduler was running (lease.ts): once their lease has run out, they are claimed and
// their runs resumed, so a run never stays pending after its process died.
//
// Snoozed messages' wake-ups (message_wakes, snooze.ts) are claimed and run the same way, after
// the jobs of each round.
//
// Timing: after a round that found nothing more to do, the scheduler sleeps until the next due job
// (read from the jobs_due index), at most `pollMs` (other processes may schedule earlier jobs), and
// wakes early when this process schedules a job sooner than that.

/** The scheduler's longest sleep between two looks at the jobs table, when nothing else is set. */
export const DEFAULT_SCHEDULER_POLL_MS = 250;
/** Its shortest: a smaller poll would only keep the database busy. */
const MIN_POLL_MS = 10;
/** Jobs claimed per statement, when nothing else is set. */
const DEFAULT_BATCH = 100;
/** Jobs of a batch run at the same time, when nothing else is set. */
const DEFAULT_CONCURRENCY = 4;
/** How often a step of the stored payloads' sweep runs, when nothing else is set (0: never). */
export const DEFAULT_PAYLOAD_SWEEP_MS = 60_000;
/** After a round that claimed nothing, the least it sleeps before looking again (a job due now included). */
const IDLE_MIN_SLEEP_MS = 5;

export interface SchedulerOptions {
  /** Longest sleep between two looks at the jobs table (default DEFAULT_SCHEDULER_POLL_MS; NOTIF_SCHEDULER_POLL_MS). */
  pollMs?: number;
  /** Jobs claimed per statement (default DEFAULT_BATCH). */
  batch?: number;
  /** Jobs of a batch run at the same time (default DEFAULT_CONCURRENCY). */
  concurrency?: number;
  /** How long a claim holds before another process may take the job (default 60 s, lease.ts). */
  leaseMs?: number;
  /** This process's id in `locked_by` and in execution details. */
  worker?: string;
  /** Where unexpected errors go (default console.error). */
  onError?: (err: unknown) => void;
  /**
   * How often a step of the stored payloads' sweep runs (db/payloads.ts: payloads nothing refers
   * to are deleted; default DEFAULT_PAYLOAD_SWEEP_MS, 0 for never; NOTIF_PAYLOAD_SWEEP_MS).
   */
  sweepMs?: number;
}

const WAITING = ['delayed', 'queued'] as const;

export class Scheduler {
  readonly worker: string;
  private readonly pollMs: number;
  private readonly batch: number;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly onError: (err: unknown) => void;
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private sleepTimer: NodeJS.Timeout | undefined;
  private wakeSleeper: (() => void) | undefined;
  private sleepingUntil = 0;
  private unlisten: (() => void) | undefined;
  private readonly sweepMs: number;
  private nextSweep = 0;
  private sweeping: Promise<unknown> | undefined;
  /** The last payload id the sweep looked at; undefined: it starts from the first. */
  private swept: string | undefined;
  /** Jobs this process has run (woken waits and queued steps), for logs and tests. */
  fired = 0;

  constructor(
    private readonly store: Store,
    options: SchedulerOptions = {},
  ) {
    this.pollMs = Math.max(MIN_POLL_MS, options.pollMs ?? DEFAULT_SCHEDULER_POLL_MS);
    this.batch = options.batch ?? DEFAULT_BATCH;
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.leaseMs = options.leaseMs ?? leaseMs();
    this.worker = options.worker ?? processWorker;
    this.onError = options.onError ?? ((err) => console.error('scheduler:', err));
    this.sweepMs = options.sweepMs ?? DEFAULT_PAYLOAD_SWEEP_MS;
    this.nextSweep = Date.now() + this.sweepMs;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unlisten = onScheduled((runAt) => {
      // A job of this process is due before the current sleep ends: wake up for it.
      if (runAt < this.sleepingUntil) this.wake();
    });
    this.loopDone = this.loop();
  }

  /** Stops polling, waits for the jobs in hand, and hands back the leases this process still holds. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.unlisten?.();
    this.wake();
    await this.loopDone;
    await this.sweeping;
    try {
      await this.store.kysely
        .updateTable('jobs')
        .set({ locked_by: null, locked_until: null })
        .where('locked_by', '=', this.worker)
        .where('status', 'in', WAITING)
        .execute();
      await releaseWakes(this.store, this.worker);
    } catch (err) {
      this.onError(err);
    }
  }

  private wake() {
    this.wakeSleeper?.();
  }

  private sleep(ms: number): Promise<void> {
    this.sleepingUntil = Date.now() + ms;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(this.sleepTimer);
        this.wakeSleeper = undefined;
        this.sleepingUntil = 0;
        resolve();
      };
      this.wakeSleeper = done;
      this.sleepTimer = setTimeout(done, ms);
    });
  }

  private async loop(): Promise<void> {
    while (this.running) {
      let wait = this.pollMs;
      try {
        const claimed = await this.runDue();
        if (!this.running) break;
        // (Beside the jobs, not before them.)
        if (this.sweepMs > 0 && !this.sweeping && Date.now() >= this.nextSweep) {
          this.sweeping = this.sweep()
            .catch(this.onError)
            .finally(() => {
              this.sweeping = undefined;
            });
        }
        if (claimed >= this.batch) continue;
        const next = await this.nextDue();
        if (next !== undefined) wait = Math.min(this.pollMs, Math.max(claimed === 0 ? IDLE_MIN_SLEEP_MS : 0, next - Date.now()));
      } catch (err) {
        this.onError(err);
      }
      if (this.running && wait > 0) await this.sleep(wait);
    }
  }

  /** One step of the stored payloads' sweep, going on from where the last left off; how many it deleted. */
  async sweep(): Promise<number> {
    this.nextSweep = Date.now() + this.sweepMs;
    const step = await sweepPayloads(this.store, this.swept);
    this.swept = step.last;
    return step.deleted;
  }

  /** Runs what is due: a batch of jobs, then a batch of snoozed messages' wake-ups; the larger number claimed. */
  async runDue(now = Date.now()): Promise<number> {
    const jobs = await this.runDueJobs(now);
    const wakes = await claimWakes(this.store, this.worker, now, this.batch, this.leaseMs);
    if (wakes.length > 0) this.fired += await wakeMessages(this.store, wakes, this.worker, new Date());
    return Math.max(jobs, wakes.length);
  }

  /**
   * Claims the due jobs (one batch) and runs them; the number claimed. The waits of the batch end in
   * one transaction, and what the runs read (their jobs, subscribers, workflows) is read once for
   * the batch: a burst of due jobs costs a few statements per job.
   */
  private async runDueJobs(now: number): Promise<number> {
    const claimed = await this.claim(now);
    if (claimed.length === 0) return 0;
    crashPoint('after-claim');
    const firedAt = new Date();
    const ids = [...(await this.endWaits(claimed, firedAt))];
    crashPoint('after-wait');
    if (ids.length === 0) return claimed.length;
    const k = this.store.kysely;
    const jobs = await k.selectFrom('jobs').selectAll().where('notification_id', 'in', ids).orderBy('notification_id').orderBy('step_index').execute();
    const runs = new Map<string, JobRow[]>();
    for (const job of jobs) {
      const list = runs.get(job.notification_id) ?? [];
      list.push(job);
      runs.set(job.notification_id, list);
    }
    const first = (id: string) => runs.get(id)?.[0];
    const isId = (value: string | undefined): value is string => !!value;
    const subscriberIds = [...new Set(ids.map((id) => first(id)?.subscriber_id).filter(isId))];
    const workflowIds = [...new Set(ids.map((id) => first(id)?.template_id).filter(isId))];
    const subscriberRows = await k.selectFrom('subscribers').selectAll().where('id', 'in', subscriberIds).execute();
    const workflowRows = await k.selectFrom('workflows').selectAll().where('id', 'in', workflowIds).execute();
    const subscribers = new Map(subscriberRows.map((row) => [row.id, row]));
    const workflows = new Map(workflowRows.map((row) => [row.id, row]));

    // `concurrency` workers take the runs in turn.
    let next = 0;
    const worker = async () => {
      while (next < ids.length) {
        const id = ids[next]!;
        next++;
        const run = runs.get(id);
        if (!run?.length) continue;
        try {
          await advance(this.store, id, {
            worker: this.worker,
            now: firedAt,
            jobs: run,
            subscriber: subscribers.get(run[0]!.subscriber_id),
            workflow: workflows.get(run[0]!.template_id),
          });
          this.fired++;
        } catch (err) {
          this.onError(err);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, ids.length) }, worker));
    return claimed.length;
  }

  /**
   * Marks up to `batch` due, unclaimed jobs as this process's, in one statement each: waits that are
   * due first, then pending jobs whose lease ran out (their process died, lease.ts).
   */
  private async claim(now: number): Promise<JobRow[]> {
    const k = this.store.kysely;
    let due = k
      .selectFrom('jobs')
      .select('id')
      .where('status', 'in', WAITING)
      .where('run_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .orderBy('run_at')
      .limit(this.batch);
    if (this.store.dialect === 'postgres') due = due.forUpdate().skipLocked();
    const waits = await k
      .updateTable('jobs')
      .set({ locked_by: this.worker, locked_until: now + this.leaseMs })
      .where('id', 'in', due)
      .where('status', 'in', WAITING)
      .returningAll()
      .execute();
    if (waits.length >= this.batch) return waits;
    let abandoned = k
      .selectFrom('jobs')
      .select('id')
      .where('status', '=', 'pending')
      .where('locked_until', '<', now)
      .orderBy('locked_until')
      .limit(this.batch - waits.length);
    if (this.store.dialect === 'postgres') abandoned = abandoned.forUpdate().skipLocked();
    const pending = await k
      .updateTable('jobs')
      .set({ locked_by: this.worker, locked_until: now + this.leaseMs })
      .where('id', 'in', abandoned)
      .where('status', '=', 'pending')
      .where('locked_until', '<', now)
      .returningAll()
      .execute();
    return [...waits, ...pending];
  }

  /** When the next unclaimed waiting job is due (epoch ms), if there is one. */
  private async nextDue(): Promise<number | undefined> {
    const now = Date.now();
    let next: number | undefined;
    const lease = await this.store.kysely
      .selectFrom('jobs')
      .select('locked_until')
      .where('status', '=', 'pending')
      .where('locked_until', 'is not', null)
      .orderBy('locked_until')
      .limit(1)
      .executeTakeFirst();
    if (lease?.locked_until != null) next = Number(lease.locked_until) + 1;
    for (const status of WAITING) {
      const row = await this.store.kysely
        .selectFrom('jobs')
        .select('run_at')
        .where('status', '=', status)
        .where('run_at', 'is not', null)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
        .orderBy('run_at')
        .limit(1)
        .executeTakeFirst();
      if (row?.run_at != null && (next === undefined || row.run_at < next)) next = Number(row.run_at);
    }
    const wake = await nextWake(this.store, now);
    if (wake !== undefined && (next === undefined || wake < next)) next = wake;
    return next;
  }

  /**
   * Ends the claimed waits, in one transaction: a `delayed` job completes, only if it is still
   * delayed and still this process's, and the step after it becomes `queued` under this process's
   * lease, with the steps after it. A `queued` job (left by a process that died) and a `pending` one
   * (its lease ran out) are run as they are. Returns the runs to go on with.
   */
  private async endWaits(claimed: JobRow[], now: Date): Promise<Set<string>> {
    const iso = now.toISOString();
    return inTransaction(this.store, async (trx) => {
      const go = new Set<string>();
      for (const job of claimed) {
        if (job.status === 'queued' || job.status === 'pending') {
          go.add(job.notification_id);
          continue;
        }
        const details = parseJson<ExecutionDetail[]>(job.execution_details, []);
        const due = job.run_at === null ? null : new Date(Number(job.run_at)).toISOString();
        const events = job.type === 'digest' ? (parseJson<{ events?: unknown[] }>(job.digest, {}).events ?? []).length : 0;
        details.push(
          executionDetail(now, 'Success', job.type === 'digest' ? `Digest window ended with ${events} event(s)` : `Delay ended (due ${due})`, {
            raw: toJson({
              worker: this.worker,
              dueAt: due,
              firedAt: iso,
              lateMs: job.run_at === null ? null : now.getTime() - Number(job.run_at),
            }),
          }),
        );
        const done = await trx.kysely
          .updateTable('jobs')
          .set({ status: 'completed', execution_details: toJson(details), locked_by: null, locked_until: null, updated_at: iso })
          .where('id', '=', job.id)
          .where('status', '=', 'delayed')
          .where('locked_by', '=', this.worker)
          .executeTakeFirst();
        if (Number(done.numUpdatedRows) === 0) continue;
        if (job.run_at !== null) schedulerLateness.observe(Math.max(0, now.getTime() - Number(job.run_at)) / 1000);
        // A run's jobs have step_index 0..n-1 (planRun), so the next step is step_index + 1.
        await trx.kysely
          .updateTable('jobs')
          .set({ status: 'queued', run_at: now.getTime(), locked_by: this.worker, locked_until: now.getTime() + this.leaseMs, updated_at: iso })
          .where('notification_id', '=', job.notification_id)
          .where('step_index', '=', job.step_index + 1)
          .where('status', '=', 'pending')
          .execute();
        await trx.kysely
          .updateTable('jobs')
          .set({ locked_by: this.worker, locked_until: now.getTime() + this.leaseMs })
          .where('notification_id', '=', job.notification_id)
          .where('step_index', '>', job.step_index + 1)
          .where('status', '=', 'pending')
          .execute();
        go.add(job.notification_id);
      }
      return go;
    });
  }
}
