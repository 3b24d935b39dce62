import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import { Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../db/index.ts';
import { engineRegistry } from '../engine/metrics.ts';

// Metrics in Prometheus text (GET /metrics, routes/health.ts). What an app serves (request
// durations, open connections, jobs) is registered per app here; what the
// engine counts wherever it runs is one set per process (engine/metrics.ts), served beside them.

export interface AppMetrics {
  /** Observes one answered request. */
  observe(method: string, route: string, status: number, seconds: number): void;
  /** The Prometheus text of every metric, the engine's included. */
  text(): Promise<string>;
  contentType: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's metrics (plugins/metrics.ts). */
    metrics: AppMetrics;
  }
}

/** Buckets of request durations, in seconds: from a millisecond to ten seconds. */
const DURATION_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const MS_PER_SECOND = 1000;

/**
 * The metrics of one app: request durations by route, open connections, due and running jobs.
 * Needs the db plugin.
 */
const metrics: FastifyPluginAsync = async (app) => {
  const registry = new Registry();
  const durations = new Histogram({
    name: 'notif_http_request_duration_seconds',
    help: 'Time to answer a request, by method, route (the pattern, not the path) and status',
    labelNames: ['method', 'route', 'status_code'],
    buckets: DURATION_BUCKETS_S,
    registers: [registry],
  });
  new Gauge({
    name: 'notif_http_open_connections',
    help: 'Connections open to this process',
    registers: [registry],
    async collect() {
      const count = await new Promise<number>((resolve) => app.server.getConnections((err, open) => resolve(err ? 0 : open)));
      this.set(count);
    },
  });
  new Gauge({
    name: 'notif_jobs_due',
    help: 'Jobs due and not held by any process: waits that came due, runs whose process died (lease ended)',
    registers: [registry],
    async collect() {
      this.set(await countJobs(app.db, 'due'));
    },
  });
  new Gauge({
    name: 'notif_jobs_running',
    help: 'Jobs held under a live lease by some process (runs in progress, waits being ended)',
    registers: [registry],
    async collect() {
      this.set(await countJobs(app.db, 'running'));
    },
  });
  app.decorate('metrics', {
    observe: (method, route, status, seconds) => durations.observe({ method, route, status_code: String(status) }, seconds),
    text: () => Registry.merge([engineRegistry, registry]).metrics(),
    contentType: registry.contentType,
  } satisfies AppMetrics);
  app.addHook('onResponse', async (request, reply) => {
    app.metrics.observe(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / MS_PER_SECOND);
  });
};

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

export default fp(metrics, { name: 'metrics', dependencies: ['db'] });
