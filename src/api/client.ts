// NotifClient: one typed method per endpoint of spec/notification-api.md, plus the extensions of
// spec/decisions.md (trigger, mark-as, workflows). It knows nothing of Lit or the DOM beyond fetch.
import type {
  Criticality, CreateIntegrationRequest, CreateSubscriberRequest, CredentialsRequest, DeleteMessageResponse,
  FeedQuery, FeedResponse, Integration, IntegrationRequest, MarkAllRequest, MarkAsRequest, Message,
  MessageActionRequest, Notification, NotificationListQuery, NotificationListResponse, Preferences, Subscriber,
  SubscriberSearchQuery, SubscriberSearchResponse, TriggerRequest, TriggerResponse, UnseenCountQuery,
  UnseenCountResponse, Workflow, Channel,
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

interface RequestInit2 extends CallOptions {
  query?: Query;
  body?: unknown;
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

/** A random UUID; falls back to getRandomValues where randomUUID is missing (non-secure contexts). */
export const newIdempotencyKey = (): string =>
  crypto.randomUUID?.() ??
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');

/** Base64 of the UTF-8 JSON of `value` (the feed's `payload` filter). */
export const encodePayload = (value: unknown): string =>
  btoa(Array.from(new TextEncoder().encode(JSON.stringify(value)), (b) => String.fromCharCode(b)).join(''));

/** decisions.md: a body that is an object whose only key is `data` is a Novu envelope. */
export const unwrap = (body: unknown): unknown =>
  body !== null && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 1 && 'data' in body
    ? (body as { data: unknown }).data
    : body;

const retryAfterSeconds = (value: string | null): number | undefined => {
  if (!value) return undefined;
  const n = Number(value);
  if (Number.isFinite(n)) return Math.max(0, n);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
};

const seg = encodeURIComponent;

export class NotifClient {
  readonly options: Readonly<NotifClientOptions>;

  constructor(options: NotifClientOptions) {
    this.options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
  }

  /** One HTTP call: auth, idempotency key for mutations, query arrays as repeated params, envelope, errors. */
  async request<T>(method: string, path: string, init: RequestInit2 = {}): Promise<T> {
    const { baseUrl, apiKey, headers: base } = this.options;
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(init.query ?? {})) {
      if (value === undefined || value === null) continue;
      for (const v of Array.isArray(value) ? value : [value]) params.append(name, String(v));
    }
    const qs = params.toString();
    const headers: Record<string, string> = { accept: 'application/json', ...base, ...init.headers };
    if (apiKey) headers.authorization = `ApiKey ${apiKey}`;
    if (method !== 'GET') headers['idempotency-key'] = init.idempotencyKey ?? newIdempotencyKey();
    if (init.body !== undefined) headers['content-type'] = 'application/json';

    const doFetch = this.options.fetch ?? fetch;
    let response: Response;
    try {
      response = await doFetch(`${baseUrl}${path}${qs ? `?${qs}` : ''}`, {
        method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: init.signal,
      });
    } catch (err) {
      if (init.signal?.aborted || (err as Error)?.name === 'AbortError') throw err;
      throw new NotifApiError(0, `Network error: ${(err as Error)?.message ?? err}`);
    }
    const text = await response.text();
    let body: unknown = undefined;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    if (!response.ok) {
      const m = (body as { message?: unknown } | undefined)?.message;
      const message = Array.isArray(m) ? m.join('; ') : typeof m === 'string' ? m : `${response.status} ${response.statusText}`;
      throw new NotifApiError(response.status, message, body, retryAfterSeconds(response.headers.get('retry-after')));
    }
    return unwrap(body) as T;
  }

  // 1
  messageAction(subscriberId: string, messageId: string, type: string, body: MessageActionRequest, o?: CallOptions) {
    return this.request<Message>('POST', `/v1/subscribers/${seg(subscriberId)}/messages/${seg(messageId)}/actions/${seg(type)}`, { ...o, body });
  }
  // 2
  updateIntegration(integrationId: string, body: IntegrationRequest, o?: CallOptions) {
    return this.request<Integration>('PUT', `/v1/integrations/${seg(integrationId)}`, { ...o, body });
  }
  // 3
  getSubscriber(subscriberId: string, o?: CallOptions) {
    return this.request<Subscriber>('GET', `/v2/subscribers/${seg(subscriberId)}`, o);
  }
  // 4
  appendCredentials(subscriberId: string, body: CredentialsRequest, o?: CallOptions) {
    return this.request<Subscriber>('PATCH', `/v1/subscribers/${seg(subscriberId)}/credentials`, { ...o, body });
  }
  // 5
  replaceCredentials(subscriberId: string, body: CredentialsRequest, o?: CallOptions) {
    return this.request<Subscriber>('PUT', `/v1/subscribers/${seg(subscriberId)}/credentials`, { ...o, body });
  }
  // 6
  searchSubscribers(query: SubscriberSearchQuery = {}, o?: CallOptions) {
    return this.request<SubscriberSearchResponse>('GET', '/v2/subscribers', { ...o, query: query as Query });
  }
  // 7: resolves to the number of messages changed
  markAll(subscriberId: string, body: MarkAllRequest, o?: CallOptions) {
    return this.request<number>('POST', `/v1/subscribers/${seg(subscriberId)}/messages/mark-all`, { ...o, body });
  }
  // 8
  createSubscriber(body: CreateSubscriberRequest, query: { failIfExists?: boolean } = {}, o?: CallOptions) {
    return this.request<Subscriber>('POST', '/v2/subscribers', { ...o, body, query });
  }
  // 9
  deleteMessage(messageId: string, o?: CallOptions) {
    return this.request<DeleteMessageResponse>('DELETE', `/v1/messages/${seg(messageId)}`, o);
  }
  // 10
  feed(subscriberId: string, query: FeedQuery = {}, o?: CallOptions) {
    const { payload, ...rest } = query;
    return this.request<FeedResponse>('GET', `/v1/subscribers/${seg(subscriberId)}/notifications/feed`, {
      ...o,
      query: { ...rest, payload: payload && encodePayload(payload) },
    });
  }
  // 11
  createIntegration(body: CreateIntegrationRequest, o?: CallOptions) {
    return this.request<Integration>('POST', '/v1/integrations', { ...o, body });
  }
  // 12
  deleteMessagesByTransaction(transactionId: string, query: { channel?: Channel } = {}, o?: CallOptions) {
    return this.request<void>('DELETE', `/v1/messages/transaction/${seg(transactionId)}`, { ...o, query });
  }
  // 13
  unseenCount(subscriberId: string, query: UnseenCountQuery = {}, o?: CallOptions) {
    return this.request<UnseenCountResponse>('GET', `/v1/subscribers/${seg(subscriberId)}/notifications/unseen`, { ...o, query: query as Query });
  }
  // 14
  preferences(subscriberId: string, query: { criticality?: Criticality } = {}, o?: CallOptions) {
    return this.request<Preferences>('GET', `/v2/subscribers/${seg(subscriberId)}/preferences`, { ...o, query });
  }
  // 15
  listIntegrations(o?: CallOptions) {
    return this.request<Integration[]>('GET', '/v1/integrations', o);
  }
  // 16
  getNotification(notificationId: string, o?: CallOptions) {
    return this.request<Notification>('GET', `/v1/notifications/${seg(notificationId)}`, o);
  }
  // 17
  listNotifications(query: NotificationListQuery = {}, o?: CallOptions) {
    return this.request<NotificationListResponse>('GET', '/v1/notifications', { ...o, query: query as Query });
  }
  // 18: true when a run was cancelled, false when nothing was left to cancel
  cancelTrigger(transactionId: string, o?: CallOptions) {
    return this.request<boolean>('DELETE', `/v1/events/trigger/${seg(transactionId)}`, o);
  }

  // extensions (decisions.md "Beyond the spec")
  trigger(body: TriggerRequest, o?: CallOptions) {
    return this.request<TriggerResponse>('POST', '/v1/events/trigger', { ...o, body });
  }
  markAs(subscriberId: string, body: MarkAsRequest, o?: CallOptions) {
    return this.request<Message[]>('POST', `/v1/subscribers/${seg(subscriberId)}/messages/mark-as`, { ...o, body });
  }
  createWorkflow(body: Workflow, o?: CallOptions) {
    return this.request<Workflow>('POST', '/v2/workflows', { ...o, body });
  }
  listWorkflows(o?: CallOptions) {
    return this.request<Workflow[]>('GET', '/v2/workflows', o);
  }
}
