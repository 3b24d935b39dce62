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

/** decisions.md: a body that is an object whose only key is `data` is a Novu envelope (arrays' and strings' keys are indexes). */
export const unwrap = (body: unknown): unknown => (body && Object.keys(body) + '' == 'data' ? (body as { data: unknown }).data : body);

/** One HTTP call: auth, idempotency key for mutations, query arrays as repeated params, envelope, errors. */
export async function request<T>(options: NotifClientOptions, method: string, path: string, init: RequestInit2 = {}): Promise<T> {
  const { signal } = init;
  const params = new URLSearchParams();
  // (null and undefined add nothing; append turns numbers and booleans into their strings)
  for (const [name, value] of Object.entries(init.query ?? {})) for (const v of [value ?? []].flat()) params.append(name, v as string);
  const qs = params + '';
  const body = JSON.stringify(init.body); // undefined without a body
  const headers: Record<string, string> = { ...options.headers, ...init.headers };
  if (options.apiKey) headers.authorization = 'ApiKey ' + options.apiKey;
  if (method != 'GET') headers['idempotency-key'] = init.idempotencyKey ?? newIdempotencyKey();
  if (body) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(options.baseUrl.replace(/\/+$/, '') + path + (qs && '?' + qs), { method, headers, body, signal });
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
    const m = (data as { message?: unknown } | undefined)?.message;
    const message = Array.isArray(m) ? m.join('; ') : typeof m === 'string' ? m : `${response.status} ${response.statusText}`;
    // Retry-After: seconds or an HTTP date.
    const after = response.headers.get('retry-after');
    const seconds = after ? (isNaN(+after) ? (Date.parse(after) - Date.now()) / 1000 : +after) : NaN;
    throw new NotifApiError(response.status, message, data, seconds === seconds ? Math.max(0, Math.ceil(seconds)) : undefined);
  }
  return unwrap(data) as T;
}

const seg = encodeURIComponent;
const inbox = (subscriberId: string, rest: string) => `/v1/subscribers/${seg(subscriberId)}/${rest}`;

// The endpoints the inbox uses, as functions so a bundle carries only these (the store imports them;
// NotifClient's methods of the same names call them).

/** Endpoint 1: act on a message's CTA button. */
export const messageAction = (c: NotifClientOptions, subscriberId: string, messageId: string, type: string, body: MessageActionRequest, o?: CallOptions) =>
  request<Message>(c, 'POST', inbox(subscriberId, `messages/${seg(messageId)}/actions/${seg(type)}`), { ...o, body });

/** Endpoint 7: resolves to the number of messages changed. */
export const markAll = (c: NotifClientOptions, subscriberId: string, body: MarkAllRequest, o?: CallOptions) =>
  request<number>(c, 'POST', inbox(subscriberId, 'messages/mark-all'), { ...o, body });

/** Endpoint 9. */
export const deleteMessage = (c: NotifClientOptions, messageId: string, o?: CallOptions) =>
  request<DeleteMessageResponse>(c, 'DELETE', `/v1/messages/${seg(messageId)}`, o);

/** Endpoint 10: one page of the subscriber's in-app feed. */
export const feed = (c: NotifClientOptions, subscriberId: string, query: FeedQuery, o?: CallOptions) =>
  request<FeedResponse>(c, 'GET', inbox(subscriberId, 'notifications/feed'), {
    ...o,
    query: { ...query, payload: query.payload && encodePayload(query.payload) },
  });

/** Endpoint 13. */
export const unseenCount = (c: NotifClientOptions, subscriberId: string, query?: UnseenCountQuery, o?: CallOptions) =>
  request<UnseenCountResponse>(c, 'GET', inbox(subscriberId, 'notifications/unseen'), { ...o, query: query as Query });

/** Extension (decisions.md): mark one message read, unread, seen or unseen. */
export const markAs = (c: NotifClientOptions, subscriberId: string, body: MarkAsRequest, o?: CallOptions) =>
  request<Message[]>(c, 'POST', inbox(subscriberId, 'messages/mark-as'), { ...o, body });
