import { createHmac, timingSafeEqual } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import { entityTag, notModified } from './etag.ts';

/**
 * The browser-safe gateway (DESIGN.md, Security). A page must never hold the API key, so the host
 * app mounts this handler on its own domain (say under `/notif`) and points the elements'
 * `base-url` at it. It holds the key, authenticates the end user, allows only the inbox's own
 * endpoints, and only for that user's subscriber; everything else answers 403. What it passes back
 * holds no delivery credentials: no subscriber's `channels` (chat webhook URLs, push tokens), no
 * message's own `deviceTokens` or `directWebhookUrl`, and no delivery error's `errorText` (it names
 * the webhook's host and the addresses it resolved to).
 *
 * A standard `(Request) => Promise<Response>` handler: mount it in any framework that speaks the
 * Fetch API, or in plain Node with `toNodeListener` below.
 *
 *   const proxy = createInboxProxy({ serviceUrl: 'http://127.0.0.1:3030', apiKey: process.env.NOTIF_API_KEY,
 *     basePath: '/notif', authenticate: async (req) => (await session(req))?.userId ?? null });
 */
export interface InboxProxyOptions {
  /** Where the notification service answers, e.g. `http://127.0.0.1:3030`. */
  serviceUrl: string;
  /** The environment's API key; it never leaves the server. */
  apiKey: string;
  /** The path the handler is mounted under (stripped before forwarding). Default `/notif`. */
  basePath?: string;
  /**
   * The host's own authentication: the signed-in user's subscriberId, or null. When given, it
   * decides alone. Otherwise the page proves its subscriber with `x-subscriber-hash`: the
   * HMAC-SHA256 (hex) of the subscriber id under `hmacKey`, computed by the host's server when it
   * renders the page (as Novu's subscriber hash is).
   */
  authenticate?: (request: Request) => string | null | Promise<string | null>;
  /** Key of the subscriber hash; default the API key (as Novu does). */
  hmacKey?: string;
  /** For tests or custom agents. */
  fetch?: typeof fetch;
  /**
   * Largest request body passed on, in bytes (default 64 KB: the inbox's bodies are a few hundred
   * bytes). Read only once the subscriber is authenticated; past it the answer is 413.
   */
  maxBodyBytes?: number;
  /**
   * Requests of one subscriber the proxy works on at once (its stream apart), default 16; past it
   * the answer is 429 with `Retry-After: 1`. An inbox makes two or three at a time; the proxy reads
   * each JSON answer whole, so this bounds what one signed-in user can make it hold.
   */
  maxInFlight?: number;
}

/** The default of `maxBodyBytes`. */
export const PROXY_MAX_BODY_BYTES = 64 * 1024;
/** The default of `maxInFlight`. */
export const PROXY_MAX_IN_FLIGHT = 16;

/** The inbox's endpoints: method, path, and where the subscriber id (or message id) sits. */
const ROUTES: { method: string; path: RegExp }[] = [
  { method: 'GET', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/notifications\/feed$/ },
  { method: 'GET', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/notifications\/unseen$/ },
  { method: 'GET', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/notifications\/stream$/ },
  { method: 'POST', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/messages\/mark-all$/ },
  { method: 'POST', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/messages\/mark-as$/ },
  { method: 'POST', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/messages\/[^/]+\/actions\/[^/]+$/ },
  { method: 'DELETE', path: /^\/v1\/messages\/(?<message>[^/]+)$/ },
  { method: 'GET', path: /^\/v2\/subscribers\/(?<subscriber>[^/]+)\/preferences$/ },
  { method: 'PATCH', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/preferences(?:\/[^/]+)?$/ },
];

