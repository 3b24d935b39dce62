import { sql } from 'kysely';
import { batched } from '../batched.ts';
import { EVERY_SUBSCRIBER, type Change } from '../db/changes.ts';
import type { Db } from '../db/index.ts';
import type { UnseenCounter } from '../db/read.ts';
import type { MessageRow } from '../db/rows.ts';
import type { EventIds } from '../db/secrets.ts';
import { loadEmbeds } from './embeds.ts';

// The live stream of a subscriber's inbox (extension: GET /v1/subscribers/{subscriberId}/notifications/stream,
// Server-Sent Events; routes/stream.ts serves it).
//
// One kind of event (no `event:` line), its `data:` one line of JSON that carries everything the
// client needs, its id included (so a reader need not tell events apart by name, nor keep `id:`):
//   {"id", "count": n}         the unseen count, at once on connect, then whenever it changes
//   {"id", "message": {...}}   each new in-app message, in the order they were committed, with
//                              `feedIdentifier` (its step's feed, when it has one)
//   {"id", "changed": what, "messageId"?}  a change of the notifications family (read, unread,
//                              seen, archive, unarchive, snooze, unsnooze, complete, revert,
//                              delete; wake for a snoozed message come back, told as a message
//                              first), with the message's id when it was one message's: other
//                              browser tabs refresh their counts and lists
//   {"id", "refetch": true}    at connect without Last-Event-ID (what the client read may predate
//                              it), and on a reconnect that missed more than the stream replays
// Every event's `id:` (its data's `id` too) is the commit number (`messages.seq`, engine/sequence.ts)
// of the newest message the stream has told of (or the newest there is, at connect), sealed for its
// subscriber (Secrets.eventIds: the numbers are shared by every environment, and their gaps would
// tell how busy the others are). Numbers follow commit order, in every process, so a reconnect with
// `Last-Event-ID` gets exactly the messages committed since (up to REPLAY of them, oldest first),
// or `refetch` when there were more or the id is not one of this subscriber's. A change heard reads
// every message after the last one told, so a message is never told twice, nor skipped when its
// change comes late.
// Written by hand: it is a few lines, and bench/sse.mjs measured @fastify/sse against them (5,000
// idle streams: 14.4 KB of RSS a stream against 12.8 KB, 13.3 ms to write one event to every stream
// against 8.0 ms). The plugin also cannot send a `retry:` hint without a data line, and bounds
// nothing for a client that does not read (a stream is ended past MAX_BUFFERED bytes waiting).

/**
 * How often an idle stream sends a comment line, when nothing else is set
 * (NOTIF_STREAM_HEARTBEAT_MS): under the 30 s proxies and load balancers often cut idle connections at.
 */
export const DEFAULT_STREAM_HEARTBEAT_MS = 25_000;
/** How soon a client reconnects after the stream drops (the `retry:` hint). */
export const RETRY_MS = 1000;
/** The most messages a reconnect is told; past it, `refetch`. */
export const REPLAY = 50;
/** The unseen count's cap, as endpoint 13 caps it by default. */
const COUNT_CAP = 100;
/** Bytes waiting to be sent past which a stream is ended (a client that does not read): 1 MB. */
export const MAX_BUFFERED = 1024 * 1024;

