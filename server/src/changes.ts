import { sql, type Kysely } from 'kysely';
import type { Database } from './db/schema.ts';

// The change bus: every write that can change a subscriber's unseen count or feed (a new in-app
// message from the engine or the scheduler, mark-all, mark-as, an action, a delete) publishes one
// small change here, and the subscriber's open streams (routes/stream.ts) hear it.
//
// On SQLite the bus is this process alone. On PostgreSQL a change is a NOTIFY on one channel, and
// every process LISTENs on one connection of its own, so a change made by any process reaches the
// streams of every process (this one's included: one path for all). A NOTIFY sent inside a
// transaction leaves when it commits, so a stream never reads a message before it exists.

/** A change: the subscriber (internal id) and, for new in-app messages, one's id; `s: '*'` means "recount all". */
export interface Change {
  s: string;
  m?: string;
}

type Listener = (change: Change) => void;
const CHANNEL = 'notif_changes';

export class ChangeBus {
  #listeners = new Map<string, Set<Listener>>();
  #pg?: { url: string; client?: import('pg').Client; ready?: Promise<void>; closed?: boolean; retry?: NodeJS.Timeout };

  /** `postgresUrl`: changes cross processes through LISTEN/NOTIFY on that database. */
  constructor(postgresUrl?: string) {
    if (postgresUrl) this.#pg = { url: postgresUrl };
  }

  /**
   * Tells every stream of each `change.s`, in every process (many changes cost one statement).
   * `kysely` may be a transaction: on
   * PostgreSQL the change then leaves at its commit (and never if it rolls back).
   */
  async publish(kysely: Kysely<Database>, change: Change | Change[]): Promise<void> {
    const changes = Array.isArray(change) ? change : [change];
    if (changes.length === 0) return;
    if (this.#pg) {
      // One statement for them all: payloads of up to ~7,000 bytes (NOTIFY takes 8,000), each a JSON array.
      const payloads: string[] = [];
      let part: string[] = [];
      let size = 0;
      for (const c of changes) {
        const text = JSON.stringify(c);
        if (size + text.length > 7000 && part.length) (payloads.push(`[${part}]`), (part = []), (size = 0));
        part.push(text);
        size += text.length + 1;
      }
      payloads.push(`[${part}]`);
      await sql`select pg_notify(${CHANNEL}, p) from unnest(${payloads}::text[]) as p`.execute(kysely);
    }
    // SQLite: one connection, so a stream's query after this waits for a transaction in progress.
    else setImmediate(() => changes.forEach((c) => this.#emit(c)));
  }

  /** Calls `listener` on every change of subscriber `s` (internal id); resolves once changes are heard. */
  async subscribe(s: string, listener: Listener): Promise<() => void> {
    let set = this.#listeners.get(s);
    if (!set) this.#listeners.set(s, (set = new Set()));
    set.add(listener);
    const off = () => {
      set.delete(listener);
      if (!set.size && this.#listeners.get(s) === set) this.#listeners.delete(s);
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
    for (const [s, set] of this.#listeners) open += bySubscriber[s] = set.size;
    return { open, bySubscriber };
  }

  #emit(change: Change) {
    const targets = change.s === '*' ? [...this.#listeners.values()] : [this.#listeners.get(change.s)];
    for (const set of targets) for (const listener of set ?? []) listener(change);
  }

  /** Opens the LISTEN connection; when it drops, opens another and tells every stream to recount (changes may have been missed). */
  async #listen(): Promise<void> {
    const pg = this.#pg!;
    const { default: { Client } } = await import('pg');
    const client = new Client({ connectionString: pg.url, application_name: 'notif-inbox listen' });
    const lost = () => {
      if (pg.client !== client || pg.closed) return;
      pg.client = undefined;
      client.end().catch(() => {});
      pg.retry = setTimeout(() => {
        pg.ready = this.#listen().then(
          () => this.#emit({ s: '*' }),
          () => undefined, // #listen failing schedules the next try itself
        );
      }, 1000);
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (n) => {
      try {
        for (const change of [JSON.parse(n.payload ?? '') as Change | Change[]].flat()) this.#emit(change);
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
  }

  async close(): Promise<void> {
    const pg = this.#pg;
    if (!pg) return;
    pg.closed = true;
    clearTimeout(pg.retry);
    await pg.client?.end().catch(() => {});
  }
}
