import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { connect } from 'node:net';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type MigrationProvider } from 'kysely';
import type { Database } from './schema.ts';
import { migrations } from './migrations.ts';
import { ChangeBus, TCP_KEEPALIVE } from './changes.ts';
import { startCheckpointer } from './wal-checkpoints.ts';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /**
   * Runs `fn` while no other process runs an `exclusive` section on this database: start-up work
   * that reads then writes (registering keys, seeding) when several servers start at once on one
   * PostgreSQL database. SQLite runs `fn` as it is (one process per file is the expected setup).
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Changes of subscribers' inboxes, heard by their streams (across processes on PostgreSQL). */
  changes: ChangeBus;
  /**
   * SQLite: runs a read (`?` placeholders) at once, without Kysely's machinery, which showed in
   * profiles of the hot paths (the unseen count, the feed's page).
   * Undefined when a transaction is open on the connection (Kysely holds every other query until it
   * ends; a read now would see its uncommitted rows), and on PostgreSQL: then go through Kysely.
   */
  readNow?<R>(text: string, params: readonly unknown[]): R[] | undefined;
  /**
   * PostgreSQL: runs a read (`$1` placeholders) outside any transaction as a named statement, which
   * each connection parses and plans once, for the first PREPARED_TEXTS texts it is given; later
   * texts run unnamed (every connection keeps each named one: the bound keeps a stream of new
   * shapes from growing the database's memory). Callers give it texts of a few fixed shapes only
   * (db/read.ts, `fixed`), so no client can take the names from the hot reads (the unseen count, a
   * page's rows without projection or filter or with the elements' projection and its count, a
   * subscriber's lookup, the payloads, messages and templates read by an array of ids): bench:server on PostgreSQL, alternating, unseen counts 9,166 and 10,106
   * a second unnamed, 16,872 and 17,106 named; cached feed pages as the elements ask 6,506 and 6,964,
   * then 12,161 and 12,507.
   * Undefined on SQLite, and with NOTIF_PG_PREPARED=0 (a pooler that cannot keep them: PgBouncer in
   * transaction mode without max_prepared_statements, which versions before 1.21 lack and 1.21 sets
   * to 0 by default).
   */
  prepared?<R>(text: string, params: readonly unknown[]): Promise<R[]>;
  /** Why the database cannot serve (unreachable, its file gone, migrations of this version missing); null when it can. */
  unready(): Promise<string | null>;
  /**
   * The passphrase the secrets at rest are sealed with (db/secrets.ts: NOTIF_ENCRYPTION_KEY); absent,
   * a random key kept in the database is.
   */
  readonly encryptionKey?: string;
  close(): Promise<void>;
}

export interface DbOptions {
  /** A SQLite file path, ':memory:', or a postgres:// URL. */
  location: string;
  /** See Db.encryptionKey. */
  encryptionKey?: string;
  /** PostgreSQL only; each has its default. */
  postgres?: PostgresOptions;
}

export interface PostgresOptions {
  /** Connections of the pool, per process (default DEFAULT_POOL_SIZE). */
  poolSize?: number;
  /** Run the hot reads as named statements (default true; see Db.prepared). */
  preparedStatements?: boolean;
  /** How long a query of the pool may go unanswered (default DEFAULT_QUERY_TIMEOUT_MS). */
  queryTimeoutMs?: number;
  /** How long a request may wait for a connection, new or free (default DEFAULT_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  /** How often the LISTEN connection is asked a trivial query (default DEFAULT_LISTEN_HEARTBEAT_MS, changes.ts). */
  listenHeartbeatMs?: number;
}

/** Connections of the pool, per process, when nothing else is set (NOTIF_PG_POOL_SIZE). */
export const DEFAULT_POOL_SIZE = 10;

