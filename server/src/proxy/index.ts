import { entityTag, notModified } from '../etag.ts';
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
   * each JSON answer whole, so this bounds what one signed-in user can make it hold.
   */
  maxInFlight?: number;
}

/** The default of `maxBodyBytes`. */
export const PROXY_MAX_BODY_BYTES = 64 * 1024;
/** The default of `maxInFlight`. */
export const PROXY_MAX_IN_FLIGHT = 16;

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
  /** Requests in flight by subscriber (streams apart). */
  const inFlight = new Map<string, number>();

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

    // The stream is one long request per browser, its events passed on as they come: not counted.
    if (path.endsWith('/notifications/stream')) return forward(request, url, path, query, named.subscriber);
    const working = inFlight.get(subscriberId) ?? 0;
    if (working >= maxInFlight) {
      const busy = refuse(429, `More than ${maxInFlight} requests of this subscriber at once`, url.pathname);
      busy.headers.set('retry-after', BUSY_RETRY_AFTER_S);
      return busy;
    }
    inFlight.set(subscriberId, working + 1);
    try {
      return await forward(request, url, path, query, named.subscriber);
    } finally {
      const left = inFlight.get(subscriberId)! - 1;
      if (left > 0) inFlight.set(subscriberId, left);
      else inFlight.delete(subscriberId);
    }
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
