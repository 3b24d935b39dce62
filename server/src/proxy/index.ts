import { entityTag, notModified } from '../etag.ts';
import { FixedWindowCounter } from '../fixed-window.ts';
import { FORWARDED_HEADERS, inboxRoute, RETURNED_HEADERS } from './allow-list.ts';
import { hashedSubscriber } from './auth.ts';
import { errorResponse } from './error-response.ts';
import { mayHoldCredentials, redactEvents, redactJson } from './redaction.ts';

export { subscriberHash } from './auth.ts';
export { toNodeListener } from './node.ts';

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
 * Fetch API, or in plain Node with `toNodeListener` (node.ts). What crosses is in allow-list.ts,
 * what is removed on the way back in redaction.ts.
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
   * each JSON answer whole, and a request keeps its place until its answer is written to the
   * client, so this bounds what one signed-in user can make it hold.
   */
  maxInFlight?: number;
  /**
   * How long an answer may wait for the client to take more of it, in ms (default 30,000): past
   * it the answer is cut off (the connection closed) and its place freed. Streams apart.
   */
  writeTimeoutMs?: number;
  /**
   * Requests per subscriber per window (a stream counts when it opens), default 600 a minute: an
   * inbox makes a few a minute, a burst of tens when it opens. Past it the answer is 429 with
   * `Retry-After`; every answer carries `RateLimit-Limit`, `-Remaining` and `-Reset`. `false`: none.
   */
  rateLimit?: { limit: number; windowMs: number } | false;
}

/** The default of `maxBodyBytes`. */
export const PROXY_MAX_BODY_BYTES = 64 * 1024;
/** The default of `maxInFlight`. */
export const PROXY_MAX_IN_FLIGHT = 16;

/** The default of `writeTimeoutMs`. */
export const PROXY_WRITE_TIMEOUT_MS = 30_000;
/** The default of `rateLimit`. */
export const PROXY_RATE_LIMIT = { limit: 600, windowMs: 60_000 };
const MS_PER_SECOND = 1000;

/** The service's answer for a subscriber it does not know, and for one it has just made. */
const NOT_FOUND = 404;
const CREATED = 201;
/** The service's answer when the subscriber exists already (made by another first request meanwhile). */
const CONFLICT = 409;

/** The path the handler is mounted under, when nothing else is set. */
const DEFAULT_BASE_PATH = '/notif';
/** Seconds a subscriber past its requests at once is asked to wait. */
const BUSY_RETRY_AFTER_S = '1';

