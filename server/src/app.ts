import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type RawServerDefault } from 'fastify';
import cors from '@fastify/cors';
import underPressure from '@fastify/under-pressure';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { databaseUnavailable, type Db } from './db/index.ts';
import { KeyResolver, type Tenant } from './auth.ts';
import { errorBody, errorMessage, HttpError, type FieldErrors } from './errors.ts';
import { compression } from './compress.ts';
import { AnswerCache } from './answer-cache.ts';
import { idempotency } from './idempotency.ts';
import { faults, InjectedFault } from './faults.ts';
import { rateLimit, type RateLimitConfig } from './ratelimit.ts';
import { guardInput } from './input-guard.ts';
import { appMetrics } from './metrics.ts';
import { subscriberRoutes } from './routes/subscribers.ts';
import { preferenceRoutes } from './routes/preferences.ts';
import { integrationRoutes } from './routes/integrations.ts';
import { messageRoutes } from './routes/messages.ts';
import { feedRoutes } from './routes/feed.ts';
import { unseenCounter } from './db/read.ts';
import { workflowRoutes } from './routes/workflows.ts';
import { eventRoutes } from './routes/events.ts';
import { notificationRoutes } from './routes/notifications.ts';
import { streamRoutes } from './routes/stream.ts';
import type { StreamLimits } from './stream-limits.ts';

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
  /** Test-only fault injection (server/faults.ts). */
  faults?: boolean;
  /** Rate limits (server/ratelimit.ts); none when absent. */
  rateLimit?: RateLimitConfig;
  /**
   * Longest wait, in ms, for a request's headers and, separately, for the whole request (headers
   * and body) to arrive; past it the connection gets 408 and is closed. Default 10 s and 15 s.
   * Only requests are timed: an answer may take as long as it needs (a live stream, say).
   */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /**
   * Bytes of finished feed answers kept (server/src/answer-cache.ts), default 32 MB; 0 keeps none.
   */
  feedCacheBytes?: number;
  /** The streams' caps (stream-limits.ts) and heartbeat (routes/stream.ts); each has its default. */
  streams?: StreamOptions;
  /** How long a request may hold its idempotency key unanswered before it counts as abandoned (idempotency.ts). */
  idempotencyInFlightMs?: number;
}

export interface StreamOptions extends StreamLimits {
  /** How often an idle stream sends a comment line (default DEFAULT_STREAM_HEARTBEAT_MS). */
  heartbeatMs?: number;
}

/** The feed answer cache's default size. */
export const FEED_CACHE_BYTES = 32 * 1024 * 1024;

/** How long a client may take to send a request's headers, and the whole request, when nothing else is set. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

/** The mean event loop delay past which requests get 503, when nothing else is set. */
export const DEFAULT_MAX_EVENT_LOOP_DELAY_MS = 1000;

/** Keep-alive connections idle longer than this are closed: past a load balancer's usual 60 s. */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** Limits past which the service answers 503 with `Retry-After` instead of queueing more work. */
export interface PressureConfig {
  /** Mean event loop delay, ms (default DEFAULT_MAX_EVENT_LOOP_DELAY_MS). */
  maxEventLoopDelayMs?: number;
  /** Heap in use, bytes (default none). */
  maxHeapUsedBytes?: number;
  /** Resident set size, bytes (default none). */
  maxRssBytes?: number;
  /** Seconds a client is asked to wait (default 5). */
  retryAfterS?: number;
}

/** What every route module gets: the database and the services built on it. */
export interface AppContext {
  db: Db;
  /** The feed's answers (absent: off). */
  feedCache?: AnswerCache;
  /** A subscriber's (internal id) unseen, or seen, in-app messages, capped: endpoint 13's and the streams' one reader (db/read.ts). */
  unseen: (subscriberId: string, seen: boolean, limit: number) => Promise<number>;
  streams?: StreamOptions;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook for every /v1 and /v2 request. */
    tenant: Tenant;
  }
  interface FastifyContextConfig {
    /** @fastify/under-pressure's per-route handler: one that returns nothing lets the request through. */
    pressureHandler?: () => void;
  }
}

/** How often the pressure limits are sampled (ms). */
const PRESSURE_SAMPLE_MS = 500;

/** Routes that answer even under pressure: a load balancer's liveness probe, the metrics scraper. */
const ALWAYS = { config: { pressureHandler: () => undefined } };

const API_PATH = /^\/v[12]\//;

/**
 * True when the request is for the API (/v1, /v2): judged on the path the router routes, which it
 * has percent-decoded (`/%76%32/workflows` is `/v2/workflows`), never on the raw URL. A request no
 * route matched is judged on its decoded path, so it is authenticated too when it looks like one.
 */
