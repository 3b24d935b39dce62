import { sql } from 'kysely';
import type { App, AppContext } from '../app.ts';
import { findSubscriber } from '../db/lookups.ts';
import type { Change } from '../changes.ts';
import { SubscriberIdParam } from '../schemas.ts';
import { loadEmbeds } from './messages.ts';
import { errorBody } from '../errors.ts';
import { send, sseJson, StreamSlots } from '../stream-limits.ts';

// Extension: GET /v1/subscribers/{subscriberId}/notifications/stream, Server-Sent Events.
//   event: unseen   data: {"count": n}   at once on connect, then whenever the count changes
//   event: message  data: <Message>      each new in-app message; its `id:` is the message's _id
//   event: refetch                        a reconnect missed more than the stream replays
// Every event's `id:` is the newest message the stream has told of (or the newest there is, at
// connect), so a reconnect with `Last-Event-ID` gets the messages made since (up to REPLAY of
// them, oldest first), or `refetch` when there were more or that message is gone.
// Written by hand: it is a few lines, and @fastify/sse is not a dependency.

const HEARTBEAT_MS = Number(process.env.NOTIF_STREAM_HEARTBEAT_MS) || 25_000;
const RETRY_MS = 1000;
const REPLAY = 50;
/** The unseen count's cap, as endpoint 13 caps it by default. */
const CAP = 100;

export function streamRoutes(app: App, ctx: AppContext) {
  const db = ctx.db;
  const k = db.kysely;
  /** How to end each open stream: a graceful shutdown ends them all (they would hold the server open). */
  const open = new Set<() => void>();
  const slots = new StreamSlots();
  app.addHook('preClose', async () => {
    for (const end of open) end();
  });

  const unseen = async (subscriberId: string) => {
    const capped = k
      .selectFrom('messages')
      .select(sql<number>`1`.as('one'))
      .where('subscriber_id', '=', subscriberId)
      .where('channel', '=', 'in_app')
      .where('seen', '=', 0)
      .limit(CAP)
      .as('capped');
    const row = await k.selectFrom(capped).select((eb) => eb.fn.countAll<number | string>().as('count')).executeTakeFirstOrThrow();
    return Number(row.count);
  };
  const inApp = (subscriberId: string) =>
    k.selectFrom('messages').selectAll().where('subscriber_id', '=', subscriberId).where('channel', '=', 'in_app');

  // No HEAD: it would hold a stream that sends nothing.
  app.get('/v1/subscribers/:subscriberId/notifications/stream', { schema: { params: SubscriberIdParam }, exposeHeadRoute: false }, async (request, reply) => {
    const subscriber = await findSubscriber(db, request.tenant, request.params.subscriberId);
    const res = reply.raw;
    let ended = false;
    let chain = Promise.resolve();
    let lastCount = -1;
    let lastId = '';
    let heartbeat: NodeJS.Timeout | undefined;
    let off: (() => void) | undefined;
    let release: (() => void) | undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      release?.();
      clearInterval(heartbeat);
      off?.();
      open.delete(end);
      if (!res.destroyed) res.end();
    };
    const write = (text: string) => {
      if (!ended && !send(res, text)) end();
    };
    const tell = (event: string, data: unknown, id = lastId) => write(`id: ${id}\nevent: ${event}\ndata: ${sseJson(data)}\n\n`);
    const message = async (row: Parameters<typeof loadEmbeds>[1][number]) => {
      const [view] = await loadEmbeds(db, [row], subscriber);
      tell('message', view, (lastId = row.id));
    };
    const count = async () => {
      const n = await unseen(subscriber.id);
      if (n !== lastCount) tell('unseen', { count: (lastCount = n) });
    };
    // One change at a time, in the order heard; a failure ends the stream (the client reconnects).
    const queue = (work: () => Promise<unknown>) => {
      chain = chain.then(() => (ended ? undefined : work())).then(undefined, end);
    };
    const onChange = (change: Change) =>
      queue(async () => {
        if (change.m) {
          const row = await inApp(subscriber.id).where('id', '=', change.m).executeTakeFirst();
          if (row) await message(row);
        }
        await count();
      });

    // Listen before reading, so nothing made in between is missed (a change heard twice is harmless).
    if (slots.full(subscriber.id)) return reply.code(503).header('Retry-After', '30').send(errorBody(503, 'Too many open streams; poll meanwhile', request.url));
    release = slots.take(subscriber.id, end);
    off = await db.changes.subscribe(subscriber.id, onChange);
    // Ended while connecting (newer streams of this subscriber took its place): the answer is sent.
    if (ended) return reply.hijack(), off();
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
    write(`retry: ${RETRY_MS}\n\n`);
    heartbeat = setInterval(() => write(':\n\n'), HEARTBEAT_MS);
    if (res.destroyed) end();

    const after = request.headers['last-event-id'];
    queue(async () => {
      if (typeof after === 'string' && after) {
        const from = await inApp(subscriber.id).where('id', '=', after).executeTakeFirst();
        const missed = from
          ? await inApp(subscriber.id)
              .where((eb) => eb.or([eb('created_at', '>', from.created_at), eb.and([eb('created_at', '=', from.created_at), eb('id', '>', from.id)])]))
              .orderBy('created_at')
              .orderBy('id')
              .limit(REPLAY + 1)
              .execute()
          : undefined;
        if (!missed || missed.length > REPLAY) write('event: refetch\ndata: \n\n');
        else {
          lastId = after;
          for (const row of missed) await message(row);
        }
      }
      if (!lastId) {
        const newest = await inApp(subscriber.id).select('id').orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
        lastId = newest?.id ?? '';
      }
      await count();
    });
    await chain;
  });
}
