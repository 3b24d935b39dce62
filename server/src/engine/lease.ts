import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { engineSettings } from './settings.ts';

// Durable runs. A trigger records every job of a run (status `pending`) in one transaction, each
// under a lease of the process that will run it (`locked_by`, `locked_until`). Running a step ends
// its lease in the step's own transaction. If the process dies, the pending jobs it held keep a
// lease that runs out; every process's scheduler claims pending jobs whose lease ran out and resumes
// their runs from the first step not yet done (scheduler.ts). A pending job behind a wait (a delay,
// a digest window) holds no lease: the wait's end hands the rest of the run a new one. Steps write
// and finish in one transaction that checks the job is still pending, and an in-app message is
// unique by its job (`messages.job_key`), so a step run twice writes once.

/** This process's id in `locked_by` and in execution details. */
export const processWorker = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

/**
 * How long a process holds the jobs it is running before another may take them over (default 60 s;
 * NOTIF_RUN_LEASE_MS shortens it for the crash tests).
 */
export function leaseMs(): number {
  return engineSettings().runLeaseMs;
}

/**
 * Test-only crash points: with NOTIF_CRASH_AT naming one (or several, comma-separated) boundaries,
 * the process kills itself (SIGKILL: no handlers, no flush) the first time it reaches one.
 * Boundaries: `after-commit` (a trigger's runs recorded), `before-background` (a large trigger's
 * runs recorded and its answer on its way, none written yet), `after-step-N` (step N of a run done, N
 * from 0), `after-claim` (the scheduler claimed jobs), `after-wait` (a wait ended, the next step
 * queued).
 */
export function crashPoint(boundary: string): void {
  if (engineSettings().crashPoints.includes(boundary)) process.kill(process.pid, 'SIGKILL');
}

/**
 * Lets the event loop answer other requests (and I/O) before going on with a long piece of work. On
 * SQLite every statement runs synchronously, so a large trigger would otherwise hold the process for
 * seconds; PostgreSQL's statements wait on the network, which lets the loop turn anyway.
 */
export function yieldToLoop(store: { dialect: string }): Promise<void> | undefined {
  if (store.dialect !== 'sqlite') return undefined;
  return new Promise((resolve) => setImmediate(resolve));
}
