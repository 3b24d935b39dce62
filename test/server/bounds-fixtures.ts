import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { toNodeListener } from '../../server/src/proxy.ts';
import { KEYS, type TestServer } from './helpers.ts';

// Helpers of the tests that bound what bytes cost the service (bounds-*.test.ts): a stream reader
// that keeps up with megabytes of events without holding their text, the service process's
// memory, latency probes that keep asking while the service is busy, and a proxy on a free port.

/** Text of `bytes` characters that no database compresses (PostgreSQL's TOAST would shrink a repeated one). */
export const incompressible = (bytes: number) => randomBytes(Math.ceil(bytes / 2)).toString('hex').slice(0, bytes);

/** One event of a stream: its id, its data parsed, and its size on the wire in bytes. */
export interface ReadEvent {
  id?: string;
  data: any;
  bytes: number;
}

export interface ReadStream {
  status: number;
  /** Every event with data, in order (the `retry:` block and heartbeats left out). */
  events: ReadEvent[];
  /** Bytes received in all. */
  bytes: number;
  /** True once the service ended the stream (or it was closed here). */
  ended: boolean;
  /** Resolves once the stream ends. */
  done: Promise<void>;
  /** The first event from `from` on that passes `test`; rejects after `timeoutMs`, or as soon as the stream ends without one. */
  next(test: (event: ReadEvent) => boolean, what: string, timeoutMs?: number, from?: number): Promise<ReadEvent>;
  /** The message events (their data's `message`). */
  messages(): any[];
  close(): void;
}

/**
 * Opens a subscriber's stream and reads it as fast as it comes, whatever the size of its events:
 * each chunk is scanned once for the end of an event, and only the events' data are kept (the
 * stream-fixtures reader keeps the whole text and scans it again per chunk: megabytes of events
 * would cost the test more than the service).
 */
export async function readStream(
  base: string,
  subscriberId: string,
  options: { key?: string; lastEventId?: string; headers?: Record<string, string> } = {},
): Promise<ReadStream> {
  const abort = new AbortController();
  const headers: Record<string, string> = { ...options.headers };
  if (!options.headers) headers.authorization = `ApiKey ${options.key ?? KEYS.a}`;
  if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
  const response = await fetch(`${base.replace(/\/$/, '')}/v1/subscribers/${encodeURIComponent(subscriberId)}/notifications/stream`, {
    headers,
    signal: abort.signal,
  });
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
    waiters.clear();
  };
  const stream: ReadStream = {
    status: response.status,
    events: [],
    bytes: 0,
    ended: false,
    done: Promise.resolve(),
    async next(test, what, timeoutMs = 10_000, from = 0) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = stream.events.slice(from).find(test);
        if (found) return found;
        const summary = `${stream.events.length} events, ${stream.bytes} bytes`;
        if (stream.ended) throw new Error(`the stream ended without ${what} (${summary})`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms (${summary})`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.add(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    messages: () => stream.events.filter((event) => event.data?.message).map((event) => event.data.message),
    close: () => abort.abort(),
  };
  if (!response.ok || !response.body) {
    stream.ended = true;
    const text = await response.text();
    try {
      stream.events.push({ data: JSON.parse(text), bytes: text.length });
    } catch {
      // not JSON
    }
    return stream;
  }
  stream.done = (async () => {
    const decoder = new TextDecoder();
    /** The text of the event under way, in the pieces it came in (joined once it ends). */
    let pieces: string[] = [];
    let lastChar = '';
    const endEvent = (text: string) => {
      let id: string | undefined;
      const data: string[] = [];
      for (const line of text.split('\n')) {
        if (line.startsWith('id:')) id = line.slice(3).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length === 0) return;
      stream.events.push({ id, data: JSON.parse(data.join('\n')), bytes: Buffer.byteLength(text) + 2 });
    };
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        stream.bytes += chunk.byteLength;
        let text = decoder.decode(chunk, { stream: true });
        // An event ends at a blank line: "\n\n", perhaps split between two chunks.
        for (;;) {
          const split = lastChar === '\n' && text.startsWith('\n') ? 0 : text.indexOf('\n\n');
          if (split < 0) break;
          const head = split === 0 ? '' : text.slice(0, split);
          endEvent(pieces.join('') + head);
          pieces = [];
          lastChar = '';
          text = text.slice(split === 0 ? 1 : split + 2);
        }
        if (text) {
          pieces.push(text);
          lastChar = text.at(-1)!;
        }
        wake();
      }
    } catch {
      // aborted, or cut off by the service
    }
    stream.ended = true;
    wake();
  })();
  return stream;
}

/** The service process's resident memory now and at its highest, in MB (Linux: /proc). */
export function memoryOf(server: TestServer): { rss: number; peak: number } {
  const pid = (server as unknown as { child?: { pid?: number } }).child?.pid;
  if (!pid) throw new Error('the server is not running');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Math.round(Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) / 1024);
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** The `p`th percentile of `values` (nearest rank). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

export interface Probe {
  /** Latency of every answer, ms, and the statuses seen. */
  latencies: number[];
  statuses: number[];
  /** Stops sending, waits for the answers under way, and returns the figures. */
  stop(): Promise<{ count: number; p50: number; p99: number; max: number; statuses: Record<string, number> }>;
}

/**
 * Asks `url` every `everyMs` whether or not the previous answer has come (an open loop, as users
 * do): a service that stalls for a second shows it in every request sent during the stall, not in
 * the one request a closed loop would have waiting.
 */
export function probe(url: string, everyMs: number, headers: Record<string, string> = {}): Probe {
  const latencies: number[] = [];
  const statuses: number[] = [];
  const pending = new Set<Promise<void>>();
  const ask = () => {
    const started = performance.now();
    const request: Promise<void> = fetch(url, { headers })
      .then(async (response) => {
        await response.arrayBuffer();
        latencies.push(performance.now() - started);
        statuses.push(response.status);
      })
      .catch(() => {
        latencies.push(performance.now() - started);
        statuses.push(0);
      })
      .finally(() => pending.delete(request));
    pending.add(request);
  };
  const timer = setInterval(ask, everyMs);
  return {
    latencies,
    statuses,
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      const byStatus: Record<string, number> = {};
      for (const status of statuses) byStatus[status] = (byStatus[status] ?? 0) + 1;
      return {
        count: latencies.length,
        p50: Math.round(percentile(latencies, 50)),
        p99: Math.round(percentile(latencies, 99)),
        max: Math.round(Math.max(0, ...latencies)),
        statuses: byStatus,
      };
    },
  };
}

/** Serves a Fetch-API handler (the inbox proxy) on a free port of 127.0.0.1. */
export async function listen(handler: (request: Request) => Promise<Response>): Promise<{ server: Server; port: number; url: string; close: () => void }> {
  const server = createServer(toNodeListener(handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Bytes the service's database holds: SQLite's pages (the WAL's committed ones included), PostgreSQL's database size. */
export async function databaseBytes(server: TestServer, sql: (server: TestServer, text: string) => Promise<any[]>): Promise<number> {
  if (server.postgres) return Number((await sql(server, 'select pg_database_size(current_database()) as bytes'))[0].bytes);
  const [{ page_count }] = await sql(server, 'pragma page_count');
  const [{ page_size }] = await sql(server, 'pragma page_size');
  return Number(page_count) * Number(page_size);
}
