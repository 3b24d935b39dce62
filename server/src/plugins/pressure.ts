import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import underPressure from '@fastify/under-pressure';
import { errorBody } from '../errors.ts';

/** Limits past which the service answers 503 with `Retry-After` instead of queueing more work. */
export interface PressureConfig {
  /** Mean event loop delay, ms (default DEFAULT_MAX_EVENT_LOOP_DELAY_MS). */
  maxEventLoopDelayMs?: number;
  /** Heap in use, bytes (default none). */
  maxHeapUsedBytes?: number;
  /** Resident set size, bytes (default none). */
  maxRssBytes?: number;
  /** Seconds a client is asked to wait (default DEFAULT_RETRY_AFTER_S). */
  retryAfterS?: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** @fastify/under-pressure's per-route handler: one that returns nothing lets the request through (GET /health, /metrics). */
    pressureHandler?: () => void;
  }
}

/** The mean event loop delay past which requests get 503, when nothing else is set. */
export const DEFAULT_MAX_EVENT_LOOP_DELAY_MS = 1000;
const DEFAULT_RETRY_AFTER_S = 5;
/** How often the limits are sampled (ms). */
const SAMPLE_MS = 500;
/** Samples taken after listening before the limits apply. */
const WARM_UP_SAMPLES = 2;

/** Overload protection (@fastify/under-pressure): past a limit, requests get 503 with Retry-After and the error body. */
const pressure: FastifyPluginAsync<PressureConfig> = async (app, limits) => {
  const retryAfter = String(limits.retryAfterS ?? DEFAULT_RETRY_AFTER_S);
  // Start-up (compiling every route's schemas) blocks the event loop for a moment: measured from
  // the first full sample after listening, not from that.
  let armed = false;
  app.addHook('onListen', async () => {
    setTimeout(() => {
      armed = true;
    }, WARM_UP_SAMPLES * SAMPLE_MS).unref();
  });
  await app.register(underPressure, {
    sampleInterval: SAMPLE_MS,
    maxEventLoopDelay: limits.maxEventLoopDelayMs ?? DEFAULT_MAX_EVENT_LOOP_DELAY_MS,
    ...(limits.maxHeapUsedBytes ? { maxHeapUsedBytes: limits.maxHeapUsedBytes } : {}),
    ...(limits.maxRssBytes ? { maxRssBytes: limits.maxRssBytes } : {}),
    pressureHandler: (request, reply, type, value) => {
      if (!armed) return;
      request.log.warn({ type, value }, 'under pressure: 503');
      reply.code(503).header('Retry-After', retryAfter);
      return errorBody(503, 'Service under pressure; retry later', request.url) as never;
    },
  });
};

export default fp(pressure, { name: 'pressure' });
