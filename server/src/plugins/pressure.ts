import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import underPressure, { TYPE_EVENT_LOOP_DELAY } from '@fastify/under-pressure';
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
/** The longest start-up the event loop's limit waits for: a process overloaded from its start still sheds load after it. */
const MAX_WARM_UP_MS = 10_000;

/** Overload protection (@fastify/under-pressure): past a limit, requests get 503 with Retry-After and the error body. */
const pressure: FastifyPluginAsync<PressureConfig> = async (app, limits) => {
  const retryAfter = String(limits.retryAfterS ?? DEFAULT_RETRY_AFTER_S);
  // Start-up (migrations, compiling every route's schemas) blocks the event loop for a while, the
  // longer the busier the machine: the event loop's limit applies from the first sample after
  // listening that finds the loop within it (or MAX_WARM_UP_MS after listening), not from a fixed
  // second: a loaded machine's start-up outlasted one, and the first requests were refused. (The
  // memory limits apply at once.)
  const maxEventLoopDelayMs = limits.maxEventLoopDelayMs ?? DEFAULT_MAX_EVENT_LOOP_DELAY_MS;
  let loopWarm = false;
  app.addHook('onListen', async () => {
    const listenedAt = Date.now();
    const warmUp = setInterval(() => {
      const warmedUp = app.memoryUsage().eventLoopDelay <= maxEventLoopDelayMs;
      if (!warmedUp && Date.now() - listenedAt < MAX_WARM_UP_MS) return;
      loopWarm = true;
      clearInterval(warmUp);
    }, SAMPLE_MS);
    warmUp.unref();
  });
  await app.register(underPressure, {
    sampleInterval: SAMPLE_MS,
    maxEventLoopDelay: maxEventLoopDelayMs,
    ...(limits.maxHeapUsedBytes ? { maxHeapUsedBytes: limits.maxHeapUsedBytes } : {}),
    ...(limits.maxRssBytes ? { maxRssBytes: limits.maxRssBytes } : {}),
    pressureHandler: (request, reply, type, value) => {
      if (type === TYPE_EVENT_LOOP_DELAY && !loopWarm) return;
      request.log.warn({ type, value }, 'under pressure: 503');
      reply.code(503).header('Retry-After', retryAfter);
      return errorBody(503, 'Service under pressure; retry later', request.url) as never;
    },
  });
};

export default fp(pressure, { name: 'pressure' });
