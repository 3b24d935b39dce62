// The HTTP layer of NotifClient, and the six endpoints the inbox itself calls, as plain functions
// so that the elements' bundle carries only these (NotifClient, with every endpoint, is for apps).
import type {
  DeleteMessageResponse, FeedQuery, FeedResponse, MarkAllRequest, MarkAsRequest, Message, MessageActionRequest,
  UnseenCountQuery, UnseenCountResponse,
} from './types.ts';

export interface NotifClientOptions {
  /** The service address, e.g. `https://api.example.com` or a proxy path such as `/notif`. */
  baseUrl: string;
  /** Sent as `Authorization: ApiKey <key>`. A secret: development only in a browser. */
  apiKey?: string;
  /** An app-supplied fetch (for instance one that adds the app's own authorisation). */
  fetch?: typeof fetch;
  /** Extra headers on every request (e.g. the proxy's `x-subscriber-hash`). */
  headers?: Record<string, string>;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** For mutations: reuse one key across retries of the same logical mutation. Default: a new UUID. */
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

type QueryValue = string | number | boolean | null | undefined | readonly (string | number | boolean)[];
export type Query = Record<string, QueryValue>;

export interface RequestInit2 extends CallOptions {
  query?: Query;
  body?: unknown;
  /** Resolve with the Response itself when it is ok (a stream, read by the caller). */
  raw?: boolean;
}

/** A non-2xx answer (or, with `status` 0, a network failure). */
export class NotifApiError extends Error {
  override name = 'NotifApiError';
  constructor(
    /** HTTP status; 0 when the request never got an answer. */
    readonly status: number,
    message: string,
    /** The parsed error body (decisions.md: `{statusCode, error, message, timestamp, path}`). */
    readonly body?: unknown,
    /** Seconds from `Retry-After`, when the server sent it. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** A random UUID; where randomUUID is missing (non-secure contexts), 128 random bits from getRandomValues. */
export const newIdempotencyKey = (): string => crypto.randomUUID?.() ?? crypto.getRandomValues(new Uint32Array(4)).join('-');

/** Base64 of the UTF-8 JSON of `value` (the feed's `payload` filter). */
export const encodePayload = (value: unknown): string => btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(value))));

/** decisions.md: a body that is an object whose only key is `data` is a Novu envelope. */
function isEnvelope(body: unknown): body is { data: unknown } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const keys = Object.keys(body);
  return keys.length === 1 && keys[0] === 'data';
}

/** The body inside a Novu envelope (`{data}` alone), or the body as it is. */
export const unwrap = (body: unknown): unknown => (isEnvelope(body) ? body.data : body);

/** Seconds to wait from a `Retry-After` header (seconds or an HTTP date; never negative), or undefined. */
function retryAfterSeconds(header: string | null): number | undefined {
  if (!header) return undefined;
  const asNumber = Number(header);
  const seconds = Number.isNaN(asNumber) ? (Date.parse(header) - Date.now()) / 1000 : asNumber;
  if (Number.isNaN(seconds)) return undefined;
  return Math.max(0, Math.ceil(seconds));
}

/** One HTTP call: auth, idempotency key for mutations, query arrays as repeated params, envelope, errors. */
export async function request<T>(options: NotifClientOptions, method: string, path: string, init: RequestInit2 = {}): Promise<T> {
  const { signal } = init;
  const params = new URLSearchParams();
  // (null and undefined add nothing; an array is the parameter repeated)
  for (const [name, value] of Object.entries(init.query ?? {})) {
    for (const item of [value ?? []].flat()) params.append(name, String(item));
  }
  const queryString = params.toString();
  const body = JSON.stringify(init.body); // undefined without a body
  const headers: Record<string, string> = { ...options.headers, ...init.headers };
  if (options.apiKey) headers.authorization = 'ApiKey ' + options.apiKey;
  if (method != 'GET') headers['idempotency-key'] = init.idempotencyKey ?? newIdempotencyKey();
  if (body) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    const url = options.baseUrl.replace(/\/+$/, '') + path + (queryString ? '?' + queryString : '');
    response = await (options.fetch ?? fetch)(url, { method, headers, body, signal });
  } catch (err) {
    if (signal?.aborted || (err as Error)?.name === 'AbortError') throw err;
    throw new NotifApiError(0, (err as Error)?.message ?? err); // status 0: no answer (network, CORS)
  }
  if (init.raw && response.ok) return response as T;
  const text = await response.text();
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = text || undefined; // no body (or not JSON)
  }
  if (!response.ok) {
    const bodyMessage = (data as { message?: unknown } | undefined)?.message;
    let message = `${response.status} ${response.statusText}`;
    if (Array.isArray(bodyMessage)) message = bodyMessage.join('; ');
    else if (typeof bodyMessage === 'string') message = bodyMessage;
    throw new NotifApiError(response.status, message, data, retryAfterSeconds(response.headers.get('retry-after')));
  }
  return unwrap(data) as T;
}

const seg = encodeURIComponent;
/** The path of one of a subscriber's inbox endpoints: `rest` below `/v1/subscribers/<subscriberId>/`. */
export const inboxPath = (subscriberId: string, rest: string): string => `/v1/subscribers/${seg(subscriberId)}/${rest}`;

// The endpoints the inbox uses, as functions so a bundle carries only these (the store imports them;
// NotifClient's methods of the same names call them).

/** Endpoint 1: act on a message's CTA button. */
export const messageAction = (client: NotifClientOptions, subscriberId: string, messageId: string, type: string, body: MessageActionRequest, options?: CallOptions) =>
  request<Message>(client, 'POST', inboxPath(subscriberId, `messages/${seg(messageId)}/actions/${seg(type)}`), { ...options, body });

/** Endpoint 7: resolves to the number of messages changed. */
export const markAll = (client: NotifClientOptions, subscriberId: string, body: MarkAllRequest, options?: CallOptions) =>
  request<number>(client, 'POST', inboxPath(subscriberId, 'messages/mark-all'), { ...options, body });

/** Endpoint 9. */
export const deleteMessage = (client: NotifClientOptions, messageId: string, options?: CallOptions) =>
  request<DeleteMessageResponse>(client, 'DELETE', `/v1/messages/${seg(messageId)}`, options);

/** Endpoint 10: one page of the subscriber's in-app feed. */
export const feed = (client: NotifClientOptions, subscriberId: string, query: FeedQuery, options?: CallOptions) =>
  request<FeedResponse>(client, 'GET', inboxPath(subscriberId, 'notifications/feed'), {
    ...options,
    query: { ...query, payload: query.payload && encodePayload(query.payload) },
  });

/** Endpoint 13. */
export const unseenCount = (client: NotifClientOptions, subscriberId: string, query?: UnseenCountQuery, options?: CallOptions) =>
  request<UnseenCountResponse>(client, 'GET', inboxPath(subscriberId, 'notifications/unseen'), { ...options, query: query as Query });

/** Extension (decisions.md): mark one message read, unread, seen or unseen. */
export const markAs = (client: NotifClientOptions, subscriberId: string, body: MarkAsRequest, options?: CallOptions) =>
  request<Message[]>(client, 'POST', inboxPath(subscriberId, 'messages/mark-as'), { ...options, body });