/** Opens the database and brings its schema up to date. */
export async function openDatabase({ location, encryptionKey, postgres = {} }: DbOptions): Promise<Db> {
  if (/^postgres(ql)?:\/\//.test(location)) {
    const timeouts = {
      queryMs: postgres.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS,
      connectMs: postgres.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    };
    await migratePostgres(location, timeouts.connectMs);
    const db = await openPostgres(location, postgres, timeouts);
    return { ...db, encryptionKey };
  }
  const db = { ...(await openSqlite(location)), encryptionKey };
  try {
    await migrate(db.kysely);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/** How long a statement waits for another connection's write lock on the file (a second process, a backup) before it fails. */
const SQLITE_BUSY_TIMEOUT_MS = 5000;

async function openSqlite(path: string): Promise<Db> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SQLite(path);
  // WAL lets readers run beside the writer. synchronous=NORMAL in WAL mode keeps every committed
  // transaction across a crash of the process (kill -9); only an OS crash or power loss can lose
  // the last ones.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  sqlite.pragma('foreign_keys = ON');
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  const gone = () => (path !== ':memory:' && !existsSync(path) ? 'the database file is gone' : null);
  // Statements of its own (a statement is used by one caller at a time); the reads run to their
  // end before any other JavaScript does.
  const reads = withStatementCache(sqlite);
  const readNow = <R>(text: string, params: readonly unknown[]) => (sqlite.inTransaction ? undefined : (reads.prepare(text).all(...params) as R[]));
  // Checkpoints of the write-ahead log run in a worker thread, not in the commits on the event loop.
  const checkpointer = path === ':memory:' ? undefined : await startCheckpointer(sqlite, path);
  const close = async () => {
    await checkpointer?.stop();
    await kysely.destroy();
  };
  return { kysely, dialect: 'sqlite', exclusive: (fn) => fn(), changes: new ChangeBus(), readNow, unready: () => unready(kysely, gone), close };
}

/** Prepared statements one cache keeps; past it the cache starts again. */
const MAX_CACHED_STATEMENTS = 1000;

/**
 * Kysely prepares every query anew; preparing costs as much as running the hot queries (feed,
 * unseen count). The same SQL text reuses its prepared statement. Kysely runs one query at a time
 * on this connection, so a statement is never in use twice at once.
 */
function withStatementCache(sqlite: SQLite.Database) {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (!statement) {
        // SQL built from variable-length lists (IN (...)) makes new texts; keep the cache bounded.
        if (statements.size >= MAX_CACHED_STATEMENTS) statements.clear();
        statement = sqlite.prepare(text);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}

/**
 * How long a query of the pool may go unanswered (NOTIF_PG_QUERY_TIMEOUT_MS), and how long a request
 * may wait for a connection, new or freed in a full pool (NOTIF_PG_CONNECT_TIMEOUT_MS), when nothing
 * else is set. Migrations run on connections of their own, without the first: a long one is not cut.
 */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** The two timeouts in force (see above). */
interface Timeouts {
  queryMs: number;
  connectMs: number;
}

/** The database stopped answering a query (the query timeout). */
export class DatabaseUnavailable extends Error {}

/**
 * Whether a request failed because the database could not be reached, let its connection go or was
 * too busy: a query unanswered or cancelled (57014), a connection refused, reset, ended, or not had
 * in time (opened, or free in a pool that is full: NOTIF_PG_CONNECT_TIMEOUT_MS), the server shutting
 * down or starting (SQLSTATE 57P01 to 57P03) or a connection exception (class 08). The request may
 * be tried again: a 503, not an unexpected error.
 */
export const databaseUnavailable = (err: unknown): boolean => {
  if (err instanceof DatabaseUnavailable) return true;
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return (
    (typeof code === 'string' && /^(ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|57014|57P0[123]|08...)$/.test(code)) ||
    // (pg's own: a connection ended or lost, waiting for a connection too long; the second when a
    // transaction's rollback meets the connection its query lost, which Kysely throws in its place)
    (typeof message === 'string' &&
      /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/.test(message))
  );
};

/**
 * A pool of `max` connections named `name` (application_name), each with TCP keepalive, and a request
 * for one given up after `connectTimeoutMs`: the settings of every pool of the service.
 */
async function newPool(url: string, name: string, max: number, connectTimeoutMs: number) {
  const { default: pg } = await import('pg');
  return new pg.Pool({ connectionString: url, max, application_name: name, connectionTimeoutMillis: connectTimeoutMs, ...TCP_KEEPALIVE });
}

/**
 * Brings a PostgreSQL database's schema up to date, one process at a time, on connections of its own
 * with no query timeout (two: the lock's, and the migrator's).
 */
async function migratePostgres(url: string, connectTimeoutMs: number) {
  const pool = await newPool(url, 'notif-inbox migrate', MIGRATION_CONNECTIONS, connectTimeoutMs);
  pool.on('error', () => {}); // a connection lost fails the migration's query
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    await withAdvisoryLock(kysely, MIGRATION_LOCK, () => migrate(kysely));
  } finally {
    await kysely.destroy();
  }
}

/** The migration's connections: the advisory lock's, and the migrator's. */
const MIGRATION_CONNECTIONS = 2;

async function openPostgres(url: string, options: PostgresOptions, timeouts: Timeouts): Promise<Db> {
  const { default: pg } = await import('pg');
  // int8 (bigint columns: epoch milliseconds; count(*)) fits in a double: read it as a number, as
  // better-sqlite3 does, so the same code sees the same types on both databases.
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  const pool = await newPool(url, 'notif-inbox', options.poolSize ?? DEFAULT_POOL_SIZE, timeouts.connectMs);
  const unwatch = watchConnections(pool, timeouts);
  // An idle connection the server drops (restart, failover, an administrator) must not take the
  // process down; the pool replaces it on the next query.
  pool.on('error', (err) => console.error('postgres: idle connection lost:', err.message));
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const changes = new ChangeBus({ postgresUrl: url, heartbeatMs: options.listenHeartbeatMs });
  const names = new Map<string, string>();
  let renamed = 0;
  const prepared = async <R>(text: string, values: readonly unknown[]): Promise<R[]> => {
    let name = names.get(text);
    if (!name && names.size < PREPARED_TEXTS) {
      name = `notif_${names.size}`;
      names.set(text, name);
    }
    /** Runs the read as the statement `statementName`, or unnamed. */
    const run = async (statementName: string | undefined) => {
      const query = statementName ? { text, values: values as unknown[], name: statementName } : { text, values: values as unknown[] };
      return (await pool.query(query)).rows as R[];
    };
    try {
      return await run(name);
    } catch (err) {
      // A column a named statement reads changed type (another version migrating, a rolling
      // deploy): every connection that prepared it fails it once ("cached plan must not change
      // result type"; pool.query then closes that connection, and the pool opens a new one). The
      // text gets a new name, prepared again as each connection meets it, and this read runs once
      // more, so it cannot meet the old plan on another connection; past PREPARED_TEXTS renames,
      // unnamed (renames are not left to grow without end).
      // (0A000 is "feature not supported" in general: only this one, raised where a cached plan is revalidated.)
      const { code, routine } = err as { code?: string; routine?: string };
      if (!name || code !== '0A000' || routine !== 'RevalidateCachedQuery') throw err;
      // (Only the first read to fail on a name renames it; the others meet the new name.)
      if (names.get(text) === name && renamed < PREPARED_TEXTS) {
        renamed++;
        names.set(text, `notif_${PREPARED_TEXTS + renamed}`);
      }
      const current = names.get(text);
      return run(current === name ? undefined : current);
    }
  };
  return {
    kysely,
    dialect: 'postgres',
    prepared: options.preparedStatements === false ? undefined : prepared,
    exclusive: (fn) => withAdvisoryLock(kysely, STARTUP_LOCK, fn),
    changes,
    unready: () => unready(kysely),
    close: async () => {
      unwatch();
      await changes.close();
      await kysely.destroy();
    },
  };
}

/**
 * Watches the pool's connections. One whose query has gone unanswered for the query timeout is
 * destroyed: a connection gone silent (a host that died hard, a partition, a NAT or firewall dropping
 * its state) never errors on its own, and TCP would retry the query's packets for about 15 minutes.
 * The query fails (the request answers 503), the pool lets the connection go and opens another for
 * the next. A sweep a quarter of the timeout apart finds them, so a query costs nothing more (a timer
 * of each query's own measured a few percent of the unseen count's throughput). Every connection's
 * errors are heard too: the pool listens only while a connection is idle, and an error emitted while a
 * query holds it (a reset during a failover) would be thrown, taking the process down; the query
 * fails with it all the same. Returns what stops the sweep.
 */
/** How many sweeps of the connections run per query timeout: a silent query is found within a quarter more. */
const SWEEPS_PER_TIMEOUT = 4;

function watchConnections(pool: import('pg').Pool, timeouts: Timeouts): () => void {
  const watched = new Map<import('pg').PoolClient, { query?: unknown; since: number }>();
  pool.on('connect', (client) => {
    client.on('error', () => {});
    watched.set(client, { since: 0 });
  });
  pool.on('remove', (client) => watched.delete(client));
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [client, seen] of watched) {
      // (pg's own: the query on the wire, or undefined)
      const query = (client as unknown as { _getActiveQuery(): unknown })._getActiveQuery();
      if (query !== seen.query) {
        seen.query = query;
        seen.since = now;
      } else if (query && now - seen.since >= timeouts.queryMs) {
        // The server is asked to cancel it too: a backend waiting for a lock (another version's
        // migration) or still working would go on without its client, and retries would pile up more.
        cancelOnServer(client, timeouts.connectMs);
        client.connection.stream.destroy(new DatabaseUnavailable(`the database did not answer within ${timeouts.queryMs} ms`));
      }
    }
  }, timeouts.queryMs / SWEEPS_PER_TIMEOUT);
  sweep.unref();
  return () => clearInterval(sweep);
}

