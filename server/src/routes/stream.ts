import { sql } from 'kysely';
import type { App, AppContext } from '../app.ts';
import { findSubscriber } from '../db/lookups.ts';
import type { Change } from '../changes.ts';
import { SubscriberIdParam } from '../schemas.ts';
import { loadEmbeds } from './messages.ts';

// Extension: GET /v1/subscribers/{subscriberId}/notifications/stream, Server-Sent Events.
//   event: unseen   data: {"count": n}   at once on connect, then whenever the count changes
//   event: message  data: <Message>      each new in-app message, in the order they were committed
//   event: refetch                        a reconnect missed more than the stream replays
// Every event's `id:` is the commit number (`messages.seq`, engine/sequence.ts) of the newest
// message the stream has told of (or the newest there is, at connect). Numbers follow commit
// order, in every process, so a reconnect with `Last-Event-ID` gets exactly the messages
// committed since (up to REPLAY of them, oldest first), or `refetch` when there were more or the
// id is not one of ours. A change heard reads every message after the last one told, so a message
// is never told twice, nor skipped when its change comes late.
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
  /** The subscriber's messages numbered after `seq`, oldest first: up to REPLAY, and one more when there are more. */
  const after = (subscriberId: string, seq: number) =>
    inApp(subscriberId).where('seq', '>', seq).orderBy('seq').limit(REPLAY + 1).execute();
  const newest = async (subscriberId: string) =>
    Number(
      (await k.selectFrom('messages').select((eb) => eb.fn.max('seq').as('top')).where('subscriber_id', '=', subscriberId).executeTakeFirst())?.top ?? 0,
    );

  app.get('/v1/subscribers/:subscriberId/notifications/stream', { schema: { params: SubscriberIdParam } }, async (request, reply) => {
    const subscriber = await findSubscriber(db, request.tenant, request.params.subscriberId);
    const res = reply.raw;
    let ended = false;
    let chain = Promise.resolve();
    let lastCount = -1;
    let lastSeq = 0;
    let heartbeat: NodeJS.Timeout | undefined;
    let off: (() => void) | undefined;
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      off?.();
      open.delete(end);
      if (!res.destroyed) res.end();
    };
    const write = (text: string) => {
      if (!ended) res.write(text);
    };
    const tell = (event: string, data: unknown) => write(`id: ${lastSeq}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    /** Tells the messages committed since the last one told (or asks for a refetch when they are too many). */
    const catchUp = async () => {
      const rows = await after(subscriber.id, lastSeq);
      if (rows.length > REPLAY) {
        lastSeq = await newest(subscriber.id);
        return write(`id: ${lastSeq}\nevent: refetch\ndata: \n\n`);
      }
      const views = await loadEmbeds(db, rows, subscriber);
      for (const [i, view] of views.entries()) {
        lastSeq = Number(rows[i]!.seq);
        tell('message', view);
      }
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
        if (change.m || change.s === '*') await catchUp();
        await count();
      });

    // Listen before reading, so nothing made in between is missed (a change heard twice is harmless).
    off = await db.changes.subscribe(subscriber.id, onChange);
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

    const from = request.headers['last-event-id'];
    queue(async () => {
      if (typeof from === 'string' && /^\d{1,15}$/.test(from)) {
        lastSeq = Number(from);
        await catchUp();
      } else {
        // A first connect, or an id of another kind: from the newest message on.
        lastSeq = await newest(subscriber.id);
        if (from) write(`id: ${lastSeq}\nevent: refetch\ndata: \n\n`);
      }
      await count();
    });
    await chain;
  });
}
