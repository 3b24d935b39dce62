import type { Server } from 'node:http';
import { sql } from 'kysely';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from './db/index.ts';
import type { AnswerCache } from './answer-cache.ts';

// Metrics in Prometheus text (GET /metrics, app.ts). What the engine counts wherever it runs
// (webhook failures, the scheduler's lateness) is one set per process, here; what an app serves
// (request durations, open connections, jobs) is registered per app by appMetrics.

/** The engine's counters: one per process, whatever the number of apps. */
export const engineRegistry = new Registry();
collectDefaultMetrics({ register: engineRegistry, prefix: 'notif_' });

/** A chat webhook that answered outside 2xx, or did not answer (engine/channels.ts counts them). */
export const webhookFailures = new Counter({
  name: 'notif_webhook_failures_total',
  help: 'Outbound webhook deliveries that failed (no answer, or an answer outside 2xx)',
  registers: [engineRegistry],
});

/** How late the scheduler ran a wait that came due (engine/scheduler.ts observes each one). */
export const schedulerLateness = new Histogram({
  name: 'notif_scheduler_lateness_seconds',
  help: 'Time from a delay or digest window coming due to the scheduler ending it',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [engineRegistry],
});

export interface AppMetrics {
  /** Observes one answered request. */
  observe(method: string, route: string, status: number, seconds: number): void;
  /** The Prometheus text of every metric, the engine's included. */
  text(): Promise<string>;
  contentType: string;
}

/** The metrics of one app: request durations by route, open connections, due and running jobs, the feed's answer cache. */
export function appMetrics(db: Db, server: () => Server, feedCache?: AnswerCache): AppMetrics {
  const registry = new Registry();
  const durations = new Histogram({
    name: 'notif_http_request_duration_seconds',
    help: 'Time to answer a request, by method, route (the pattern, not the path) and status',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  new Gauge({
    name: 'notif_http_open_connections',
    help: 'Connections open to this process',
    registers: [registry],
    async collect() {
      const count = await new Promise<number>((resolve) => server().getConnections((err, n) => resolve(err ? 0 : n)));
      this.set(count);
    },
  });
  new Gauge({
    name: 'notif_jobs_due',
    help: 'Jobs due and not held by any process: waits that came due, runs whose process died (lease ended)',
    registers: [registry],
    async collect() {
      this.set(await countJobs(db, 'due'));
    },
  });
  new Gauge({
    name: 'notif_jobs_running',
    help: 'Jobs held under a live lease by some process (runs in progress, waits being ended)',
    registers: [registry],
    async collect() {
      this.set(await countJobs(db, 'running'));
    },
  });
  if (feedCache) {
    // Counted by the cache itself; these read its figures when scraped.
    const figure = (name: string, help: string, read: () => number, type: typeof Gauge | typeof Counter = Gauge) =>
      new type({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    figure('notif_feed_cache_hits_total', 'Feed requests answered from the answer cache', () => feedCache.hits, Counter);
    figure('notif_feed_cache_misses_total', 'Feed requests the answer cache could not answer (read from the database)', () => feedCache.misses, Counter);
    figure('notif_feed_cache_bytes', 'Bytes the feed answer cache holds (NOTIF_FEED_CACHE_MB bounds them)', () => feedCache.stats.bytes);
  }
  const both = () => Registry.merge([engineRegistry, registry]);
  return {
    observe: (method, route, status, seconds) => durations.observe({ method, route, status_code: String(status) }, seconds),
    text: () => both().metrics(),
    contentType: registry.contentType,
  };
}

async function countJobs(db: Db, which: 'due' | 'running'): Promise<number> {
  const now = Date.now();
  const row =
    which === 'due'
      ? await sql<{ n: number }>`select count(*) as n from jobs
          where (status in ('delayed', 'queued') and run_at <= ${now} and (locked_until is null or locked_until < ${now}))
             or (status = 'pending' and locked_until < ${now})`.execute(db.kysely)
      : await sql<{ n: number }>`select count(*) as n from jobs
          where status in ('pending', 'delayed', 'queued') and locked_until >= ${now}`.execute(db.kysely);
  return Number(row.rows[0]?.n ?? 0);
}
