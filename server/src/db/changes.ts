import { sql, type Kysely, type OperationNodeSource } from 'kysely';
import type { Database } from './schema.ts';

// The change bus: every write that can change a subscriber's unseen count or feed (a new in-app
// message from the engine or the scheduler, mark-all, mark-as, an action, a delete) publishes one
// small change here, and the subscriber's open streams (inbox/stream.ts) hear it.
//
// On SQLite the bus is this process alone. On PostgreSQL a change is a NOTIFY on one channel, and
// every process LISTENs on one connection of its own, so a change made by any process reaches the
// streams of every process (this one's included: one path for all). A NOTIFY sent inside a
// transaction leaves when it commits, so a stream never reads a message before it exists.

/** What a change of the subscriber notifications family did (inbox/family.ts), and a woken snoozed message. */
export type ChangeKind = 'read' | 'unread' | 'seen' | 'archive' | 'unarchive' | 'snooze' | 'unsnooze' | 'wake' | 'complete' | 'revert' | 'delete';

/**
 * A change of one subscriber's inbox: the subscriber (internal id) and, for a new in-app message (or
 * one come back from a snooze, numbered again), its id. A change of the family also says what it
 * was (`what`) and, when it was one message's, which (`target`): the streams tell it, so other
 * browser tabs refresh their counts even when the unseen count did not move.
 */
export interface Change {
  subscriberId: string;
  messageId?: string;
  what?: ChangeKind;
  target?: string;
}

/** The subscriber id of a change every stream of the process hears: recount, changes may have been missed. */
export const EVERY_SUBSCRIBER = '*';

/**
 * A change as a NOTIFY payload carries it between processes: `{"s": subscriberId, "m": messageId}`.
 * Short keys, since a payload holds at most 8,000 bytes and a trigger to many subscribers sends a
 * change each; and the keys every version has sent, so that processes of two versions sharing one
 * database (a rolling deploy) hear each other.
 */
interface WireChange {
  s: string;
  m?: string;
  /** what (ChangeKind); a process of an earlier version ignores it */
  c?: ChangeKind;
  /** target */
  t?: string;
}

function toWire(change: Change): WireChange {
  const wire: WireChange = { s: change.subscriberId };
  if (change.messageId !== undefined) wire.m = change.messageId;
  if (change.what !== undefined) wire.c = change.what;
  if (change.target !== undefined) wire.t = change.target;
  return wire;
}
const fromWire = (wire: WireChange): Change => ({ subscriberId: wire.s, messageId: wire.m, what: wire.c, target: wire.t });

/** The changes as NOTIFY payloads of up to MAX_PAYLOAD_CHARACTERS, each a JSON array of them. */
function packed(changes: Change[]): string[] {
  const payloads: string[] = [];
  let part: string[] = [];
  let size = 0;
  for (const each of changes) {
    const text = JSON.stringify(toWire(each));
    if (size + text.length > MAX_PAYLOAD_CHARACTERS && part.length > 0) {
      payloads.push(`[${part.join(',')}]`);
      part = [];
      size = 0;
    }
    part.push(text);
    // (And the comma before the next.)
    size += text.length + 1;
  }
  payloads.push(`[${part.join(',')}]`);
  return payloads;
}

type Listener = (change: Change) => void;
const CHANNEL = 'notif_changes';
/** A NOTIFY payload's characters at most: PostgreSQL takes 8,000 bytes, and a change's JSON is ASCII. */
const MAX_PAYLOAD_CHARACTERS = 7000;
/** How long after the LISTEN connection was lost another is opened. */
const RECONNECT_MS = 1000;
/** How long a closing connection's goodbye is waited for before its socket is destroyed. */
const GOODBYE_WAIT_MS = 1000;

/**
 * TCP keepalive for every PostgreSQL connection (the pool's and the LISTEN one): an idle connection
 * whose other end went away without a word (a NAT or firewall forgetting it, a host that died hard)
 * is otherwise found out only when a query is sent on it, which then waits for TCP to give up
 * (about 15 minutes on Linux). With it the kernel probes a connection idle for 10 s, and closes it
 * when unanswered: the pool drops it and opens another.
 */
export const TCP_KEEPALIVE = { keepAlive: true, keepAliveInitialDelayMillis: 10_000 } as const;

/**
 * How often the LISTEN connection is asked a trivial query, and how long that query, the connect and
 * the LISTEN may take, when nothing else is set (NOTIF_LISTEN_HEARTBEAT_MS). A connection gone silent
 * never errors: only a question unanswered tells it, and until then this process hears no other's
 * change.
 */
export const DEFAULT_LISTEN_HEARTBEAT_MS = 15_000;

export interface ChangeBusOptions {
  /** Changes cross processes through LISTEN/NOTIFY on this PostgreSQL database; absent: this process only. */
  postgresUrl?: string;
  /** See DEFAULT_LISTEN_HEARTBEAT_MS. */
  heartbeatMs?: number;
}

export class ChangeBus {
  #listeners = new Map<string, Set<Listener>>();
  #pg?: { url: string; client?: import('pg').Client; ready?: Promise<void>; closed?: boolean; retry?: NodeJS.Timeout; beat?: NodeJS.Timeout };
  readonly #heartbeatMs: number;

