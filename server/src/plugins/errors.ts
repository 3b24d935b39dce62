import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { databaseUnavailable } from '../db/index.ts';
import { errorBody, errorMessage, HttpError, type FieldErrors } from '../errors.ts';
import { InjectedFault } from './faults.ts';

// The one place errors become answers: every refusal and failure, whichever part raised it, gets
// decisions.md's error body ({statusCode, error, message, timestamp, path}).

export interface ErrorsPluginOptions {
  /** A logger is on: the request's log line tells an unexpected error; otherwise the console does. */
  logging: boolean;
}

/** Without a logger, a database outage (which fails every request) is told on the console at most this often. */
const UNAVAILABLE_SAID_EVERY_MS = 10_000;
/** Bytes of randomness in an unexpected error's id. */
const ERROR_ID_BYTES = 8;
/** Seconds a client is asked to wait when the database is unavailable: it is worth trying again soon. */
const DATABASE_RETRY_AFTER_S = '1';

const errors: FastifyPluginAsync<ErrorsPluginOptions> = async (app, { logging }) => {
  let unavailableSaid = 0;
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const path = request.url;
    if (error.validation) {
      const fields = validationErrors(error, request);
      const message = errorMessage(fields);
      return reply.code(422).send(errorBody(422, message || 'Validation failed', path, { errors: fields }));
    }
    if (error instanceof HttpError) {
      if (error.headers) reply.headers(error.headers);
      const body = errorBody(error.statusCode, error.message, path, error.errors ? { errors: error.errors } : undefined);
      return reply.code(error.statusCode).send(error.resource ? { ...error.resource, ...body } : body);
    }
    // The database unreachable or gone silent (a failover, a restart, a partition): worth trying again soon.
    if (databaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable or busy');
      if (!logging && Date.now() - unavailableSaid > UNAVAILABLE_SAID_EVERY_MS) {
        unavailableSaid = Date.now();
        console.error(`database unavailable or busy: ${error.message}`);
      }
      return reply.code(503).header('retry-after', DATABASE_RETRY_AFTER_S).send(errorBody(503, 'The database is unavailable or busy; try again', path));
    }
    const status = error.statusCode;
    // 503: overloaded (under-pressure, which set Retry-After) or closing; not an unexpected error.
    if (status && ((status >= 400 && status < 500) || status === 503)) {
      return reply.code(status).send(errorBody(status, error.message, path));
    }
    const errorId = randomBytes(ERROR_ID_BYTES).toString('hex');
    request.log.error({ err: error, errorId }, 'unexpected error');
    if (!logging && !(error instanceof InjectedFault)) console.error(`[${errorId}] ${request.method} ${path}:`, error);
    return reply.code(500).send(errorBody(500, 'Internal server error', path, { errorId }));
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(errorBody(404, `Route ${request.method} ${request.url.split('?')[0]} not found`, request.url));
  });
};

export default fp(errors, { name: 'errors' });

/**
 * Errors the router raises before any route (a malformed %-escape, a parameter past maxParamLength),
 * as the error body too: app.ts hands it to Fastify as `frameworkErrors`.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const status = error.statusCode ?? 400;
  reply.code(status).send(errorBody(status, error.message, request.url));
}

/** The longest part of a refused request's target its error body names. */
const MAX_PATH_ECHOED = 200;

/**
 * Answers a request Node's HTTP parser refused (a request line or headers past 16 KB: 431; a
 * malformed request: 400; too slow: 408), with decisions.md's error body (its path: the request's
 * target when it could be read, at most MAX_PATH_ECHOED characters of it), and closes the
 * connection. app.ts hands it to Fastify as `clientErrorHandler`.
 */
export function answerClientError(error: Error, socket: Socket) {
  const err = error as NodeJS.ErrnoException & { rawPacket?: Buffer };
  // (As Node's own handler: nothing is written into an answer that has begun.)
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean; req?: { url?: string } } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
    socket.destroy(err);
    return;
  }
  let status = 400;
  let message = 'Malformed HTTP request';
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    message = 'The request line and headers are larger than 16 KB';
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    message = 'The request took too long to arrive';
  }
  const target = response?.req?.url ?? /^[A-Z]+ (\S+)/.exec(err.rawPacket?.toString('latin1') ?? '')?.[1] ?? '';
  const body = JSON.stringify(errorBody(status, message, target.slice(0, MAX_PATH_ECHOED)));
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

/** Turns ajv's errors into decisions.md's `{<field>: {messages, value}}`. */
function validationErrors(error: FastifyError, request: { body?: unknown; query?: unknown; params?: unknown }): FieldErrors {
  let source = request.body;
  if (error.validationContext === 'querystring') source = request.query;
  else if (error.validationContext === 'params') source = request.params;
  const fields: FieldErrors = {};
  for (const problem of error.validation ?? []) {
    const segments = problem.instancePath.split('/').filter(Boolean);
    const missing = problem.keyword === 'required' ? (problem.params as { missingProperty?: string }).missingProperty : undefined;
    const unknown = problem.keyword === 'additionalProperties' ? (problem.params as { additionalProperty?: string }).additionalProperty : undefined;
    const named = missing ?? unknown;
    if (named) segments.push(named);
    const field = segments.join('.') || error.validationContext || 'body';
    let value: unknown = source;
    for (const segment of segments) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[segment] : undefined;
    const allowed = (problem.params as { allowedValues?: unknown[] }).allowedValues;
    let message: string;
    if (missing) message = 'is required';
    else if (unknown) message = 'is not a known field';
    else if (allowed) message = `must be one of: ${allowed.join(', ')}`;
    else message = problem.message ?? 'is invalid';
    const entry = (fields[field] ??= { messages: [], value: value ?? null });
    if (!entry.messages.includes(message)) entry.messages.push(message);
  }
  return fields;
}
