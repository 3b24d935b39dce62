import type { ServerResponse } from 'node:http';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { secretsFor } from '../db/secrets.ts';
import { errorBody } from '../errors.ts';
import { DEFAULT_STREAM_HEARTBEAT_MS, InboxStream, messageEvents, streamReads } from '../inbox/stream.ts';
import { StreamSlots, type StreamLimits } from '../inbox/stream-slots.ts';
import { findSubscriber } from '../inbox/subscribers.ts';
import { SubscriberIdParam } from '../schemas.ts';

// Extension: GET /v1/subscribers/{subscriberId}/notifications/stream, Server-Sent Events of the
// subscriber's inbox (inbox/stream.ts tells what it says; inbox/stream-slots.ts how many are held).

export interface StreamOptions extends StreamLimits {
  /** How often an idle stream sends a comment line (default DEFAULT_STREAM_HEARTBEAT_MS). */
  heartbeatMs?: number;
  /** The most bytes one event takes (default DEFAULT_STREAM_EVENT_BYTES): a message's event is a preview cut to fit. */
  eventBytes?: number;
  /** The most bytes a catch-up tells before it becomes a refetch (default DEFAULT_STREAM_CATCH_UP_BYTES). */
  catchUpBytes?: number;
}

/** Seconds a client refused a stream is asked to wait before trying again (it polls meanwhile). */
const FULL_RETRY_AFTER_S = '30';
const NOT_LISTENING_RETRY_AFTER_S = '2';

/**
 * How long a client may take none of an event its connection could not take at once. Past it the
 * client counts as one that does not read: the stream is ended (the connection destroyed), and the
 * client, once it reads again, reconnects and catches up (or is told to refetch).
 */
export const SLOW_READER_MS = 5000;

/**
 * Writes one event: resolves true at once when the connection's buffer takes it, else once it
 * drains; false (the connection destroyed) when it does not drain within SLOW_READER_MS, or the
 * connection closed. Events are written one at a time, so at most one waits in the buffer, however
 * large it is, and a client reading as fast as it can is never ended for the size of an event.
 */
function send(res: ServerResponse, chunk: Buffer): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  if (res.write(chunk)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const settle = (written: boolean) => {
      clearTimeout(timer);
      res.off('drain', drained);
      res.off('close', closed);
      resolve(written);
    };
    const drained = () => settle(true);
    const closed = () => settle(false);
    const timer = setTimeout(() => {
      res.destroy();
      settle(false);
    }, SLOW_READER_MS);
    res.on('drain', drained);
    res.on('close', closed);
  });
}

/** Writes a line the client needs not get (a heartbeat): skipped while an event waits to drain. */
function sendAside(res: ServerResponse, text: string): void {
  if (!res.destroyed && !res.writableNeedDrain) res.write(text);
}

const stream: FastifyPluginAsyncTypebox<StreamOptions> = async (app, options) => {
  const { db } = app;
  const reads = streamReads(db, app.unseen, options.eventBytes);
  const texts = messageEvents(reads.readChars, options.eventBytes);
  const slots = new StreamSlots(options);
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_STREAM_HEARTBEAT_MS;
  /** How to end each open stream: a graceful shutdown ends them all (they would hold the server open). */
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of open) end();
  });

  // No HEAD: it would hold a stream that sends nothing.
  app.get('/v1/subscribers/:subscriberId/notifications/stream', { schema: { params: SubscriberIdParam }, exposeHeadRoute: false }, async (request, reply) => {
    const subscriber = await findSubscriber(db, request.tenant, request.params.subscriberId);
    const ids = (await secretsFor(db)).eventIds(subscriber.id);
    const res = reply.raw;
    let ended = false;
    let off: (() => void) | undefined;
    let release: (() => void) | undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      release?.();
      session.stop();
      off?.();
      open.delete(end);
      if (!res.destroyed) res.end();
    };
    const session = new InboxStream({
      subscriberId: subscriber.id,
      reads,
      ids,
      texts,
      catchUpBytes: options.catchUpBytes,
      write: (chunk) => send(res, chunk),
      writeAside: (text) => sendAside(res, text),
      end,
    });

    // Listen before reading, so nothing made in between is missed (a change heard twice is harmless).
    const slot = slots.take(subscriber.id, request.tenant.environmentId, end);
    if (typeof slot === 'string') return reply.code(503).header('Retry-After', FULL_RETRY_AFTER_S).send(errorBody(503, slot, request.url));
    release = slot;
    try {
      off = await db.changes.subscribe(subscriber.id, session.hear);
    } catch (err) {
      // PostgreSQL's LISTEN connection could not be opened (it is tried again in a second): the
      // slot is freed, and the client polls and reconnects as after any drop.
      ended = true;
      release();
      request.log.warn({ err }, 'the stream could not listen for changes');
      return reply
        .code(503)
        .header('Retry-After', NOT_LISTENING_RETRY_AFTER_S)
        .send(errorBody(503, 'The stream cannot listen for changes now; poll meanwhile', request.url));
    }
    // Ended while connecting (newer streams of this subscriber took its place): the answer is sent.
    if (ended) {
      reply.hijack();
      off();
      return;
    }
    res.on('close', end);
    open.add(end);
    reply.hijack();
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    const lastEventId = request.headers['last-event-id'];
    session.start(typeof lastEventId === 'string' ? lastEventId : undefined, heartbeatMs);
    if (res.destroyed) end();
    await session.settled;
  });
};

export default stream;
