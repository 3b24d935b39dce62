import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { parseJson, toJson } from '../json.ts';
import { executionDetail } from './jobs.ts';
import { advance } from './run.ts';
import { inTransaction, type ExecutionDetail, type JobRow, type Store } from './types.ts';
import { onScheduled } from './waits.ts';

// The persistent scheduler. Waiting jobs live in the database only: status `delayed` (a delay or a
// digest window) or `queued` (the step after a wait, handed to whoever woke the wait), with `run_at`
// (epoch ms) when due. Every process polls for due jobs and claims a batch with one statement that
// sets `locked_by`/`locked_until` (a lease); on PostgreSQL the candidates are picked with
// FOR UPDATE SKIP LOCKED, so two processes never claim one job, and SQLite runs one writer at a time.
// A claimed wait completes only if it is still `delayed` and still this process's
// (`... WHERE status = 'delayed' AND locked_by = me`), so a run canceled by endpoint 18 never goes
// on. A process that dies holding a lease leaves its jobs to be claimed again once the lease ends;
// a graceful stop hands its leases back at once.
//
// Timing: after a round that found nothing more to do, the scheduler sleeps until the next due job
// (read from the jobs_due index), at most `pollMs` (other processes may schedule earlier jobs), and
// wakes early when this process schedules a job sooner than that.

export interface SchedulerOptions {
  /** Longest sleep between two looks at the jobs table (default 250 ms; env NOTIF_SCHEDULER_POLL_MS). */
  pollMs?: number;
  /** Jobs claimed per statement (default 50). */
  batch?: number;
  /** Jobs of a batch run at the same time (default 4). */
  concurrency?: number;
  /** How long a claim holds before another process may take the job (default 60 s). */
  leaseMs?: number;
  /** This process's id in `locked_by` and in execution details. */
  worker?: string;
  /** Where unexpected errors go (default console.error). */
  onError?: (err: unknown) => void;
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
  /** Jobs this process has run (woken waits and queued steps), for logs and tests. */
  fired = 0;

  constructor(
    private readonly store: Store,
    options: SchedulerOptions = {},
  ) {
    this.pollMs = Math.max(10, options.pollMs ?? 250);
    this.batch = options.batch ?? 50;
    this.concurrency = options.concurrency ?? 4;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.worker = options.worker ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.onError = options.onError ?? ((err) => console.error('scheduler:', err));
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
    try {
      await this.store.kysely
        .updateTable('jobs')
        .set({ locked_by: null, locked_until: null })
        .where('locked_by', '=', this.worker)
        .where('status', 'in', WAITING)
        .execute();
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
        if (claimed >= this.batch) continue;
        const next = await this.nextDue();
        if (next !== undefined) wait = Math.min(this.pollMs, Math.max(claimed === 0 ? 5 : 0, next - Date.now()));
      } catch (err) {
        this.onError(err);
      }
      if (this.running && wait > 0) await this.sleep(wait);
    }
  }

  /** Claims the due jobs (one batch) and runs them; the number claimed. */
  async runDue(now = Date.now()): Promise<number> {
    const jobs = await this.claim(now);
    let i = 0;
    const worker = async () => {
      while (i < jobs.length) {
        const job = jobs[i++]!;
        try {
          await this.fire(job);
        } catch (err) {
          this.onError(err);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, jobs.length) }, worker));
    return jobs.length;
  }

  /** Marks up to `batch` due, unclaimed jobs as this process's, in one statement. */
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
    return k
      .updateTable('jobs')
      .set({ locked_by: this.worker, locked_until: now + this.leaseMs })
      .where('id', 'in', due)
      .where('status', 'in', WAITING)
      .returningAll()
      .execute();
  }

  /** When the next unclaimed waiting job is due (epoch ms), if there is one. */
  private async nextDue(): Promise<number | undefined> {
    const now = Date.now();
    let next: number | undefined;
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
    return next;
  }

  /**
   * Runs one claimed job. A `delayed` one (its wait is over) completes, and the step after it becomes
   * `queued` under this process's lock, in one transaction; then the run goes on from there. A
   * `queued` one (left by a process that died) just runs.
   */
  private async fire(claimed: JobRow): Promise<void> {
    const now = new Date();
    const go = await inTransaction(this.store, async (trx) => {
      const job = await trx.kysely.selectFrom('jobs').selectAll().where('id', '=', claimed.id).executeTakeFirst();
      if (!job || job.locked_by !== this.worker) return false;
      if (job.status === 'queued') return true;
      if (job.status !== 'delayed') return false;
      const details = parseJson<ExecutionDetail[]>(job.execution_details, []);
      const due = job.run_at === null ? null : new Date(Number(job.run_at)).toISOString();
      const events = job.type === 'digest' ? (parseJson<{ events?: unknown[] }>(job.digest, {}).events ?? []).length : 0;
      details.push(
        executionDetail(
          now,
          'Success',
          job.type === 'digest' ? `Digest window ended with ${events} event(s)` : `Delay ended (due ${due})`,
          { raw: toJson({ worker: this.worker, dueAt: due, firedAt: now.toISOString(), lateMs: job.run_at === null ? null : now.getTime() - Number(job.run_at) }) },
        ),
      );
      const done = await trx.kysely
        .updateTable('jobs')
        .set({ status: 'completed', execution_details: toJson(details), locked_by: null, locked_until: null, updated_at: now.toISOString() })
        .where('id', '=', job.id)
        .where('status', '=', 'delayed')
        .where('locked_by', '=', this.worker)
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) === 0) return false;
      const next = await trx.kysely
        .selectFrom('jobs')
        .select(['id', 'status'])
        .where('notification_id', '=', job.notification_id)
        .where('step_index', '>', job.step_index)
        .orderBy('step_index')
        .limit(1)
        .executeTakeFirst();
      if (next?.status === 'pending') {
        await trx.kysely
          .updateTable('jobs')
          .set({ status: 'queued', run_at: now.getTime(), locked_by: this.worker, locked_until: now.getTime() + this.leaseMs, updated_at: now.toISOString() })
          .where('id', '=', next.id)
          .where('status', '=', 'pending')
          .execute();
      }
      return true;
    });
    if (!go) return;
    this.fired++;
    await advance(this.store, claimed.notification_id, { worker: this.worker, now });
  }
}
