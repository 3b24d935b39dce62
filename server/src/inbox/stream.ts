import { sql } from 'kysely';
import { batched } from '../batched.ts';
import { EVERY_SUBSCRIBER, type Change, type ChangeKind } from '../db/changes.ts';
import type { Db } from '../db/index.ts';
import { read, type UnseenCounter } from '../db/read.ts';
import { payloadOf } from '../db/payloads.ts';
import type { EventIds } from '../db/secrets.ts';
import { DEFAULT_STREAM_EVENT_BYTES, messagePreview, PREVIEW_TEXT_COLUMNS, type PreviewRow } from './stream-preview.ts';

// The live stream of a subscriber's inbox (extension: GET /v1/subscribers/{subscriberId}/notifications/stream,
// Server-Sent Events; routes/stream.ts serves it).
//
// One kind of event (no `event:` line), its `data:` one line of JSON that carries everything the
// client needs, its id included (so a reader need not tell events apart by name, nor keep `id:`):
//   {"id", "count": n}         the unseen count, at once on connect, then whenever it changes
//   {"id", "message": {...}}   each new in-app message, in the order they were committed: a preview
//                              (stream-preview.ts: the fields the elements show, with
//                              `feedIdentifier`, its step's feed, when it has one), at most
//                              NOTIF_STREAM_EVENT_BYTES; `"preview": true` beside it when something
//                              was cut or left out to fit (the client reads the message for the rest)
//   {"id", "changed": what, "messageId"?}  a change of the notifications family (read, unread,
//                              seen, archive, unarchive, snooze, unsnooze, complete, revert,
//                              delete; wake for a snoozed message come back, told as a message
//                              first), with the message's id when it was one message's: other
//                              browser tabs refresh their counts and lists. Written like the
//                              others, one at a time, its text shared by the subscriber's streams
//   {"id", "refetch": true}    at connect without Last-Event-ID (what the client read may predate
//                              it), and on a catch-up that missed more than the stream replays
//                              (REPLAY messages, or NOTIF_STREAM_CATCH_UP_BYTES of events)
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
// nothing for a client that does not read (routes/stream.ts writes one event at a time, and ends a
// stream whose client takes none of one for SLOW_READER_MS).

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