export function createInboxProxy(options: InboxProxyOptions): (request: Request) => Promise<Response> {
  const base = (options.basePath ?? DEFAULT_BASE_PATH).replace(/\/$/, '');
  const service = options.serviceUrl.replace(/\/$/, '');
  const hmacKey = options.hmacKey ?? options.apiKey;
  const send = options.fetch ?? fetch;
  const maxBody = options.maxBodyBytes ?? PROXY_MAX_BODY_BYTES;
  const maxInFlight = options.maxInFlight ?? PROXY_MAX_IN_FLIGHT;
  const writeTimeoutMs = options.writeTimeoutMs ?? PROXY_WRITE_TIMEOUT_MS;
  const rateLimit = options.rateLimit === undefined ? PROXY_RATE_LIMIT : options.rateLimit;
  const counter = rateLimit ? new FixedWindowCounter(rateLimit.limit, rateLimit.windowMs) : undefined;
  const windowSeconds = rateLimit ? rateLimit.windowMs / MS_PER_SECOND : 0;
  /** Requests in flight by subscriber (streams apart). */
  const inFlight = new Map<string, number>();
  /** Frees one of `subscriberId`'s places. */
  const leave = (subscriberId: string) => {
    const left = inFlight.get(subscriberId)! - 1;
    if (left > 0) inFlight.set(subscriberId, left);
    else inFlight.delete(subscriberId);
  };

  const refuse = errorResponse;

  /** The subscriber this request speaks for (the host's own authentication, or the subscriber hash), or null when it proves none. */
  async function who(request: Request): Promise<string | null> {
    if (options.authenticate) return options.authenticate(request);
    return hashedSubscriber(request, hmacKey);
  }

  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname !== base && !url.pathname.startsWith(base + '/')) return refuse(404, 'Not found', url.pathname);
    const path = url.pathname.slice(base.length);
    const named = inboxRoute(request.method, path);
    if (!named) return refuse(403, `${request.method} ${path} is not an inbox endpoint`, url.pathname);

    const subscriberId = await who(request);
    if (!subscriberId) return refuse(401, 'The subscriber is not authenticated', url.pathname);
    const query = new URLSearchParams(url.search);
    if (named.subscriber !== undefined) {
      let inPath: string;
      try {
        inPath = decodeURIComponent(named.subscriber);
      } catch {
        return refuse(403, 'Malformed subscriber id', url.pathname);
      }
      if (inPath !== subscriberId) return refuse(403, 'Another subscriber', url.pathname);
    } else {
      // A message id alone names no subscriber: the service deletes it only if it is this one's.
      query.set('subscriberId', subscriberId);
    }

    const counted = counter?.take(subscriberId, Date.now());
    const withRateLimit = (response: Response) => {
      if (!counted) return response;
      response.headers.set('ratelimit-limit', String(counted.limit));
      response.headers.set('ratelimit-remaining', String(Math.max(0, counted.remaining)));
      response.headers.set('ratelimit-reset', String(Math.max(0, Math.ceil((counted.resetAt - Date.now()) / MS_PER_SECOND))));
      return response;
    };
    if (counted && !counted.allowed) {
      const retryAfter = Math.max(1, Math.ceil((counted.resetAt - Date.now()) / MS_PER_SECOND));
      const limited = refuse(429, `More than ${counted.limit} requests of this subscriber in ${windowSeconds} s; retry in ${retryAfter} s`, url.pathname);
      limited.headers.set('retry-after', String(retryAfter));
      return withRateLimit(limited);
    }

    // The stream is one long request per browser, its events passed on as they come: it holds no place.
    if (path.endsWith('/notifications/stream')) return withRateLimit(await forward(request, url, path, query, named.subscriber));
    const working = inFlight.get(subscriberId) ?? 0;
    if (working >= maxInFlight) {
      const busy = refuse(429, `More than ${maxInFlight} requests of this subscriber at once`, url.pathname);
      busy.headers.set('retry-after', BUSY_RETRY_AFTER_S);
      return withRateLimit(busy);
    }
    inFlight.set(subscriberId, working + 1);
    let response: Response;
    try {
      response = await forward(request, url, path, query, named.subscriber);
    } catch (err) {
      leave(subscriberId);
      throw err;
    }
    // The place is held until the answer is written (or cut off): not only until it is read.
    return withRateLimit(heldUntilWritten(response, () => leave(subscriberId), writeTimeoutMs));
  };

  /**
   * Makes the subscriber the request proved, a signed-in user the service answered 404 for: true
   * when it is there now (made now, or made meanwhile by another of its first requests: 409), false
   * when the service did not make it.
   */
  async function makeSubscriber(subscriberId: string): Promise<boolean> {
    try {
      const made = await send(`${service}/v2/subscribers?failIfExists=true`, {
        method: 'POST',
        headers: { authorization: `ApiKey ${options.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ subscriberId }),
        redirect: 'manual',
      });
      await made.body?.cancel().catch(() => {});
      return made.status === CREATED || made.status === CONFLICT;
    } catch {
      return false;
    }
  }

  /**
   * Passes an allowed, authenticated request on to the service, and its answer back. A request
   * for a subscriber (`subscriber`: its id as the path has it) the service has not seen yet makes
   * it on this first contact, and is sent again: a new user's feed, counts, stream and preferences
   * answer as for a subscriber with no messages, and preferences can be saved before any message.
   */
  async function forward(request: Request, url: URL, path: string, query: URLSearchParams, subscriber?: string): Promise<Response> {
    const headers = new Headers({ authorization: `ApiKey ${options.apiKey}` });
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    const search = query.size > 0 ? `?${query}` : '';
    let body: Uint8Array | undefined;
    if (request.method !== 'GET' && request.method !== 'DELETE') {
      // Only now, with the subscriber authenticated, is the body read, and never past the cap.
      const declared = Number(request.headers.get('content-length') ?? 0);
      if (declared > maxBody) return refuse(413, `The body is larger than ${maxBody} bytes`, url.pathname);
      body = await readCapped(request.body, maxBody);
      if (!body) return refuse(413, `The body is larger than ${maxBody} bytes`, url.pathname);
    }
    // The caller's signal: when the page goes away, so does the request to the service.
    const pass = () => send(`${service}${path}${search}`, { method: request.method, headers, body, redirect: 'manual', signal: request.signal });
    let answer: Response;
    try {
      answer = await pass();
      // (The subscriber in the path is the one the request proved: decoded, it is subscriberId.)
      if (answer.status === NOT_FOUND && subscriber !== undefined && (await makeSubscriber(decodeURIComponent(subscriber)))) {
        await answer.body?.cancel().catch(() => {});
        answer = await pass();
      }
    } catch {
      return refuse(502, 'The notification service did not answer', url.pathname);
    }
    const back = new Headers();
    for (const name of RETURNED_HEADERS) {
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

/**
 * `response` with a body that calls `release` once it is read to its end, cancelled, or cut off:
 * it is read only as the client takes it (nothing is pulled ahead), and when the client takes
 * none of it for `writeTimeoutMs` the body errors, so the adapter closes the connection.
 */
function heldUntilWritten(response: Response, release: () => void, writeTimeoutMs: number): Response {
  let released = false;
  const releaseOnce = () => {
    if (released) return;
    released = true;
    release();
  };
  if (!response.body) {
    releaseOnce();
    return response;
  }
  const reader = response.body.getReader();
  let timer: NodeJS.Timeout | undefined;
  /** What is left of the chunk read last, passed on a piece at a time. */
  let rest: Uint8Array | undefined;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        clearTimeout(timer);
        let chunk: Uint8Array;
        if (rest) {
          chunk = rest;
        } else {
          let read: Awaited<ReturnType<typeof reader.read>>;
          try {
            read = await reader.read();
          } catch (err) {
            releaseOnce();
            controller.error(err);
            return;
          }
          if (read.done || read.value === undefined) {
            releaseOnce();
            controller.close();
            return;
          }
          chunk = read.value;
        }
        // A piece at a time (an answer read whole is one chunk): the time without progress is
        // measured per piece, so a client that reads slowly but steadily is never cut off.
        const piece = chunk.subarray(0, WRITE_PIECE_BYTES);
        rest = chunk.byteLength > WRITE_PIECE_BYTES ? chunk.subarray(WRITE_PIECE_BYTES) : undefined;
        controller.enqueue(piece);
        // The next pull comes once the client has taken this piece; none in time: cut off.
        timer = setTimeout(() => {
          releaseOnce();
          reader.cancel().catch(() => {});
          controller.error(new Error('the client took none of the answer in time'));
        }, writeTimeoutMs);
      },
      cancel(reason) {
        clearTimeout(timer);
        releaseOnce();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** The pieces an answer is passed to the client in, so its progress is seen (heldUntilWritten). */
const WRITE_PIECE_BYTES = 64 * 1024;

/** The largest answer (other than a stream) the proxy reads; past it, 502. A feed page of 100 full messages is about 270 KB. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;


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
