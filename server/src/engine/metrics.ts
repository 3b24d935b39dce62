import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

// What the engine counts wherever it runs (webhook failures, the scheduler's lateness): one set per
// process, whatever the number of apps. The metrics plugin (plugins/metrics.ts) serves them with
// each app's own.

/** The engine's counters, and the process's own figures (CPU, memory, event loop). */
export const engineRegistry = new Registry();
collectDefaultMetrics({ register: engineRegistry, prefix: 'notif_' });

/** A chat webhook that answered outside 2xx, or did not answer (channels.ts counts them). */
export const webhookFailures = new Counter({
  name: 'notif_webhook_failures_total',
  help: 'Outbound webhook deliveries that failed (no answer, or an answer outside 2xx)',
  registers: [engineRegistry],
});

/** Buckets of the scheduler's lateness, in seconds: from a few milliseconds to a minute. */
const LATENESS_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** How late the scheduler ran a wait that came due (scheduler.ts observes each one). */
export const schedulerLateness = new Histogram({
  name: 'notif_scheduler_lateness_seconds',
  help: 'Time from a delay or digest window coming due to the scheduler ending it',
  buckets: LATENESS_BUCKETS_S,
  registers: [engineRegistry],
});