/** Request headers passed on; answer headers passed back. Nothing else crosses. */
const FORWARD = ['content-type', 'idempotency-key', 'last-event-id', 'if-none-match'];
const RETURN = ['content-type', 'cache-control', 'etag', 'retry-after', 'idempotency-replay', 'idempotency-key', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

export function subscriberHash(subscriberId: string, key: string): string {
  return createHmac('sha256', key).update(subscriberId).digest('hex');
}

export function createInboxProxy(options: InboxProxyOptions): (request: Request) => Promise<Response> {
  const base = (options.basePath ?? '/notif').replace(/\/$/, '');
  const service = options.serviceUrl.replace(/\/$/, '');
  const hmacKey = options.hmacKey ?? options.apiKey;
  const send = options.fetch ?? fetch;
  const maxBody = options.maxBodyBytes ?? PROXY_MAX_BODY_BYTES;
  const maxInFlight = options.maxInFlight ?? PROXY_MAX_IN_FLIGHT;
  /** Requests in flight by subscriber (streams apart). */
  const inFlight = new Map<string, number>();

  const refuse = errorResponse;

  /** The subscriber this request speaks for, or null when it proves none. */
  async function who(request: Request): Promise<string | null> {
    if (options.authenticate) return options.authenticate(request);
    // The id is percent-decoded: a header carries bytes, so the elements send encodeURI(id), which
    // encodes what is outside ASCII and '%' itself (an id of printable ASCII without '%' decodes to
    // itself). One that does not decode proves nothing.
    const encoded = request.headers.get('x-subscriber-id');
    const hash = request.headers.get('x-subscriber-hash');
    if (!encoded || !hash) return null;
    let claimed: string;
    try {
      claimed = decodeURIComponent(encoded);
    } catch {
      return null;
    }
    const expected = Buffer.from(subscriberHash(claimed, hmacKey));
    const given = Buffer.from(hash.toLowerCase());
    return given.length === expected.length && timingSafeEqual(given, expected) ? claimed : null;
  }

  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname !== base && !url.pathname.startsWith(base + '/')) return refuse(404, 'Not found', url.pathname);
    const path = url.pathname.slice(base.length);
    const route = ROUTES.find((r) => r.method === request.method && r.path.test(path));
    if (!route) return refuse(403, `${request.method} ${path} is not an inbox endpoint`, url.pathname);

    const subscriberId = await who(request);
    if (!subscriberId) return refuse(401, 'The subscriber is not authenticated', url.pathname);
    const groups = route.path.exec(path)!.groups!;
    const query = new URLSearchParams(url.search);
    if (groups.subscriber !== undefined) {
      let inPath: string;
      try {
        inPath = decodeURIComponent(groups.subscriber);
      } catch {
        return refuse(403, 'Malformed subscriber id', url.pathname);
      }
      if (inPath !== subscriberId) return refuse(403, 'Another subscriber', url.pathname);
    } else {
      // A message id alone names no subscriber: the service deletes it only if it is this one's.
      query.set('subscriberId', subscriberId);
    }

    // The stream is one long request per browser, its events passed on as they come: not counted.
    if (path.endsWith('/notifications/stream')) return forward(request, url, path, query);
    const n = inFlight.get(subscriberId) ?? 0;
    if (n >= maxInFlight) {
      const busy = refuse(429, `More than ${maxInFlight} requests of this subscriber at once`, url.pathname);
      busy.headers.set('retry-after', '1');
      return busy;
    }
    inFlight.set(subscriberId, n + 1);
    try {
      return await forward(request, url, path, query);
    } finally {
      const left = inFlight.get(subscriberId)! - 1;
      if (left) inFlight.set(subscriberId, left);
      else inFlight.delete(subscriberId);
    }
  };

  /** Passes an allowed, authenticated request on to the service, and its answer back. */
  async function forward(request: Request, url: URL, path: string, query: URLSearchParams): Promise<Response> {
    const headers = new Headers({ authorization: `ApiKey ${options.apiKey}` });
    for (const name of FORWARD) {
      const value = request.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    const search = query.size ? `?${query}` : '';
    let body: Uint8Array | undefined;
    if (request.method !== 'GET' && request.method !== 'DELETE') {
      // Only now, with the subscriber authenticated, is the body read, and never past the cap.
      const declared = Number(request.headers.get('content-length') ?? 0);
      if (declared > maxBody) return refuse(413, `The body is larger than ${maxBody} bytes`, url.pathname);
      body = await readCapped(request.body, maxBody);
      if (!body) return refuse(413, `The body is larger than ${maxBody} bytes`, url.pathname);
    }
    let answer: Response;
    try {
      // The caller's signal: when the page goes away, so does the request to the service.
      answer = await send(`${service}${path}${search}`, { method: request.method, headers, body, redirect: 'manual', signal: request.signal });
    } catch {
      return refuse(502, 'The notification service did not answer', url.pathname);
    }
    const back = new Headers();
    for (const name of RETURN) {
      const value = answer.headers.get(name);
      if (value !== null) back.set(name, value);
    }
    // The body passes decoded (fetch undoes the service's compression): its tag is the one of the
    // plain text, which the service also takes in If-None-Match (a feed page the browser holds
    // costs a 304 with no body).
    const etag = back.get('etag');
    if (etag) back.set('etag', etag.replace(/-(br|gzip)"$/, '"'));
    if (answer.status === 204 || answer.status === 304 || !answer.body) {
      await answer.body?.cancel().catch(() => {});
      return new Response(null, { status: answer.status, headers: back });
    }
    // A Message embeds its subscriber, whose `channels` hold delivery credentials (chat webhook
    // URLs, push device tokens), and a push or chat message holds its own: they never cross (see
    // redactCredentials).
    if (/^text\/event-stream/i.test(answer.headers.get('content-type') ?? '')) {
      // Streamed through as it comes, event by event, never buffered whole.
      return new Response(answer.body.pipeThrough(redactEvents()), { status: answer.status, headers: back });
    }
    // Other answers are JSON of a few hundred KB at most: read whole, and passed as they are
    // (bytes and tag) when nothing in them can be a key redactCredentials removes, as the elements' pages.
    let bytes: Buffer | undefined;
    try {
      bytes = await readCapped(answer.body, MAX_ANSWER_BYTES);
    } catch {
      return refuse(502, "The notification service's answer broke off", url.pathname);
    }
    if (!bytes) return refuse(502, `The notification service answered more than ${MAX_ANSWER_BYTES} bytes`, url.pathname);
    if (!mayHoldCredentials(bytes)) return new Response(bytes, { status: answer.status, headers: back });
    const text = redactJson(new TextDecoder().decode(bytes));
    // Not JSON, though it may hold credentials: nothing is passed.
    if (text === null) return refuse(502, 'The notification service answered a body the proxy cannot read', url.pathname);
    if (text === undefined) return new Response(bytes, { status: answer.status, headers: back });
    // Rewritten: its tag is the one of the text sent, so the browser's next If-None-Match (which
    // the service does not know) gets its 304 here.
    if (etag) {
      const tag = entityTag(text);
      back.set('etag', tag);
      if (request.method === 'GET' && answer.status === 200 && notModified(request.headers.get('if-none-match') ?? undefined, tag)) {
        back.delete('content-type');
        return new Response(null, { status: 304, headers: back });
      }
    }
    return new Response(text, { status: answer.status, headers: back });
  }
}

/** The largest answer (other than a stream) the proxy reads; past it, 502. A feed page of 100 full messages is about 270 KB. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** The longest event of a stream, in characters; past it the stream ends (the client reconnects). The service's are a few KB. */
const MAX_EVENT_LENGTH = 1024 * 1024;

/**
 * Removes delivery credentials from a parsed answer: `channels` from every subscriber (each object
 * that is the value of a `subscriber` key, at any depth: a feed's Messages, mark-as's, an action's,
 * a stream event's, and a spec server's `{data: ...}` envelope alike), and a Message's own
 * `deviceTokens`, `directWebhookUrl` and `errorText` (a push or chat message's: mark-as and actions
 * take any of the subscriber's messages). True when it removed one.
 */
function redactCredentials(value: unknown): boolean {
  let removed = false;
  // An explicit stack: a deeply nested answer cannot overflow the call stack.
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    const object = v as Record<string, unknown>;
    const subscriber = object.subscriber;
    if (Object.hasOwn(object, 'subscriber') && subscriber !== null && typeof subscriber === 'object' && !Array.isArray(subscriber) && Object.hasOwn(subscriber, 'channels')) {
      delete (subscriber as Record<string, unknown>).channels;
      removed = true;
    }
    for (const key of MESSAGE_CREDENTIALS) if (Object.hasOwn(object, key)) (delete object[key], (removed = true));
    for (const item of Object.values(object)) stack.push(item);
  }
  return removed;
}

/**
 * A Message's own delivery credentials (spec: Message), and its delivery error's text: a failed
 * webhook's says which host it named and what that resolved to ("... resolves to 10.0.0.7 is a
 * private address"), an oracle of the host's network for anyone whose app lets them set a webhook.
 * (`errorId` stays: a code such as `webhook_unreachable` names nothing.)
 */
const MESSAGE_CREDENTIALS = ['deviceTokens', 'directWebhookUrl', 'errorText'];

/**
 * JSON `text` without its subscribers' channels: the new text, undefined when it had none to
 * remove, null when it is not JSON (or nests too deep to be written again).
 */
function redactJson(text: string): string | undefined | null {
  try {
    const value: unknown = JSON.parse(text);
    return redactCredentials(value) ? JSON.stringify(value) : undefined;
  } catch {
    return null;
  }
}

const KEYS = ['"channels"', ...MESSAGE_CREDENTIALS.map((key) => `"${key}"`), '\\u'];
const KEY_BYTES = KEYS.map((key) => Buffer.from(key));
/**
 * False when the text cannot hold a key redactCredentials removes: JSON writes one as itself, or
 * with \u escapes (no other escape writes a letter). The elements' pages mostly hold none.
 */
function mayHoldCredentials(bytes: Buffer): boolean {
  return KEY_BYTES.some((key) => bytes.includes(key));
}

/**
 * A Server-Sent Events stream with its subscribers' channels removed, event by event: each event
 * passes as soon as its blank line has come (several in one chunk pass together), as it was unless
 * its data held a subscriber's channels. An event whose data may hold them but is not JSON is left
 * out; an event past MAX_EVENT_LENGTH ends the stream.
 */
function redactEvents(): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = '';
  /** The last chunk's text ended with a CR (a line break, or the first half of a CRLF). */
  let cr = false;
  const take = (controller: TransformStreamDefaultController<Uint8Array>, last: boolean) => {
    let out = '';
    for (let end; (end = eventEnd(pending)) >= 0; ) {
      out += redactEvent(pending.slice(0, end));
      pending = pending.slice(end);
    }
    if (last && pending) (out += redactEvent(pending)), (pending = '');
    if (pending.length > MAX_EVENT_LENGTH) throw new Error('an event larger than the proxy passes');
    if (out) controller.enqueue(encoder.encode(out));
  };
  return new TransformStream({
    transform(chunk, controller) {
      const text = decoder.decode(chunk, { stream: true });
      pending += text;
      // A chunk with no line break ends no event (nor a CR's line before it): the pending text is
      // not read again for each chunk of a long data line (reading it whole each time was quadratic).
      const ended = cr || /[\r\n]/.test(text);
      if (text) cr = text.endsWith('\r');
      if (ended) take(controller, false);
      else if (pending.length > MAX_EVENT_LENGTH) throw new Error('an event larger than the proxy passes');
    },
    flush(controller) {
      pending += decoder.decode();
      take(controller, true);
    },
  });
}

