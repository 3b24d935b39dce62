import { sql } from 'kysely';
import type { App, AppContext } from '../app.ts';
import { findSubscriber } from '../db/lookups.ts';
import type { Change } from '../changes.ts';
import { SubscriberIdParam } from '../schemas.ts';
import { loadEmbeds } from './messages.ts';
import type { MessageRow } from '../views.ts';
import { errorBody } from '../errors.ts';
import { send, sseJson, StreamSlots } from '../stream-limits.ts';
import { secretsFor } from '../secrets.ts';
import { batched } from '../batched.ts';

// Extension: GET /v1/subscribers/{subscriberId}/notifications/stream, Server-Sent Events.
// One kind of event (no `event:` line), its `data:` one line of JSON that carries everything the
// client needs, its id included (so a reader need not tell events apart by name, nor keep `id:`):
//   {"id", "count": n}         the unseen count, at once on connect, then whenever it changes
//   {"id", "message": {...}}   each new in-app message, in the order they were committed, with
//                              `feedIdentifier` (its step's feed, when it has one)
//   {"id", "refetch": true}    at connect without Last-Event-ID (what the client read may predate
//                              it), and on a reconnect that missed more than the stream replays
// Every event's `id:` (its data's `id` too) is the commit number (`messages.seq`, engine/sequence.ts)
// of the newest message the stream has told of (or the newest there is, at connect), sealed for its
// subscriber (Secrets.eventIds: the numbers are shared by every environment, and their gaps would
// tell how busy the others are). Numbers follow commit order, in every process, so a reconnect with
// `Last-Event-ID` gets exactly the messages committed since (up to REPLAY of them, oldest first),
// or `refetch` when there were more or the id is not one of this subscriber's. A change heard reads every message after the last one told, so a message
// is never told twice, nor skipped when its change comes late.
// Written by hand: it is a few lines, and bench/sse.mjs measured @fastify/sse against them (5,000
// idle streams: 14.4 KB of RSS a stream against 12.8 KB, 13.3 ms to write one event to every stream
// against 8.0 ms). The plugin also cannot send a `retry:` hint without a data line, and bounds
// nothing for a client that does not read (stream-limits.ts ends such a stream at 1 MB).

/** How often an idle stream sends a comment line, when nothing else is set (NOTIF_STREAM_HEARTBEAT_MS): under the 30 s proxies and load balancers often cut idle connections at. */
export const DEFAULT_STREAM_HEARTBEAT_MS = 25_000;
const RETRY_MS = 1000;
const REPLAY = 50;
/** The unseen count's cap, as endpoint 13 caps it by default. */
const CAP = 100;

