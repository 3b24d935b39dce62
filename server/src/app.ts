import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Db } from './db/index.ts';
import answers from './plugins/answers.ts';
import auth from './plugins/auth.ts';
import compression from './plugins/compression.ts';
import connections, { CONNECTIONS_CHECK_MS, DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS } from './plugins/connections.ts';
import cors from './plugins/cors.ts';
import database from './plugins/db.ts';
import errors, { answerClientError, answerFrameworkError } from './plugins/errors.ts';
import faults from './plugins/faults.ts';
import idempotency, { type IdempotencyOptions } from './plugins/idempotency.ts';
import inputGuard from './plugins/input-guard.ts';
import jsonBody from './plugins/json-body.ts';
import metrics from './plugins/metrics.ts';
import pressure, { type PressureConfig } from './plugins/pressure.ts';
import rateLimit, { type RateLimitConfig } from './plugins/rate-limit.ts';
import validation from './plugins/validation.ts';
import events from './routes/events.ts';
import family from './routes/family.ts';
import feed from './routes/feed.ts';
import health from './routes/health.ts';
import integrations from './routes/integrations.ts';
import messages from './routes/messages.ts';
import notifications from './routes/notifications.ts';
import preferences from './routes/preferences.ts';
import stream, { type StreamOptions } from './routes/stream.ts';
import subscribers from './routes/subscribers.ts';
import workflows from './routes/workflows.ts';
import topics from './routes/topics.ts';

export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface AppConfig {
  db: Db;
  /**
   * Fastify's logger (pino): JSON lines on stdout, one per request with its id, never a header or a
   * body. true for level info, or a level name; off when absent (tests).
   */
  logger?: boolean | string;
  /**
   * GET /metrics answers only with `Authorization: Bearer <metricsToken>`; without a token it is not
   * served at all, so metrics are never public by accident.
   */
  metricsToken?: string;
  /** Overload protection: past these limits requests get 503 with Retry-After (none when absent). */
  pressure?: PressureConfig;
  /** Test-only fault injection (plugins/faults.ts). */
  faults?: boolean;
  /** Rate limits (plugins/rate-limit.ts); none when absent. */
  rateLimit?: RateLimitConfig;
  /**
   * Longest wait, in ms, for a request's headers and, separately, for the whole request (headers
   * and body) to arrive; past it the connection gets 408 and is closed. Default 10 s and 15 s.
   * Only requests are timed: an answer may take as long as it needs (a live stream, say).
   */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** The streams' caps (inbox/stream-slots.ts) and heartbeat (inbox/stream.ts); each has its default. */
  streams?: StreamOptions;
  /** How long a request may hold its idempotency key unanswered before it counts as abandoned (plugins/idempotency.ts). */
  idempotencyInFlightMs?: number;
  /** The caps on idempotency answers kept, per subscriber and per organization (plugins/idempotency.ts); each has its default. */
  idempotencyCaps?: Omit<IdempotencyOptions, 'inFlightMs'>;
}

/** The largest request body: 1 MB. */
const BODY_LIMIT_BYTES = 1024 * 1024;
/** Path parameters up to this long reach their schema (subscriberId is at most 255, and answers 422 past it). */
const MAX_PARAM_LENGTH = 1024;

/**
 * Builds the HTTP app from a config; it holds no global state, so tests can build several. Every
 * cross-cutting part is a plugin (plugins/), every resource's routes another (routes/); the order
 * of registration is the order their hooks run in.
 */
export async function buildApp(config: AppConfig): Promise<App> {
  const requestTimeout = config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const app = Fastify({
    logger: config.logger
      ? {
          level: typeof config.logger === 'string' ? config.logger : 'info',
          // Requests are logged as method, url, host and address; should a header ever be logged, never these.
          redact: ['req.headers.authorization', 'req.headers["x-subscriber-hash"]', 'req.headers.cookie'],
        }
      : false,
    // A request id in every log line of the request (plugins/connections.ts keeps one a load
    // balancer sent when it looks like an id).
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    bodyLimit: BODY_LIMIT_BYTES,
    // A client that sends its headers or body slowly, or stops half-way, is cut off in seconds.
    // Node checks these every `connectionsCheckingInterval`, so that is kept short too. No idle
    // socket timeout (connectionTimeout): it would cut long answers that are quiet a while.
    requestTimeout,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    http: {
      headersTimeout: Math.min(config.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, requestTimeout),
      connectionsCheckingInterval: Math.min(CONNECTIONS_CHECK_MS, requestTimeout),
    },
    // Path parameters up to 255 characters (subscriberId) must reach their schema, which answers 422.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Errors raised before any route (the router's) or before there is a request (Node's HTTP
    // parser) get decisions.md's error body too.
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();

  await app.register(jsonBody);
  await app.register(connections);
  await app.register(database, { db: config.db });
  await app.register(answers);
  await app.register(metrics);
  if (config.pressure) await app.register(pressure, config.pressure);
  await app.register(validation);
  await app.register(cors);
  if (config.rateLimit) await app.register(rateLimit, config.rateLimit);
  await app.register(auth);
  if (config.faults) await app.register(faults);
  await app.register(inputGuard);
  await app.register(idempotency, { inFlightMs: config.idempotencyInFlightMs, ...config.idempotencyCaps });
  // Last of the onSend hooks, so the others see the answer as written.
  await app.register(compression);
  await app.register(errors, { logging: Boolean(config.logger) });

  await app.register(health, { metricsToken: config.metricsToken });
  await app.register(subscribers);
  await app.register(preferences);
  await app.register(integrations);
  await app.register(messages);
  await app.register(feed);
  await app.register(family);
  await app.register(workflows);
  await app.register(topics);
  await app.register(events);
  await app.register(notifications);
  await app.register(stream, config.streams ?? {});

  return app;
}
