import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
// @ts-expect-error a plain .mjs module without declarations
import { hasExited } from '../../scripts/service.mjs';

// Every server test talks to the real service, started as its own process on a free port with a
// temporary database, over real HTTP.
//
// With TEST_DATABASE_URL=postgres://... (a role allowed to CREATE DATABASE; scripts/ci-postgres.sh
// makes one) every TestServer gets its own fresh PostgreSQL database instead of a SQLite file,
// created on first start and dropped by dispose(), so test files stay isolated and run in parallel.

const ROOT = resolve(import.meta.dirname, '../..');
/**
 * How a test starts the service: compiled (server/dist, as production runs it) when that build is
 * newer than every file of server/src, else from source through tsx. A start under tsx costs about
 * twice the CPU (measured: 4.3 to 5.4 s against 2.2 to 2.4 s on a busy machine), and the suites start
 * the service a few hundred times; `npm run test:server` builds first (`npm run build:server`), and
 * a test file run alone after an edit of server/src still tests the edited code, through tsx.
 */
export const SERVICE_COMMAND: readonly string[] = distIsFresh() ? ['server/dist/main.js'] : ['--import', 'tsx', 'server/src/main.ts'];

/** Whether server/dist/main.js is newer than every file of server/src. */
function distIsFresh(): boolean {
  let built: number;
  try {
    built = statSync(join(ROOT, 'server/dist/main.js')).mtimeMs;
  } catch {
    return false;
  }
  const newest = (folder: string): number =>
    Math.max(
      0,
      ...readdirSync(folder, { withFileTypes: true }).map((entry) => {
        const path = join(folder, entry.name);
        return entry.isDirectory() ? newest(path) : statSync(path).mtimeMs;
      }),
    );
  return newest(join(ROOT, 'server/src')) < built;
}

/** How long a starting service may take to print that it listens before it counts as hung (see start()). */
const START_GUARD_MS = 90_000;
/**
 * The overload guard's event loop limit for test services (NOTIF_MAX_EVENT_LOOP_DELAY_MS, 1 s in
 * production): on a test machine shared with browsers and other services, every event loop is late
 * because the machine is busy, not because the service is overloaded, and a 503 "under pressure"
 * would fail a test of something else. The guard itself is tested with its heap limit
 * (operations.test.ts); a test that wants the event loop limit sets it.
 */
const TEST_EVENT_LOOP_DELAY_LIMIT_MS = '60000';

/**
 * How late a delayed or digested step may run and still be "on time" in a test: the scheduler
 * sleeps at most 250 ms, and a loaded CI machine (several server processes and a browser on two
 * cores) can hold a process's event loop for a second or more. bench/scheduler.ts measures
 * lateness; the tests check that a due job runs without waiting for anything else.
 */
export const ON_TIME_MS = 2500;

/** Keys registered at start: two environments of one organization, and a second organization. */
export const KEYS = {
  a: 'test_key_a',
  b: 'test_key_b',
  other: 'test_key_other_org',
} as const;
const KEY_LIST = `${KEYS.a}=acme/production,${KEYS.b}=acme/staging,${KEYS.other}=globex/production`;

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Raw text body instead of JSON. */
  raw?: string;
  query?: Record<string, string | number | boolean | (string | number)[] | undefined>;
  headers?: Record<string, string>;
}

export class TestServer {
  url = '';
  private child?: ChildProcess;
  readonly dir: string;
  readonly dbPath: string;

  /** The PostgreSQL database this server made for itself (created on first start, dropped by dispose). */
  private ownDatabase?: { adminUrl: string; name: string; created: boolean };