/**
 * Asks the server to cancel what `client`'s backend runs: PostgreSQL's CancelRequest (its process id
 * and secret key, which a pooler such as PgBouncer maps to its own), on a connection of its own that
 * gives up after `connectTimeoutMs` (a host that died hard answers nothing). A best effort: nothing
 * waits for it, and nothing tells whether it was heard.
 */
/** PostgreSQL's CancelRequest message: 16 bytes, code 80877102 (1234 in the high 16 bits, 5678 in the low). */
const CANCEL_REQUEST_LENGTH = 16;
const CANCEL_REQUEST_CODE = 80877102;

function cancelOnServer(client: import('pg').PoolClient, connectTimeoutMs: number) {
  const { host, port, processID, secretKey } = client as unknown as { host: string; port: number; processID?: number; secretKey?: number };
  if (!processID) return;
  // The message: its length, the request code, then the backend's process id and secret key (32-bit each).
  const request = Buffer.alloc(CANCEL_REQUEST_LENGTH);
  request.writeInt32BE(CANCEL_REQUEST_LENGTH, 0);
  request.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  request.writeInt32BE(processID, 8);
  request.writeInt32BE(secretKey!, 12);
  const socket = host.startsWith('/') ? connect(`${host}/.s.PGSQL.${port}`) : connect(port, host);
  socket.setTimeout(connectTimeoutMs, () => socket.destroy());
  socket.on('error', () => {});
  socket.on('connect', () => socket.end(request));
}