/** Where the first event of `text` ends (after its blank line), or -1 while it has not. */
function eventEnd(text: string): number {
  const line = /\r\n|\r|\n/g;
  let start = 0;
  for (let m; (m = line.exec(text)); ) {
    // A CR last may be the first half of a CRLF.
    if (m[0] === '\r' && m.index === text.length - 1) return -1;
    if (m.index === start) return m.index + m[0].length;
    start = m.index + m[0].length;
  }
  return -1;
}

/** One event's text, as it was, or with its data's subscribers' channels removed (its data then one line), or '' when its data cannot be read. */
function redactEvent(event: string): string {
  if (!KEYS.some((key) => event.includes(key))) return event;
  const kept: string[] = [];
  const data: string[] = [];
  let at = -1;
  for (const line of event.split(/\r\n|\r|\n/)) {
    if (!line) continue;
    const colon = line.indexOf(':');
    if ((colon < 0 ? line : line.slice(0, colon)) !== 'data') {
      kept.push(line);
      continue;
    }
    if (at < 0) at = kept.length;
    data.push(colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, ''));
  }
  if (at < 0) return event;
  const text = redactJson(data.join('\n'));
  if (text === null) return '';
  if (text === undefined) return event;
  kept.splice(at, 0, `data: ${text}`);
  return `${kept.join('\n')}\n\n`;
}

