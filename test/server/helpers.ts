import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// Every server test talks to the real service, started as its own process on a free port with a
// temporary database, over real HTTP.

const ROOT = resolve(import.meta.dirname, '../..');

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

  constructor(private extraEnv: Record<string, string> = {}, dbPath?: string) {
    this.dir = mkdtempSync(join(tmpdir(), 'notif-test-'));
    this.dbPath = dbPath ?? process.env.TEST_DATABASE_URL ?? join(this.dir, 'notif.db');
  }

  /** Starts the service and resolves once it prints that it is listening. */
  async start(args: string[] = ['--no-seed']): Promise<this> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', 'serve', '--port', '0', '--db', this.dbPath, ...args], {
      cwd: ROOT,
      env: { ...process.env, NOTIF_API_KEYS: KEY_LIST, ...this.extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let output = '';
    this.url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start in 20 s:\n${output}`)), 20_000);
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
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(hard ? 'SIGKILL' : 'SIGTERM');
    await exited;
    this.child = undefined;
  }

  async restart(hard = false): Promise<void> {
    await this.stop(hard);
    await this.start();
  }

  /** Stops the server and removes its temporary folder. */
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
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

/** Starts a fresh server for a test file; call `dispose()` in `after`. */
export async function startServer(extraEnv: Record<string, string> = {}): Promise<TestServer> {
  return new TestServer(extraEnv).start();
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