  /**
   * `dbPath`: a SQLite file or a postgres:// URL to use (for instance another server's `dbPath`, to
   * run two processes on one database); by default a fresh one of its own.
   */
  constructor(private extraEnv: Record<string, string> = {}, dbPath?: string) {
    this.dir = mkdtempSync(join(tmpdir(), 'notif-test-'));
    const adminUrl = process.env.TEST_DATABASE_URL;
    if (dbPath) {
      this.dbPath = dbPath;
    } else if (adminUrl && isPostgresUrl(adminUrl)) {
      const name = `notif_test_${randomBytes(6).toString('hex')}`;
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      this.dbPath = url.toString();
      this.ownDatabase = { adminUrl, name, created: false };
    } else {
      this.dbPath = join(this.dir, 'notif.db');
    }
  }

  /** True when this server runs on PostgreSQL. */
  get postgres(): boolean {
    return isPostgresUrl(this.dbPath);
  }

  /**
   * Starts the service and resolves once it prints that it is listening (or rejects when it exits first).
   * START_GUARD_MS only catches a service that hangs: a start costs about 3.5 s of CPU under tsx
   * (measured: module loading about 1 s, the routes' schemas compiled about 0.5 s, the rest tsx), so on
   * two cores shared with a dozen busy processes it takes 15 to 30 s of wall time without being wrong.
   */
  async start(args: string[] = ['--no-seed']): Promise<this> {
    const own = this.ownDatabase;
    if (own && !own.created) {
      await adminQuery(own.adminUrl, `CREATE DATABASE "${own.name}"`);
      own.created = true;
    }
    const child = spawn(process.execPath, [...SERVICE_COMMAND, 'serve', '--port', '0', '--db', this.dbPath, ...args], {
      cwd: ROOT,
      // DATABASE_URL wins over --db in the service: point it at this server's database too.
      env: {
        ...process.env,
        DATABASE_URL: this.postgres ? this.dbPath : '',
        NOTIF_API_KEYS: KEY_LIST,
        NOTIF_MAX_EVENT_LOOP_DELAY_MS: TEST_EVENT_LOOP_DELAY_LIMIT_MS,
        ...this.extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let output = '';
    this.url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => {
        // A hung service must not outlive its test: its open pipes would keep the test file's process alive.
        child.kill('SIGKILL');
        reject(new Error(`server did not start in ${START_GUARD_MS / 1000} s:\n${output}`));
      }, START_GUARD_MS);
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        const m = /listening on (http:\/\/\S+)/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolveUrl(m[1]!);
        }
      });
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        if (process.env.TEST_SERVER_LOG) process.stderr.write(chunk);
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`server exited with ${code} before listening:\n${output}`));
      });
    });
    this.output = () => output;
    return this;
  }

  output: () => string = () => '';

  /** Stops the server gracefully (SIGTERM), or at once with `kill -9` when `hard`. */
  async stop(hard = false): Promise<void> {
    const child = this.child;
    if (!child || hasExited(child)) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(hard ? 'SIGKILL' : 'SIGTERM');
    await exited;
    this.child = undefined;
  }

  async restart(hard = false): Promise<void> {
    await this.stop(hard);
    await this.start();
  }

  /** Stops the server and removes its temporary folder (and its own PostgreSQL database). */
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
    const own = this.ownDatabase;
    if (own?.created) {
      own.created = false;
      // FORCE: another process started on this database (a test's second server) may still hold a connection.
      await dropDatabase(own.adminUrl, own.name);
    }
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Reply<T>> {
    const url = new URL(path, this.url);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(v));
    }
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? KEYS.a : options.key;
    if (key !== null) headers.authorization = `ApiKey ${key}`;
    let body: string | undefined;
    if (options.raw !== undefined) {
      body = options.raw;
      headers['content-type'] ??= 'application/json';
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(url, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if (text && (res.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  get = <T = any>(path: string, options?: RequestOptions) => this.request<T>('GET', path, options);
  post = <T = any>(path: string, body?: unknown, options?: RequestOptions) => this.request<T>('POST', path, { ...options, body });
  put = <T = any>(path: string, body?: unknown, options?: RequestOptions) => this.request<T>('PUT', path, { ...options, body });
  patch = <T = any>(path: string, body?: unknown, options?: RequestOptions) => this.request<T>('PATCH', path, { ...options, body });
  delete = <T = any>(path: string, options?: RequestOptions) => this.request<T>('DELETE', path, options);
}

function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//.test(location);
}

/** Runs one statement on the admin database (CREATE/DROP DATABASE cannot run in a transaction). */
export async function adminQuery(adminUrl: string, statement: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * Drops a test database. FORCE ends other sessions on it, but PostgreSQL refuses (42501) when one of
 * them is an autovacuum worker and the role lacks pg_signal_backend (scripts/ci-postgres.sh grants it;
 * a developer's own role may not have it): then wait for the worker to finish and try again.
 */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      return;
    } catch (err) {
      const retriable = ['42501', '55006'].includes((err as { code?: string }).code ?? '');
      if (!retriable || attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/**
 * A fresh database opened in this process (for tests of the service's parts without its HTTP): a
 * new PostgreSQL database with TEST_DATABASE_URL, else a SQLite file in a temporary directory.
 * `done` closes it and drops or removes it.
 */
export async function openTestDatabase(): Promise<{ db: import('../../server/src/db/index.ts').Db; done: () => Promise<void> }> {
  const { openDatabase } = await import('../../server/src/db/index.ts');
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl) {
    const name = `notif_test_${randomBytes(6).toString('hex')}`;
    await adminQuery(adminUrl, `CREATE DATABASE "${name}"`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const db = await openDatabase({ location: url.toString() });
    return { db, done: async () => (await db.close(), await dropDatabase(adminUrl, name)) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'notif-db-'));
  const db = await openDatabase({ location: join(dir, 'notif.db') });
  return { db, done: async () => (await db.close(), rmSync(dir, { recursive: true, force: true })) };
}

/**
 * `db` with its query builder's `selectFrom(table)` passed through `seen`, which returns the builder
 * to use (the same, or a wrapper): tests count or hold the lookups of one table.
 */
export function watchSelects(db: import('../../server/src/db/index.ts').Db, seen: (from: string, builder: any) => any): import('../../server/src/db/index.ts').Db {
  const kysely = new Proxy(db.kysely, {
    get(target, name) {
      const value = Reflect.get(target, name, target);
      if (name !== 'selectFrom' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return (from: string, ...rest: unknown[]) => seen(from, value.call(target, from, ...rest));
    },
  });
  return { ...db, kysely };
}

/** Starts a fresh server for a test file; call `dispose()` in `after`. */
export async function startServer(extraEnv: Record<string, string> = {}): Promise<TestServer> {
  const server = new TestServer(extraEnv);
  try {
    return await server.start();
  } catch (err) {
    await server.dispose().catch(() => {});
    throw err;
  }
}

/** Asserts the error body of decisions.md and returns it. */
export function expectErrorBody(reply: Reply, status: number): Reply['body'] {
  if (reply.status !== status) {
    throw new Error(`expected status ${status}, got ${reply.status}: ${JSON.stringify(reply.body)}`);
  }
  const b = reply.body;
  for (const field of ['statusCode', 'error', 'message', 'timestamp', 'path']) {
    if (!(field in b)) throw new Error(`error body lacks '${field}': ${JSON.stringify(b)}`);
  }
  if (b.statusCode !== status) throw new Error(`error body statusCode ${b.statusCode} != ${status}`);
  return b;
}

/** Runs SQL on a test server's own database (`?` placeholders on both SQLite and PostgreSQL). */
export async function sqlOn(server: TestServer, text: string, params: unknown[] = []): Promise<any[]> {
  if (server.postgres) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: server.dbPath });
    await client.connect();
    try {
      let i = 0;
      return (await client.query(text.replace(/\?/g, () => `$${++i}`), params)).rows;
    } finally {
      await client.end();
    }
  }
  const { default: SQLite } = await import('better-sqlite3');
  const db = new SQLite(server.dbPath);
  try {
    const statement = db.prepare(text);
    if (statement.reader) return statement.all(...params);
    statement.run(...params);
    return [];
  } finally {
    db.close();
  }
}