/** JSON for a `data:` line: U+2028 and U+2029 escaped, since some readers take them for line ends. */
export const sseJson = (data: unknown) => JSON.stringify(data).replace(/[\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16)}`);

/** The reads every stream of an app shares. */
export interface StreamReads {
  /**
   * A subscriber's messages numbered after `seq`, oldest first, as previews (each text column cut,
   * stream-preview.ts): up to REPLAY, and one more when there are more. Streams asking the same in
   * the same turn (a subscriber's streams hearing one change) share one read and its rows.
   */
  after(key: [subscriberId: string, seq: number]): Promise<PreviewRow[]>;
  /** How many characters of each text column `after` reads. */
  readonly readChars: number;
  /** The newest commit number of a subscriber's messages (0 when none). */
  newest(subscriberId: string): Promise<number>;
  /** The unseen count, as endpoint 13 gives it. */
  unseen: UnseenCounter;
}

/** The preview's columns of `messages as m`, each text cut at `readChars` characters (with its length). */
function previewColumns(readChars: number) {
  const cut = PREVIEW_TEXT_COLUMNS.map((column) => {
    // The payload: the trigger's, stored once (db/payloads.ts), or the message's own.
    const value = column === 'payload' ? payloadOf('m') : sql`m.${sql.ref(column)}`;
    return sql`substr(${value}, 1, ${sql.lit(readChars)}) as ${sql.ref(column)}, length(${value}) as ${sql.ref(`${column}_length`)}`;
  });
  return sql`m.id, m.seq, m.subscriber_id, m.template_identifier, m.transaction_id, m.feed_identifier, m.created_at, m.read, m.seen, ${sql.join(cut)}`;
}

/**
 * The reads of every stream told in the same turn of the event loop (a trigger to many
 * subscribers tells them together) are made together: one statement for their new messages
 * instead of one per stream, and one per distinct key (the streams of one subscriber share it).
 * The keys go in as one parameter (PostgreSQL: arrays; SQLite: a JSON array read by json_each), so
 * each read is one short statement whatever the number of streams, prepared once. Their counts are
 * endpoint 13's (on SQLite the kept counts, on PostgreSQL batched with the endpoint's).
 */
export function streamReads(db: Db, unseen: UnseenCounter, eventBytes = DEFAULT_STREAM_EVENT_BYTES): StreamReads {
  const k = db.kysely;
  // A character takes a byte at least: more than this many is more than an event may hold.
  const readChars = eventBytes + 1;
  const columns = previewColumns(readChars);
  const load = async (keys: [string, number][]) => {
    const { rows } =
      db.dialect === 'postgres'
        ? await sql<PreviewRow & { k: number | string }>`select k.i - 1 as k, m.* from unnest(${keys.map((key) => key[0])}::text[], ${keys.map((key) => key[1])}::bigint[])
          with ordinality as k(id, seq, i) cross join lateral
          (select ${columns} from messages as m where m.subscriber_id = k.id and m.channel = 'in_app' and m.seq > k.seq order by m.seq limit ${REPLAY + 1}) as m`.execute(k)
        : // SQLite has no LATERAL: a join bounded, per key, by the number of its (REPLAY + 1)th message
          // (a subquery with ORDER BY and LIMIT per key, in a UNION ALL, costs ten times as much).
          await sql<PreviewRow & { k: number | string }>`select j.key as k, ${columns} from json_each(${JSON.stringify(keys)}) as j
          join messages as m indexed by messages_stream on m.subscriber_id = j.value ->> 0 and m.seq > j.value ->> 1
            and m.seq <= coalesce((select n.seq from messages as n indexed by messages_stream where n.subscriber_id = j.value ->> 0
              and n.channel = 'in_app' and n.seq > j.value ->> 1 order by n.seq limit 1 offset ${REPLAY}), ${Number.MAX_SAFE_INTEGER})
          where m.channel = 'in_app' order by j.key, m.seq`.execute(k);
    const found = keys.map((): PreviewRow[] => []);
    for (const { k: index, ...row } of rows) found[Number(index)]?.push(row);
    return found;
  };
  const after = batched<[subscriberId: string, seq: number], PreviewRow[]>(async (keys) => {
    // One read per distinct key: every stream of a subscriber usually asks the same.
    const distinct = new Map<string, number>();
    const unique: [string, number][] = [];
    for (const key of keys) {
      const name = JSON.stringify(key);
      if (distinct.has(name)) continue;
      distinct.set(name, unique.length);
      unique.push(key);
    }
    const found = await load(unique);
    return keys.map((key) => found[distinct.get(JSON.stringify(key))!]!);
  });
  // (Every stream opened reads it: one text, named on PostgreSQL, at once on SQLite: db/read.ts.)
  const newest = async (subscriberId: string) => {
    const [row] = await read<{ top: number | string | null }>(db, 'select max("seq") as "top" from "messages" where "subscriber_id" = ?', [subscriberId], true);
    return Number(row?.top ?? 0);
  };
  return { after, readChars, newest, unseen };
}

type Event = { count: number } | { message: unknown; preview?: true } | { refetch: true } | { changed: ChangeKind; messageId?: string };

/**
 * The most bytes a catch-up (a reconnect's replay, or a live read of many messages) tells before
 * it becomes a refetch, when nothing else is set (NOTIF_STREAM_CATCH_UP_BYTES).
 */
export const DEFAULT_STREAM_CATCH_UP_BYTES = 256 * 1024;

export interface InboxStreamOptions {
  /** The subscriber's internal id. */
  subscriberId: string;
  reads: StreamReads;
  /** The sealer of this subscriber's event ids (Secrets.eventIds). */
  ids: EventIds;
  /** The texts of message events, shared by the subscriber's streams (messageEvents). */
  texts: MessageEvents;
  /** The most bytes a catch-up tells before it becomes a refetch. */
  catchUpBytes?: number;
  /**
   * Writes one event; resolves true once the client may be sent the next (the connection's buffer
   * took it, or drained), false when the stream must end (the client does not read).
   */
  write(chunk: Buffer): Promise<boolean>;
  /** Writes a line the client needs not get (the `retry:` hint, a heartbeat): skipped while the client has not read the last event. */
  writeAside(text: string): void;
  /** Ends the stream: a failure, or a client that does not read (it reconnects and catches up). */
  end(): void;
}

/** The text of one event, as written. */
function eventText(id: string, event: Event): Buffer {
  return Buffer.from(`id: ${id}\ndata: ${sseJson({ id, ...event })}\n\n`);
}

/** The text of a message's event, and of a family change's, built once for all the streams of its subscriber. */
export interface MessageEvents {
  /** The event of a message read by StreamReads.after (the same row for every stream that read it). */
  of(row: PreviewRow, ids: EventIds): Buffer;
  /**
   * The event of a change of the notifications family (`what`, the change's), under the sealed id
   * `id`: the subscriber's streams hear the same change object (db/changes.ts) and share its text
   * when they have told the same messages.
   */
  changed(change: Change, what: ChangeKind, id: string): Buffer;
}

/**
 * Message events as the streams write them: one preview and one text per message row, whatever
 * the number of the subscriber's streams (they share the row: StreamReads.after), each at most
 * `eventBytes` bytes.
 */
export function messageEvents(readChars: number, eventBytes = DEFAULT_STREAM_EVENT_BYTES): MessageEvents {
  const built = new WeakMap<PreviewRow, Buffer>();
  const changes = new WeakMap<Change, Map<string, Buffer>>();
  return {
    of(row, ids) {
      const known = built.get(row);
      if (known) return known;
      const id = ids.seal(Number(row.seq));
      // What the event holds beside the message: its id (twice), the framing and the preview flag.
      const framing = eventText(id, { message: null, preview: true }).length - 'null'.length;
      const { message, cut } = messagePreview(row, readChars, eventBytes - framing, (value) => Buffer.byteLength(sseJson(value)));
      const text = eventText(id, cut ? { message, preview: true } : { message });
      built.set(row, text);
      return text;
    },
    changed(change, what, id) {
      let byId = changes.get(change);
      if (!byId) {
        byId = new Map();
        changes.set(change, byId);
      }
      const known = byId.get(id);
      if (known) return known;
      const event: Event = change.target === undefined ? { changed: what } : { changed: what, messageId: change.target };
      const text = eventText(id, event);
      byId.set(id, text);
      return text;
    },
  };
}

/**
 * One open stream: what it has told (the newest message, the count) and the work it does, one
 * piece at a time in the order heard; its events are written one at a time, each once the client
 * has taken the one before.
 */
export class InboxStream {
  readonly #options: InboxStreamOptions;
  readonly #catchUpBytes: number;
  #ended = false;
  #chain: Promise<void> = Promise.resolve();
  #out: Buffer[] = [];
  #lastCount = -1;
  #lastSeq = 0;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(options: InboxStreamOptions) {
    this.#options = options;
    this.#catchUpBytes = options.catchUpBytes ?? DEFAULT_STREAM_CATCH_UP_BYTES;
  }

  /**
   * Starts the stream: the `retry:` hint, the heartbeat every `heartbeatMs`, then what the client
   * missed since `lastEventId` (or, without one it knows, a refetch), and the count.
   */
  start(lastEventId: string | undefined, heartbeatMs: number): void {
    this.#options.writeAside(`retry: ${RETRY_MS}\n\n`);
    this.#heartbeat = setInterval(() => this.#options.writeAside(':\n\n'), heartbeatMs);
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
      if (change.what !== undefined) this.#tellChanged(change, change.what);
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

  /** One piece of work after the others, then its events written; a failure ends the stream (the client reconnects). */
  #queue(work: () => Promise<unknown>) {
    this.#chain = this.#chain
      .then(() => (this.#ended ? undefined : work()))
      .then(
        () => this.#flush(),
        () => this.#options.end(),
      );
  }

  /** Writes the events told, one at a time, each once the client has taken the one before. */
  async #flush() {
    const events = this.#out;
    this.#out = [];
    for (const event of events) {
      if (this.#ended) return;
      if (!(await this.#options.write(event))) {
        this.#options.end();
        return;
      }
    }
  }

  #tell(event: Event) {
    this.#out.push(eventText(this.#options.ids.seal(this.#lastSeq), event));
  }

  /** Tells a change of the notifications family, its text shared with the subscriber's other streams. */
  #tellChanged(change: Change, what: ChangeKind) {
    this.#out.push(this.#options.texts.changed(change, what, this.#options.ids.seal(this.#lastSeq)));
  }

  /**
   * Tells the messages committed since the last one told, or asks for a refetch when they are too
   * many or their events too large together (NOTIF_STREAM_CATCH_UP_BYTES): one write the client
   * could not take in time would end the stream, and the next reconnect would build it again.
   */
  async #catchUp() {
    const { reads, subscriberId, ids, texts } = this.#options;
    const rows = await reads.after([subscriberId, this.#lastSeq]);
    if (rows.length === 0) return;
    const events = rows.length > REPLAY ? undefined : rows.map((row) => texts.of(row, ids));
    const bytes = events?.reduce((sum, event) => sum + event.length, 0) ?? Infinity;
    // (One message is always told: its event is bounded on its own, by NOTIF_STREAM_EVENT_BYTES.)
    if (!events || (events.length > 1 && bytes > this.#catchUpBytes)) {
      this.#lastSeq = await reads.newest(subscriberId);
      this.#tell({ refetch: true });
      return;
    }
    this.#lastSeq = Number(rows.at(-1)!.seq);
    this.#out.push(...events);
  }

  async #count() {
    const count = await this.#options.reads.unseen(this.#options.subscriberId, false, COUNT_CAP);
    if (count === this.#lastCount) return;
    this.#lastCount = count;
    this.#tell({ count });
  }
}