/** decisions.md's error body as a Response. */
function errorResponse(status: number, message: string, path: string): Response {
  return Response.json(
    { statusCode: status, error: STATUS_CODES[status] ?? 'Error', message, timestamp: new Date().toISOString(), path },
    { status },
  );
}

/**
 * A body whole (a request's, or an answer's), or undefined past `max` bytes (reading stops there).
 * Throws when the body breaks off.
 */
async function readCapped(body: ReadableStream<Uint8Array> | null, max: number): Promise<Buffer | undefined> {
  if (!body) return Buffer.alloc(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Adapts the handler to Node's `http.createServer` (or Express / Fastify's raw request).
 *
 * No request can bring the process down: whatever cannot become a `Request` (an absolute-form or
 * `*` target, a method the Fetch API forbids such as TRACE, a malformed Host header) is answered 400
 * with decisions.md's error body, and a handler that throws answers 500. The request body is handed
 * to the handler as a stream, so nothing is read before it authenticates; the answer is piped back
 * chunk by chunk as it comes (Server-Sent Events pass through), and a client that goes away aborts
 * the request's signal, which ends the handler's fetch to the service.
 */
export function toNodeListener(handler: (request: Request) => Promise<Response>) {
  return (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    serve(handler, req, res).catch(() => {
      // The answer was under way when the client or the service went away: nothing left to tell.
      if (!res.destroyed) res.destroy();
    });
  };
}

const BODYLESS = new Set(['GET', 'HEAD']);

async function serve(
  handler: (request: Request) => Promise<Response>,
  req: import('node:http').IncomingMessage,
  res: import('node:http').ServerResponse,
) {
  const target = req.url ?? '';
  const aborted = new AbortController();
  // 'close' on the answer before it finished: the client went away.
  res.on('close', () => {
    if (!res.writableFinished) aborted.abort();
  });
  let request: Request;
  try {
    if (!target.startsWith('/')) throw new Error('not an origin-form request target');
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    }
    const host = req.headers.host ?? 'localhost';
    if (!/^[a-z0-9._~-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/i.test(host)) throw new Error('the Host header is not a host');
    const url = new URL(`http://${host}${target}`);
    const hasBody = !BODYLESS.has(req.method ?? 'GET') && (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined);
    // `duplex: 'half'`: Node's fetch needs it for a streamed body (the DOM's RequestInit lacks it).
    const init = { method: req.method, headers, body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined, signal: aborted.signal, duplex: 'half' };
    request = new Request(url, init as RequestInit);
  } catch {
    return answer(res, req, errorResponse(400, 'Malformed request', target.startsWith('/') ? target.split('?')[0]! : '/'), aborted);
  }
  let response: Response;
  try {
    response = await handler(request);
  } catch (err) {
    // (The host's code threw, its `authenticate` say: the client gets a plain 500, the host's log the error.)
    console.error('notif-inbox proxy: the handler threw', err);
    response = errorResponse(500, 'The proxy failed to answer', new URL(request.url).pathname);
  }
  await answer(res, req, response, aborted);
}

/** Writes the Response out as its chunks come, waiting when the client reads slowly. */
async function answer(
  res: import('node:http').ServerResponse,
  req: import('node:http').IncomingMessage,
  response: Response,
  aborted: AbortController,
) {
  if (res.destroyed) {
    await response.body?.cancel().catch(() => {});
    return;
  }
  // A body the handler left unread (refused before authentication, say): the connection closes
  // after the answer, so the rest is not waited for.
  if (!req.complete) res.setHeader('connection', 'close');
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.flushHeaders();
  if (!response.body || req.method === 'HEAD') {
    await response.body?.cancel().catch(() => {});
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const stop = () => reader.cancel().catch(() => {});
  aborted.signal.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (res.destroyed) break;
      if (!res.write(value)) await new Promise<void>((r) => {
        res.once('drain', r);
        res.once('close', r);
      });
    }
  } finally {
    aborted.signal.removeEventListener('abort', stop);
  }
  if (res.destroyed) {
    await stop();
    return;
  }
  res.end();
}