export function isApiRequest(request: FastifyRequest): boolean {
  const routed = request.routeOptions.url;
  if (routed !== undefined) return API_PATH.test(routed);
  const raw = request.url.split('?')[0]!;
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    path = raw;
  }
  return API_PATH.test(path);
}

/**
 * Answers a request Node's HTTP parser refused, with decisions.md's error body (its path: the
 * request's target when it could be read, at most 200 characters of it), and closes the connection.
 */
function answerClientError(error: Error, socket: Socket) {
  const err = error as NodeJS.ErrnoException & { rawPacket?: Buffer };
  // (As Node's own handler: nothing is written into an answer that has begun.)
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean; req?: { url?: string } } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || response?.headersSent) return void socket.destroy(err);
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const target = response?.req?.url ?? /^[A-Z]+ (\S+)/.exec(err.rawPacket?.toString('latin1') ?? '')?.[1] ?? '';
  const message = status === 431 ? 'The request line and headers are larger than 16 KB' : status === 408 ? 'The request took too long to arrive' : 'Malformed HTTP request';
  const body = JSON.stringify(errorBody(status, message, target.slice(0, 200)));
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** Builds the HTTP app from a config; it holds no global state, so tests can build several. */
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
    // A request id in every log line of the request, and in the answer's X-Request-Id: the one a
    // load balancer sent when it looks like an id, a new one otherwise.
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    bodyLimit: 1024 * 1024,
    // A client that sends its headers or body slowly, or stops half-way, is cut off in seconds.
    // Node checks these every `connectionsCheckingInterval`, so that is kept short too. No idle
    // socket timeout (connectionTimeout): it would cut long answers that are quiet a while.
    requestTimeout,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    http: {
      headersTimeout: Math.min(config.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, requestTimeout),
      connectionsCheckingInterval: Math.min(1000, requestTimeout),
    },
    // Path parameters up to 255 characters (subscriberId) must reach their schema, which answers 422.
    routerOptions: { maxParamLength: 1024 },
    // Errors the router raises before any route (a malformed %-escape, a parameter past maxParamLength)
    // get decisions.md's error body too.
    frameworkErrors: (error, request, reply) => {
      const status = error.statusCode ?? 400;
      (reply as FastifyReply).code(status).send(errorBody(status, error.message, request.url));
    },
    // And so do those Node's HTTP parser raises before there is a request (a request line or
    // headers past 16 KB: 431; a malformed request: 400; too slow: 408).
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON bodies through Fastify's own parser (which refuses __proto__ and constructor.prototype
  // keys), but a refused body is told why: where the JSON is broken, or which key is not allowed.
  const parseJsonBody = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    parseJsonBody(request, body as string, (err: Error | null, value?: unknown) => {
      if ((err as FastifyError | null)?.code !== 'FST_ERR_CTP_INVALID_JSON_BODY') return done(err, value);
      try {
        JSON.parse((body as string).replace(/^\uFEFF/, '')); // (a byte-order mark is allowed, as Fastify's parser allows it)
      } catch (syntax) {
        return done(new HttpError(400, `Body is not valid JSON: ${(syntax as Error).message}`), undefined);
      }
      done(new HttpError(400, 'Body holds a key that is not allowed: __proto__, or constructor with prototype'), undefined);
    }),
  );

  app.addHook('onRequest', async (request, reply) => {
    if (!/^[\w.:-]{1,128}$/.test(request.id)) request.id = randomUUID();
    reply.header('x-request-id', request.id);
  });
  // Closing (SIGTERM): answers in flight end their connection, so a kept-alive client does not
  // hold the process open; idle connections are closed as they become idle. A connection that has
  // sent no request yet (a client's spare one, opened after it dropped a stream) is not idle to
  // Node until its headers timeout: those are closed too.
  let closing: NodeJS.Timeout | undefined;
  const unused = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  app.server.on('request', (request: IncomingMessage) => unused.delete(request.socket));
  app.addHook('preClose', async () => {
    closing = setInterval(() => {
      app.server.closeIdleConnections();
      for (const socket of unused) socket.destroy();
    }, 50);
  });
  app.addHook('onClose', async () => clearInterval(closing));
  // An answer given before its request's body was read (a 401 in onRequest, before a slow body)
  // ends the connection: kept open, Node's request timeout would answer the same request a second
  // time (408) on it. (Whether the body has arrived whole by then cannot be told: Node may run the
  // hooks before parsing the rest of the packet.) Answers to requests whose body was read keep it.
  app.addHook('onSend', async (request, reply, payload) => {
    const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length']) > 0;
    if (closing || (hasBody && request.body === undefined)) reply.header('connection', 'close');
    return payload;
  });
  const cacheBytes = config.feedCacheBytes ?? FEED_CACHE_BYTES;
  const feedCache = cacheBytes > 0 ? new AnswerCache(cacheBytes) : undefined;
  const metrics = appMetrics(config.db, () => app.server, feedCache);
  app.addHook('onResponse', async (request, reply) => {
    metrics.observe(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
  });
  if (config.pressure) {
    const p = config.pressure;
    const retryAfter = String(p.retryAfterS ?? 5);
    // Start-up (compiling every route's schemas) blocks the event loop for a moment: measured from
    // the first full sample after listening, not from that.
    let armed = false;
    app.addHook('onListen', async () => {
      setTimeout(() => (armed = true), 2 * PRESSURE_SAMPLE_MS).unref();
    });
    await app.register(underPressure, {
      sampleInterval: PRESSURE_SAMPLE_MS,
      maxEventLoopDelay: p.maxEventLoopDelayMs ?? DEFAULT_MAX_EVENT_LOOP_DELAY_MS,
      ...(p.maxHeapUsedBytes ? { maxHeapUsedBytes: p.maxHeapUsedBytes } : {}),
      ...(p.maxRssBytes ? { maxRssBytes: p.maxRssBytes } : {}),
      pressureHandler: (request, reply, type, value) => {
        if (!armed) return;
        request.log.warn({ type, value }, 'under pressure: 503');
        reply.code(503).header('Retry-After', retryAfter);
        return errorBody(503, 'Service under pressure; retry later', request.url) as never;
      },
    });
  }

  // Query strings and paths are text, so their validator coerces ("20" -> 20, one value -> [value]);
  // a JSON body has real types, so its validator does not ({"firstName": 5} is a 422, not "5").
  const ajvOptions = { allErrors: true, removeAdditional: true, useDefaults: true, strict: false } as const;
  const bodyAjv = addFormats.default(new Ajv.default({ ...ajvOptions, coerceTypes: false }));
  const textAjv = addFormats.default(new Ajv.default({ ...ajvOptions, coerceTypes: 'array' }));
  // A body schema marked `strict: true` refuses keys it does not name (422 naming the key) instead of
  // dropping them: a change whose setting is misspelt must not answer 200 having changed nothing.
  const strictAjv = addFormats.default(new Ajv.default({ ...ajvOptions, removeAdditional: false, coerceTypes: false }));
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart !== 'body' ? textAjv : (schema as { strict?: boolean }).strict ? strictAjv : bodyAjv).compile(schema),
  );

  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'idempotency-key', 'x-subscriber-id', 'x-subscriber-hash', 'Last-Event-ID'],
    exposedHeaders: ['ETag', 'Idempotency-Replay', 'Idempotency-Key', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    // Two hours, Chromium's cap: a page polling from another origin sends one preflight per URL per
    // two hours instead of every ten minutes (bench/polling.mjs: 4.10 requests a minute with 600).
    maxAge: 7200,
  });

  const keys = new KeyResolver(config.db);
  app.decorateRequest('tenant', null as unknown as Tenant);
  if (config.rateLimit) {
    rateLimit(app, {
      ...config.rateLimit,
      environmentOf: async (key) => (await keys.resolve(key))?.environmentId ?? null,
      applies: isApiRequest,
    });
  }
  app.addHook('onRequest', async (request) => {
    if (request.method === 'OPTIONS' || !isApiRequest(request)) return;
    const header = request.headers.authorization;
    if (!header) throw new HttpError(401, 'Missing Authorization header; expected "Authorization: ApiKey <key>"');
    const m = /^(\S+)\s+(\S+)$/.exec(header.trim());
    if (!m || m[1]!.toLowerCase() !== 'apikey') {
      throw new HttpError(401, 'Unsupported authorization scheme; expected "Authorization: ApiKey <key>"');
    }
    const tenant = await keys.resolve(m[2]!);
    if (!tenant) throw new HttpError(401, 'API key not found');
    request.tenant = tenant;
  });

  if (config.faults) faults(app);
  // Before idempotency: its fingerprint walks the body, so the body must be known sound first.
  guardInput(app);
  idempotency(app, config.db, config.idempotencyInFlightMs);
  // Answers of 1 KB and more, brotli or gzip as asked (a feed page of 20 shrinks about tenfold); last
  // of the onSend hooks, so the others see the answer as written.
  compression(app);

  let unavailableSaid = 0;
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const path = request.url;
    if (error.validation) {
      const errors = validationErrors(error, request);
      const message = errorMessage(errors);
      return reply.code(422).send(errorBody(422, message || 'Validation failed', path, { errors }));
    }
    if (error instanceof HttpError) {
      if (error.headers) reply.headers(error.headers);
      return reply
        .code(error.statusCode)
        .send(errorBody(error.statusCode, error.message, path, error.errors ? { errors: error.errors } : undefined));
    }
    // The database unreachable or gone silent (a failover, a restart, a partition): worth trying again soon.
    if (databaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable or busy');
      // Without a logger, on the console at most once in 10 s: an outage fails every request.
      if (!config.logger && Date.now() - unavailableSaid > 10_000) (unavailableSaid = Date.now()), console.error(`database unavailable or busy: ${error.message}`);
      return reply.code(503).header('retry-after', '1').send(errorBody(503, 'The database is unavailable or busy; try again', path));
    }
    const status = error.statusCode;
    // 503: overloaded (under-pressure, which set Retry-After) or closing; not an unexpected error.
    if (status && ((status >= 400 && status < 500) || status === 503)) {
      return reply.code(status).send(errorBody(status, error.message, path));
    }
    const errorId = randomBytes(8).toString('hex');
    request.log.error({ err: error, errorId }, 'unexpected error');
    if (!config.logger && !(error instanceof InjectedFault)) console.error(`[${errorId}] ${request.method} ${path}:`, error);
    return reply.code(500).send(errorBody(500, 'Internal server error', path, { errorId }));
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(errorBody(404, `Route ${request.method} ${request.url.split('?')[0]} not found`, request.url));
  });

  // Alive: the process answers (a liveness probe; no database involved, answers under pressure too).
  app.get('/health', ALWAYS, async () => ({ ok: true }));
  // Ready: the database answers and has every migration this version needs (a load balancer's
  // readiness probe: 503 takes the process out of rotation).
  app.get('/ready', async (request, reply) => {
    const reason = await config.db.unready();
    if (reason) {
      request.log.warn({ reason }, 'not ready');
      // Unauthenticated: what kind of trouble only (a database error names hosts and users); the log has the rest.
      return reply.code(503).header('Retry-After', '5').send(errorBody(503, `Not ready: ${reason.split(':')[0]}`, request.url));
    }
    return { ok: true };
  });
  app.get('/metrics', ALWAYS, async (request, reply) => {
    const token = config.metricsToken;
    if (!token) return reply.code(404).send(errorBody(404, 'Route GET /metrics not found (serve --metrics-token to expose it)', request.url));
    if (!sameSecret(request.headers.authorization ?? '', `Bearer ${token}`)) {
      return reply.code(401).send(errorBody(401, 'Metrics need "Authorization: Bearer <metrics token>"', request.url));
    }
    return reply.type(metrics.contentType).send(await metrics.text());
  });

  const ctx: AppContext = { db: config.db, feedCache, unseen: unseenCounter(config.db), streams: config.streams };
  subscriberRoutes(app, ctx);
  preferenceRoutes(app, ctx);
  integrationRoutes(app, ctx);
  messageRoutes(app, ctx);
  feedRoutes(app, ctx);
  workflowRoutes(app, ctx);
  eventRoutes(app, ctx);
  notificationRoutes(app, ctx);
  streamRoutes(app, ctx);
  // Test-only: the streams this process holds (the elements' tests count them).
  if (config.faults) app.get('/__streams', async () => config.db.changes.listeners);
  // Test-only: the feed answer cache's figures (null when off).
  if (config.faults) app.get('/__feed-cache', async () => ctx.feedCache?.stats ?? null);

  return app;
}