/** How many distinct texts `prepared` names (see Db.prepared). */
const PREPARED_TEXTS = 64;

const READY_TIMEOUT_MS = 2000;

/** Reads which migrations are applied, within READY_TIMEOUT_MS; the reason it cannot serve, or null. */
async function unready(kysely: Kysely<Database>, gone: () => string | null = () => null): Promise<string | null> {
  const reason = gone();
  if (reason) return reason;
  let timer: NodeJS.Timeout | undefined;
  try {
    const rows = await Promise.race([
      sql<{ name: string }>`select name from kysely_migration`.execute(kysely),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
      }),
    ]);
    const applied = new Set(rows.rows.map((r) => r.name));
    const missing = Object.keys(migrations).filter((name) => !applied.has(name));
    return missing.length > 0 ? `migrations not applied: ${missing.join(', ')}` : null;
  } catch (err) {
    return `database unreachable: ${(err as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}

// Keys of the session-level advisory locks: any constants, the same in every process ('not' in
// ASCII, then 1 and 2).
const MIGRATION_LOCK = 0x6e6f7401;
const STARTUP_LOCK = 0x6e6f7402;

/**
 * Runs `fn` while holding a PostgreSQL advisory lock on one connection of the pool (`fn` itself uses
 * the others). Migrations take it too, so servers starting at once on a new database never race in
 * Kysely's bookkeeping (CREATE TABLE IF NOT EXISTS is not safe against a concurrent one).
 */
async function withAdvisoryLock<T>(kysely: Kysely<Database>, lock: number, fn: () => Promise<T>): Promise<T> {
  return kysely.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${lock})`.execute(conn);
    try {
      return await fn();
    } finally {
      await sql`select pg_advisory_unlock(${lock})`.execute(conn);
    }
  });
}

async function migrate(kysely: Kysely<Database>) {
  const provider: MigrationProvider = { getMigrations: async () => migrations };
  const migrator = new Migrator({ db: kysely, provider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}
