import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorBody } from '../errors.ts';

// The operations routes: liveness, readiness and metrics. None needs an API key.

export interface HealthOptions {
  /** GET /metrics answers only with `Authorization: Bearer <metricsToken>`; not served without one. */
  metricsToken?: string;
}

/** Answers even under pressure (plugins/pressure.ts): a load balancer's liveness probe, the metrics scraper. */
const EVEN_UNDER_PRESSURE = { config: { pressureHandler: () => undefined } };
/** Seconds a load balancer is asked to wait before asking a process that is not ready again. */
const NOT_READY_RETRY_AFTER_S = '5';

const health: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { metricsToken }) => {
  // Alive: the process answers (a liveness probe; no database involved, answers under pressure too).
  app.get('/health', EVEN_UNDER_PRESSURE, async () => ({ ok: true }));

  // Ready: the database answers and has every migration this version needs (a load balancer's
  // readiness probe: 503 takes the process out of rotation).
  app.get('/ready', async (request, reply) => {
    const reason = await app.db.unready();
    if (!reason) return { ok: true };
    request.log.warn({ reason }, 'not ready');
    // Unauthenticated: what kind of trouble only (a database error names hosts and users); the log has the rest.
    const kind = reason.split(':')[0];
    return reply.code(503).header('Retry-After', NOT_READY_RETRY_AFTER_S).send(errorBody(503, `Not ready: ${kind}`, request.url));
  });

  app.get('/metrics', EVEN_UNDER_PRESSURE, async (request, reply) => {
    if (!metricsToken) return reply.code(404).send(errorBody(404, 'Route GET /metrics not found (serve --metrics-token to expose it)', request.url));
    if (!sameSecret(request.headers.authorization ?? '', `Bearer ${metricsToken}`)) {
      return reply.code(401).send(errorBody(401, 'Metrics need "Authorization: Bearer <metrics token>"', request.url));
    }
    return reply.type(app.metrics.contentType).send(await app.metrics.text());
  });
};

/** Compares two strings in time that does not depend on where they differ. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export default health;