/** Compares two strings in time that does not depend on where they differ. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Turns ajv's errors into decisions.md's `{<field>: {messages, value}}`. */
function validationErrors(error: FastifyError, request: { body?: unknown; query?: unknown; params?: unknown }): FieldErrors {
  const source =
    error.validationContext === 'querystring' ? request.query : error.validationContext === 'params' ? request.params : request.body;
  const errors: FieldErrors = {};
  for (const e of error.validation ?? []) {
    const segments = e.instancePath.split('/').filter(Boolean);
    const missing = e.keyword === 'required' ? (e.params as { missingProperty?: string }).missingProperty : undefined;
    const unknown = e.keyword === 'additionalProperties' ? (e.params as { additionalProperty?: string }).additionalProperty : undefined;
    if (missing ?? unknown) segments.push((missing ?? unknown)!);
    const field = segments.join('.') || error.validationContext || 'body';
    const value = segments.reduce<unknown>(
      (v, s) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[s] : undefined),
      source,
    );
    const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues;
    const message = missing
      ? 'is required'
      : unknown
        ? 'is not a known field'
        : allowed
        ? `must be one of: ${allowed.join(', ')}`
        : (e.message ?? 'is invalid');
    const entry = (errors[field] ??= { messages: [], value: value ?? null });
    if (!entry.messages.includes(message)) entry.messages.push(message);
  }
  return errors;
}
