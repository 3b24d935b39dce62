import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import SQLite from 'better-sqlite3';
import { KEYS, type TestServer } from './helpers.ts';

// Helpers of the engine tests (engine, scheduler, digest, channels, pg-workers).

/**
 * Reads the server's database directly (SQLite file or PostgreSQL), for what the API does not show:
 * messages of other channels than in_app, jobs' run_at. `?` placeholders on both databases.
 */
export async function dbQuery<T = any>(server: TestServer, text: string, params: unknown[] = []): Promise<T[]> {
  if (server.postgres) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: server.dbPath });
    await client.connect();
    try {
      let n = 0;
      const result = await client.query(text.replace(/\?/g, () => `$${++n}`), params);
      return result.rows as T[];
    } finally {
      await client.end();
    }
  }
  const db = new SQLite(server.dbPath, { readonly: true });
  try {
    return db.prepare(text).all(...params) as T[];
  } finally {
    db.close();
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns something other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/**
 * Resolves once no job of a trigger is pending any more: a trigger to more than 25 recipients
 * answers before it writes its runs (server/src/engine/trigger.ts). For workflows with no step that
 * waits (a delay's job stays pending until it ends).
 */
export async function runsWritten(server: TestServer, transactionId: string, timeoutMs = 10_000): Promise<void> {
  await waitFor(
    `the runs of ${transactionId} to be written`,
    async () => {
      const [row] = await dbQuery<{ n: number | string }>(server, `SELECT COUNT(*) AS n FROM jobs WHERE transaction_id = ? AND status = 'pending'`, [transactionId]);
      return Number(row!.n) === 0 ? true : undefined;
    },
    timeoutMs,
  );
}

/** The notification of a transaction (asserts there is exactly one). */
export async function notificationOf(server: TestServer, transactionId: string, key: string = KEYS.a) {
  const r = await server.get('/v1/notifications', { query: { transactionId, limit: 50 }, key });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.data.length, 1, `one notification for ${transactionId}`);
  return r.body.data[0];
}

/** Every notification of a transaction, oldest first. */
export async function notificationsOf(server: TestServer, transactionId: string, key: string = KEYS.a) {
  const r = await server.get('/v1/notifications', { query: { transactionId, limit: 50 }, key });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return [...r.body.data].reverse();
}

export async function getNotification(server: TestServer, id: string, key: string = KEYS.a) {
  const r = await server.get(`/v1/notifications/${id}`, { key });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** The due time (epoch ms) a delay or digest job recorded in its first execution detail. */
export function dueAt(job: any): number {
  const detail = job.executionDetails.find((d: any) => d.raw && JSON.parse(d.raw).runAt);
  assert.ok(detail, `job ${job._id} has a due time: ${JSON.stringify(job.executionDetails)}`);
  return Date.parse(JSON.parse(detail.raw).runAt);
}

/** Messages of any channel of a notification, straight from the database, oldest first. */
export function messagesOfNotification(server: TestServer, notificationId: string) {
  return dbQuery(server, 'SELECT * FROM messages WHERE notification_id = ? ORDER BY created_at, id', [notificationId]);
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A webhook receiver on 127.0.0.1: answers `status(path)` (200 by default) and records every request. */
export async function startReceiver(status: (path: string) => number = () => 200) {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const code = status(req.url ?? '');
      res.writeHead(code, { 'content-type': 'text/plain' }).end(code < 300 ? 'ok' : 'receiver failed');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