/** JSON for a `data:` line: U+2028 and U+2029 escaped, since some readers take them for line ends. */
export const sseJson = (data: unknown) => JSON.stringify(data).replace(/[\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16)}`);

/** The reads every stream of an app shares. */
export interface StreamReads {
  /** A subscriber's messages numbered after `seq`, oldest first: up to REPLAY, and one more when there are more. */
  after(key: [subscriberId: string, seq: number]): Promise<MessageRow[]>;
  /** The Message views of messages, each with its feed's identifier. */
  views(rows: MessageRow[]): Promise<unknown[]>;
  /** The newest commit number of a subscriber's messages (0 when none). */
  newest(subscriberId: string): Promise<number>;
  /** The unseen count, as endpoint 13 gives it. */
  unseen: UnseenCounter;
}

/**
 * The reads of every stream told in the same turn of the event loop (a trigger to many
 * subscribers tells them together) are made together: one statement for their new messages, one
 * for their embeds, instead of two per stream. The keys go in as one parameter (PostgreSQL:
 * arrays; SQLite: a JSON array read by json_each), so each read is one short statement whatever
 * the number of streams, prepared once. Their counts are endpoint 13's (on SQLite the kept
 * counts, on PostgreSQL batched with the endpoint's).
 */
export function streamReads(db: Db, unseen: UnseenCounter): StreamReads {
  const k = db.kysely;
  const after = batched<[subscriberId: string, seq: number], MessageRow[]>(async (keys) => {
    const { rows } =
      db.dialect === 'postgres'
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
    for (const { k: index, ...row } of rows) found[Number(index)]?.push(row);
    return found;
  });
  const views = batched<MessageRow[], unknown[]>(async (lists) => {
    const rows = lists.flat();
    // With its feed's identifier, so a client can tell whether a feed filtered by it shows the message.
    const all = (await loadEmbeds(db, rows)).map((view, index) => ({ ...view, feedIdentifier: rows[index]!.feed_identifier ?? undefined }));
    let start = 0;
    return lists.map((list) => {
      const part = all.slice(start, start + list.length);
      start += list.length;
      return part;
    });
  });
  const newest = async (subscriberId: string) => {
    const row = await k.selectFrom('messages').select((eb) => eb.fn.max('seq').as('top')).where('subscriber_id', '=', subscriberId).executeTakeFirst();
    return Number(row?.top ?? 0);
  };
  return { after, views, newest, unseen };
}

type Event = { count: number } | { message: unknown } | { refetch: true } | { changed: string; messageId?: string };

export interface InboxStreamOptions {
  /** The subscriber's internal id. */
  subscriberId: string;
  reads: StreamReads;
  /** The sealer of this subscriber's event ids (Secrets.eventIds). */
  ids: EventIds;
  /** Writes text to the client; false when the stream must end (the client does not read). */
  write(text: string): boolean;
  /** Ends the stream: a failure, or a client that does not read (it reconnects and catches up). */
  end(): void;
}

/**
 * One open stream: what it has told (the newest message, the count) and the work it does, one
 * piece at a time in the order heard; what one piece says (a message and the new count) leaves in
 * one write.
 */
export class InboxStream {
  readonly #options: InboxStreamOptions;
  #ended = false;
  #chain: Promise<void> = Promise.resolve();
  #out = '';
  #lastCount = -1;
  #lastSeq = 0;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(options: InboxStreamOptions) {
    this.#options = options;
  }

  /**
   * Starts the stream: the `retry:` hint, the heartbeat every `heartbeatMs`, then what the client
   * missed since `lastEventId` (or, without one it knows, a refetch), and the count.
   */
  start(lastEventId: string | undefined, heartbeatMs: number): void {
    this.#options.write(`retry: ${RETRY_MS}\n\n`);
    this.#heartbeat = setInterval(() => {
      if (!this.#options.write(':\n\n')) this.#options.end();
    }, heartbeatMs);
    const told = lastEventId === undefined ? undefined : this.#options.ids.open(lastEventId);
    this.#queue(async () => {
      if (told !== undefined) {
        this.#lastSeq = told;
        await this.#catchUp();
      } else {
        // A first connect, or an id of another kind: from the newest message on, and `refetch`
        // first. What the client read before may predate a message committed before this: a first
        // page read just before it and a count just after would leave it out of the client's feed,
        // the count told here being the one it knows (found by a test; the refetch costs one
        // first-page request of a feed open then, answered 304 when nothing changed).
        this.#lastSeq = await this.#options.reads.newest(this.#options.subscriberId);
        this.#tell({ refetch: true });
      }
      await this.#count();
    });
  }

  /** What a change of the subscriber's inbox makes the stream tell (db/changes.ts calls it). */
  readonly hear = (change: Change): void => {
    this.#queue(async () => {
      if (change.messageId !== undefined || change.subscriberId === EVERY_SUBSCRIBER) await this.#catchUp();
      if (change.what !== undefined) this.#tell(change.target === undefined ? { changed: change.what } : { changed: change.what, messageId: change.target });
      await this.#count();
    });
  };

  /** Stops its work and its heartbeat; the caller ends the connection. */
  stop(): void {
    this.#ended = true;
    clearInterval(this.#heartbeat);
  }

  /** Settles once the work queued so far is done. */
  get settled(): Promise<void> {
    return this.#chain;
  }

  /** One piece of work after the others; a failure ends the stream (the client reconnects). */
  #queue(work: () => Promise<unknown>) {
    this.#chain = this.#chain
      .then(() => (this.#ended ? undefined : work()))
      .then(
        () => this.#flush(),
        () => this.#options.end(),
      );
  }

  #flush() {
    if (!this.#ended && this.#out && !this.#options.write(this.#out)) this.#options.end();
    this.#out = '';
  }

  #tell(event: Event) {
    const id = this.#options.ids.seal(this.#lastSeq);
    this.#out += `id: ${id}\ndata: ${sseJson({ id, ...event })}\n\n`;
  }

  /** Tells the messages committed since the last one told (or asks for a refetch when they are too many). */
  async #catchUp() {
    const { reads, subscriberId } = this.#options;
    const rows = await reads.after([subscriberId, this.#lastSeq]);
    if (rows.length > REPLAY) {
      this.#lastSeq = await reads.newest(subscriberId);
      this.#tell({ refetch: true });
      return;
    }
    if (rows.length === 0) return;
    const views = await reads.views(rows);
    views.forEach((view, index) => {
      this.#lastSeq = Number(rows[index]!.seq);
      this.#tell({ message: view });
    });
  }

  async #count() {
    const count = await this.#options.reads.unseen(this.#options.subscriberId, false, COUNT_CAP);
    if (count === this.#lastCount) return;
    this.#lastCount = count;
    this.#tell({ count });
  }
}