  constructor(options: ChangeBusOptions = {}) {
    if (options.postgresUrl) this.#pg = { url: options.postgresUrl };
    this.#heartbeatMs = options.heartbeatMs ?? DEFAULT_LISTEN_HEARTBEAT_MS;
  }

  /**
   * Tells every stream of each change's subscriber, in every process (many changes cost one
   * statement). `kysely` may be a transaction: on PostgreSQL the change then leaves at its commit
   * (and never if it rolls back).
   */
  async publish(kysely: Kysely<Database>, change: Change | Change[]): Promise<void> {
    const changes = Array.isArray(change) ? change : [change];
    if (changes.length === 0) return;
    if (!this.#pg) {
      // SQLite: one connection, so a stream's query after this waits for a transaction in progress.
      setImmediate(() => {
        for (const each of changes) this.#emit(each);
      });
      return;
    }
    await sql`select pg_notify(${CHANNEL}, p) from unnest(${packed(changes)}::text[]) as p`.execute(kysely);
  }

  /**
   * PostgreSQL: runs `write` (an update with RETURNING) and, when it returned a row, sends `changes`,
   * in one statement (a NOTIFY leaves when its statement's own transaction commits: with the write,
   * or never), so a single write needs no transaction of its own and its three round trips more
   * (BEGIN, NOTIFY, COMMIT). Resolves to the rows the write returned. Undefined on SQLite: the caller
   * writes and publishes in a transaction, as anywhere.
   */
  writeAndPublish(kysely: Kysely<Database>, write: OperationNodeSource, changes: Change[]): Promise<number> | undefined {
    if (!this.#pg) return undefined;
    return sql<{ written: number | string }>`with written as (${write}),
        told as (select pg_notify(${CHANNEL}, p) from unnest(${packed(changes)}::text[]) as p where exists (select 1 from written))
      select (select count(*) from written) as written, (select count(*) from told) as told`
      .execute(kysely)
      .then(({ rows }) => Number(rows[0]?.written ?? 0));
  }

  /** Calls `listener` on every change of the subscriber (internal id); resolves once changes are heard. */
  async subscribe(subscriberId: string, listener: Listener): Promise<() => void> {
    let set = this.#listeners.get(subscriberId);
    if (!set) {
      set = new Set();
      this.#listeners.set(subscriberId, set);
    }
    const listeners = set;
    listeners.add(listener);
    const off = () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.#listeners.get(subscriberId) === listeners) this.#listeners.delete(subscriberId);
    };
    try {
      if (this.#pg) await (this.#pg.ready ??= this.#listen());
    } catch (err) {
      off();
      throw err;
    }
    return off;
  }

  /** Streams held in this process, for tests and benches: in all, and by subscriber (internal id). */
  get listeners(): { open: number; bySubscriber: Record<string, number> } {
    let open = 0;
    const bySubscriber: Record<string, number> = {};
    for (const [subscriberId, set] of this.#listeners) {
      bySubscriber[subscriberId] = set.size;
      open += set.size;
    }
    return { open, bySubscriber };
  }

  #emit(change: Change) {
    const targets = change.subscriberId === EVERY_SUBSCRIBER ? [...this.#listeners.values()] : [this.#listeners.get(change.subscriberId)];
    for (const set of targets) for (const listener of set ?? []) listener(change);
  }

  /**
   * Opens the LISTEN connection; when it drops, or goes silent (a heartbeat unanswered), opens
   * another and tells every stream to recount (changes may have been missed).
   */
  async #listen(): Promise<void> {
    const pg = this.#pg!;
    const { default: { Client } } = await import('pg');
    const client = new Client({
      connectionString: pg.url,
      application_name: 'notif-inbox listen',
      connectionTimeoutMillis: this.#heartbeatMs,
      query_timeout: this.#heartbeatMs,
      ...TCP_KEEPALIVE,
    });
    const lost = () => {
      if (pg.client !== client || pg.closed) return;
      pg.client = undefined;
      clearInterval(pg.beat);
      client.end().catch(() => {});
      // end() waits for the server's goodbye, which a silent connection never sends: the socket would stay half-open.
      client.connection.stream.destroy();
      pg.retry = setTimeout(() => {
        pg.ready = this.#listen().then(
          () => this.#emit({ subscriberId: EVERY_SUBSCRIBER }),
          () => undefined, // #listen failing schedules the next try itself
        );
      }, RECONNECT_MS);
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (notification) => {
      try {
        const wire = JSON.parse(notification.payload ?? '') as WireChange | WireChange[];
        for (const each of Array.isArray(wire) ? wire : [wire]) this.#emit(fromWire(each));
      } catch {
        // not ours
      }
    });
    pg.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      lost();
      throw err;
    }
    // Unref'd: a graceful stop is not held open by it.
    if (pg.client === client) pg.beat = setInterval(() => client.query('select 1').catch(lost), this.#heartbeatMs).unref();
  }

  async close(): Promise<void> {
    const pg = this.#pg;
    if (!pg) return;
    pg.closed = true;
    clearTimeout(pg.retry);
    clearInterval(pg.beat);
    const client = pg.client;
    if (!client) return;
    // A silent connection never answers the goodbye: it would hold a graceful stop until its timeout.
    const silent = setTimeout(() => client.connection.stream.destroy(), GOODBYE_WAIT_MS);
    await client.end().catch(() => {});
    clearTimeout(silent);
  }
}
