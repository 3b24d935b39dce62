import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type RawServerDefault } from 'fastify';
import cors from '@fastify/cors';
import compress from '@fastify/compress';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Db } from './db/index.ts';
import { KeyResolver, type Tenant } from './auth.ts';
import { errorBody, errorMessage, HttpError, type FieldErrors } from './errors.ts';
import { idempotency } from './idempotency.ts';
import { faults, InjectedFault } from './faults.ts';
import { rateLimit, type RateLimitConfig } from './ratelimit.ts';
import { guardInput } from './input-guard.ts';
import { subscriberRoutes } from './routes/subscribers.ts';
import { preferenceRoutes } from './routes/preferences.ts';
import { integrationRoutes } from './routes/integrations.ts';
import { messageRoutes } from './routes/messages.ts';
import { feedRoutes } from './routes/feed.ts';
import { workflowRoutes } from './routes/workflows.ts';
import { eventRoutes } from './routes/events.ts';
import { notificationRoutes } from './routes/notifications.ts';
import { streamRoutes } from './routes/stream.ts';

export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface AppConfig {
  db: Db;
  /** Fastify's logger (pino) on or off. Off in tests. */
  logger?: boolean;
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
}

/** Keep-alive connections idle longer than this are closed: past a load balancer's usual 60 s. */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** What every route module gets: the database and the services built on it. */
export interface AppContext {
  db: Db;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook for every /v1 and /v2 request. */
    tenant: Tenant;
  }
}

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

/** Builds the HTTP app from a config; it holds no global state, so tests can build several. */
export async function buildApp(config: AppConfig): Promise<App> {
  const requestTimeout = config.requestTimeoutMs ?? 15_000;
  const app = Fastify({
    logger: config.logger ?? false,
    bodyLimit: 1024 * 1024,
    // A client that sends its headers or body slowly, or stops half-way, is cut off in seconds.
    // Node checks these every `connectionsCheckingInterval`, so that is kept short too. No idle
    // socket timeout (connectionTimeout): it would cut long answers that are quiet a while.
    requestTimeout,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    http: {
      headersTimeout: Math.min(config.headersTimeoutMs ?? 10_000, requestTimeout),
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
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Query strings and paths are text, so their validator coerces ("20" -> 20, one value -> [value]);
  // a JSON body has real types, so its validator does not ({"firstName": 5} is a 422, not "5").
  const ajvOptions = { allErrors: true, removeAdditional: true, useDefaults: true, strict: false } as const;
  const bodyAjv = addFormats.default(new Ajv.default({ ...ajvOptions, coerceTypes: false }));
  const textAjv = addFormats.default(new Ajv.default({ ...ajvOptions, coerceTypes: 'array' }));
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema));

  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'idempotency-key', 'x-subscriber-id', 'x-subscriber-hash', 'Last-Event-ID'],
    exposedHeaders: ['Idempotency-Replay', 'Idempotency-Key', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    // Two hours, Chromium's cap: a page polling from another origin sends one preflight per URL per
    // two hours instead of every ten minutes (bench/polling.mjs: 4.10 requests a minute with 600).
    maxAge: 7200,
  });

  // Answers of 1 KB and more are compressed when the request accepts it: brotli (quality 4, the
  // plugin's default, cheap enough per request) or gzip. A feed page of 20 shrinks about tenfold.
  await app.register(compress, { threshold: 1024, encodings: ['br', 'gzip'] });

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
  idempotency(app, config.db);

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
    const status = error.statusCode;
    if (status && status >= 400 && status < 500) {
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

  app.get('/health', async () => ({ ok: true }));

  const ctx: AppContext = { db: config.db };
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

  return app;
}

/** Turns ajv's errors into decisions.md's `{<field>: {messages, value}}`. */
function validationErrors(error: FastifyError, request: { body?: unknown; query?: unknown; params?: unknown }): FieldErrors {
  const source =
    error.validationContext === 'querystring' ? request.query : error.validationContext === 'params' ? request.params : request.body;
  const errors: FieldErrors = {};
  for (const e of error.validation ?? []) {
    const segments = e.instancePath.split('/').filter(Boolean);
    const missing = e.keyword === 'required' ? (e.params as { missingProperty?: string }).missingProperty : undefined;
    if (missing) segments.push(missing);
    const field = segments.join('.') || error.validationContext || 'body';
    const value = segments.reduce<unknown>(
      (v, s) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[s] : undefined),
      source,
    );
    const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues;
    const message = missing
      ? 'is required'
      : allowed
        ? `must be one of: ${allowed.join(', ')}`
        : (e.message ?? 'is invalid');
    const entry = (errors[field] ??= { messages: [], value: value ?? null });
    if (!entry.messages.includes(message)) entry.messages.push(message);
  }
  return errors;
}