export function streamRoutes(app: App, ctx: AppContext) {
  const db = ctx.db;
  const k = db.kysely;
  /** How to end each open stream: a graceful shutdown ends them all (they would hold the server open). */
  const open = new Set<() => void>();
  const slots = new StreamSlots(ctx.streams);
  const heartbeatMs = ctx.streams?.heartbeatMs ?? DEFAULT_STREAM_HEARTBEAT_MS;
  app.addHook('preClose', async () => {
    for (const end of open) end();
  });

  // The reads of every stream told in the same turn of the event loop (a trigger to many
  // subscribers tells them together) are made together: one statement for their new messages, one
  // for their embeds, instead of two per stream. The keys go in as one parameter (PostgreSQL:
  // arrays; SQLite: a JSON array read by json_each), so each read is one short statement whatever
  // the number of streams, prepared once. Their counts are endpoint 13's (ctx.unseen: on SQLite
  // the kept counts, on PostgreSQL batched with the endpoint's).
  const pg = db.dialect === 'postgres';
  /** A subscriber's messages numbered after `seq`, oldest first: up to REPLAY, and one more when there are more. */
  const after = batched<[subscriberId: string, seq: number], MessageRow[]>(async (keys) => {
    const { rows } = pg
      ? await sql<MessageRow & { k: number | string }>`select k.i - 1 as k, m.* from unnest(${keys.map((key) => key[0])}::text[], ${keys.map((key) => key[1])}::bigint[])
          with ordinality as k(id, seq, i) cross join lateral
          (select * from messages where subscriber_id = k.id and channel = 'in_app' and seq > k.seq order by seq limit ${REPLAY + 1}) as m`.execute(k)
      : // SQLite has no LATERAL: a join bounded, per key, by the number of its (REPLAY + 1)th message
        // (a subquery with ORDER BY and LIMIT per key, in a UNION ALL, costs ten times as much).
        await sql<MessageRow & { k: number | string }>`select j.key as k, m.* from json_each(${JSON.stringify(keys)}) as j
          join messages as m indexed by messages_stream on m.subscriber_id = j.value ->> 0 and m.seq > j.value ->> 1
            and m.seq <= coalesce((select n.seq from messages as n indexed by messages_stream where n.subscriber_id = j.value ->> 0
              and n.channel = 'in_app' and n.seq > j.value ->> 1 order by n.seq limit 1 offset ${REPLAY}), ${Number.MAX_SAFE_INTEGER})
          where m.channel = 'in_app' order by j.key, m.seq`.execute(k);
    const found = keys.map((): MessageRow[] => []);
    for (const { k: i, ...row } of rows) found[Number(i)]?.push(row);
    return found;
  });
  const views = batched<MessageRow[], unknown[]>(async (lists) => {
    const rows = lists.flat();
    // With its feed's identifier, so a client can tell whether a feed filtered by it shows the message.
    const all = (await loadEmbeds(db, rows)).map((view, i) => ({ ...view, feedIdentifier: rows[i]!.feed_identifier ?? undefined }));
    let at = 0;
    return lists.map((list) => all.slice(at, (at += list.length)));
  });
  const newest = async (subscriberId: string) =>
    Number(
      (await k.selectFrom('messages').select((eb) => eb.fn.max('seq').as('top')).where('subscriber_id', '=', subscriberId).executeTakeFirst())?.top ?? 0,
    );

  // No HEAD: it would hold a stream that sends nothing.
  app.get('/v1/subscribers/:subscriberId/notifications/stream', { schema: { params: SubscriberIdParam }, exposeHeadRoute: false }, async (request, reply) => {
    const subscriber = await findSubscriber(db, request.tenant, request.params.subscriberId);
    const ids = (await secretsFor(db)).eventIds(subscriber.id);
    const id = () => ids.seal(lastSeq);
    const res = reply.raw;
    let ended = false;
    let chain = Promise.resolve();
    let lastCount = -1;
    let lastSeq = 0;
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
    // What one piece of work says (a message and the new count) leaves in one write.
    let out = '';
    const write = (text: string) => {
      out += text;
    };
    const flush = () => {
      // A client that does not read has its stream ended (stream-limits.ts): it reconnects and catches up.
      if (!ended && out && !send(res, out)) end();
      out = '';
    };
    const tell = (data: { count: number } | { message: unknown } | { refetch: true }) => {
      const at = id();
      write(`id: ${at}\ndata: ${sseJson({ id: at, ...data })}\n\n`);
    };
    /** Tells the messages committed since the last one told (or asks for a refetch when they are too many). */
    const catchUp = async () => {
      const rows = await after([subscriber.id, lastSeq]);
      if (rows.length > REPLAY) {
        lastSeq = await newest(subscriber.id);
        return tell({ refetch: true });
      }
      if (rows.length === 0) return;
      for (const [i, view] of (await views(rows)).entries()) {
        lastSeq = Number(rows[i]!.seq);
        tell({ message: view });
      }
    };
    const count = async () => {
      const n = await ctx.unseen(subscriber.id, false, CAP);
      if (n !== lastCount) tell({ count: (lastCount = n) });
    };
    // One change at a time, in the order heard; a failure ends the stream (the client reconnects).
    const queue = (work: () => Promise<unknown>) => {
      chain = chain.then(() => (ended ? undefined : work())).then(flush, end);
    };
    const onChange = (change: Change) =>
      queue(async () => {
        if (change.m || change.s === '*') await catchUp();
        await count();
      });

    // Listen before reading, so nothing made in between is missed (a change heard twice is harmless).
    const slot = slots.take(subscriber.id, request.tenant.environmentId, end);
    if (typeof slot === 'string') return reply.code(503).header('Retry-After', '30').send(errorBody(503, slot, request.url));
    release = slot;
    try {
      off = await db.changes.subscribe(subscriber.id, onChange);
    } catch (err) {
      // PostgreSQL's LISTEN connection could not be opened (it is tried again in a second): the
      // slot is freed, and the client polls and reconnects as after any drop.
      ended = true;
      release();
      request.log.warn({ err }, 'the stream could not listen for changes');
      return reply.code(503).header('Retry-After', '2').send(errorBody(503, 'The stream cannot listen for changes now; poll meanwhile', request.url));
    }
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
    res.write(`retry: ${RETRY_MS}\n\n`);
    heartbeat = setInterval(() => send(res, ':\n\n') || end(), heartbeatMs);
    if (res.destroyed) end();

    const from = request.headers['last-event-id'];
    const told = typeof from === 'string' ? ids.open(from) : undefined;
    queue(async () => {
      if (told !== undefined) {
        lastSeq = told;
        await catchUp();
      } else {
        // A first connect, or an id of another kind: from the newest message on, and `refetch`
        // first. What the client read before may predate a message committed before this: a first
        // page read just before it and a count just after would leave it out of the client's feed,
        // the count told here being the one it knows (found by a test; the refetch costs one
        // first-page request of a feed open then, answered 304 when nothing changed).
        lastSeq = await newest(subscriber.id);
        tell({ refetch: true });
      }
      await count();
    });
    await chain;
  });
}
