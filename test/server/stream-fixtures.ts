import { KEYS, type TestServer } from './helpers.ts';

// A Server-Sent Events reader for server tests: opens a subscriber's stream over real HTTP and
// collects its events. The stream has one kind of event (README, "Live: the stream"): each is named
// here by what its data carries, `unseen` (data: {id, count}), `message` (data: the message),
// `changed` (data: {id, changed, messageId?}) or `refetch` (data: {id, refetch}), and `wire` keeps
// the data as sent.

export interface SseEvent {
  event: 'unseen' | 'message' | 'refetch' | 'changed' | 'error';
  id?: string;
  data: any;
  /** The data as sent (JSON). */
  wire?: any;
}

export interface Stream {
  status: number;
  headers: Headers;
  /** Every event so far (comments and the `retry:` block are kept out). */
  events: SseEvent[];
  /** The raw text so far. */
  text: string;
  /** Resolves with the first event (from index `from` on) that passes `test`. */
  next(test: (e: SseEvent) => boolean, what?: string, timeoutMs?: number, from?: number): Promise<SseEvent>;
  /** Resolves once the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openStream(
  server: TestServer | string,
  subscriberId: string,
  options: { key?: string; lastEventId?: string; headers?: Record<string, string> } = {},
): Promise<Stream> {
  const base = typeof server === 'string' ? server : server.url;
  const ctrl = new AbortController();
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined || !options.headers) headers.authorization = `ApiKey ${options.key ?? KEYS.a}`;
  if (options.lastEventId) headers['last-event-id'] = options.lastEventId;
  const res = await fetch(`${base.replace(/\/$/, '')}/v1/subscribers/${encodeURIComponent(subscriberId)}/notifications/stream`, { headers, signal: ctrl.signal });
  const waiters = new Set<() => void>();
  const stream: Stream = {
    status: res.status,
    headers: res.headers,
    events: [],
    text: '',
    async next(test, what = 'event', timeoutMs = 5000, from = 0) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = stream.events.slice(from).find(test);
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms; got ${JSON.stringify(stream.events)}`);
        await new Promise<void>((r) => {
          const timer = setTimeout(r, left);
          waiters.add(() => (clearTimeout(timer), r()));
        });
      }
    },
    ended: Promise.resolve(),
    close: () => ctrl.abort(),
  };
  if (!res.ok || !res.body) {
    stream.text = await res.text();
    try {
      stream.events.push({ event: 'error', data: JSON.parse(stream.text) });
    } catch {
      // not JSON
    }
    return stream;
  }
  stream.ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true });
        stream.text += text;
        buffer += text;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let id: string | undefined;
          let data = '';
          for (const line of block.split('\n')) {
            const m = /^([a-z]+): ?(.*)$/i.exec(line);
            if (!m) continue;
            if (m[1] === 'id') id = m[2];
            else if (m[1] === 'data') data += m[2];
          }
          if (!data) continue; // the retry block, a heartbeat
          const wire = JSON.parse(data);
          let event: SseEvent['event'] = 'refetch';
          if (wire.message) event = 'message';
          else if (wire.count !== undefined) event = 'unseen';
          else if (wire.changed !== undefined) event = 'changed';
          stream.events.push({ event, id, data: wire.message ?? wire, wire });
          for (const w of waiters) w();
          waiters.clear();
        }
      }
    } catch {
      // aborted
    }
    for (const w of waiters) w();
  })();
  return stream;
}

/** Reads a streamed answer chunk by chunk: `next()` the next chunk as text, or a rejection when none comes within `ms`. */
export function chunks(response: Response, ms = 2000) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  return {
    next: () =>
      Promise.race([
        reader.read().then((c) => decoder.decode(c.value)),
        new Promise<string>((_, reject) => setTimeout(() => reject(new Error(`no chunk within ${ms / 1000} s`)), ms)),
      ]),
    cancel: () => reader.cancel(),
  };
}
