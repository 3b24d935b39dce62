// InboxStore: the state the elements render and the actions they call (the contract is types.ts).
// It follows the unseen count (the service's stream, or polling), refetches the first feed page
// only when needed, applies mutations optimistically, and shares one stream or poller between the
// tabs of a browser (navigator.locks elects a leader among the visible tabs; BroadcastChannel
// carries what it hears and every tab's mutations).
// It never touches elements: only document.visibilityState and window events.
import { encodePayload, newIdempotencyKey, request, type NotifApiError, type NotifClientOptions, type RequestInit2 } from '../api/request.ts';
import type { FeedResponse, MarkAs, Message, UnseenCountResponse } from '../api/types.ts';
import type { InboxConfig, InboxErrorDetail, InboxState, InboxStoreApi, InboxTab, MessageActionType } from './types.ts';

const MAX_BACKOFF = 5 * 60_000;
/**
 * The Message fields the feed asks for (the projection; a page of 20 without the embedded subscriber
 * and template is a tenth of the bytes). `payload` and `transactionId` are kept for apps' own rendering.
 */
const FEED_FIELDS = '_id,subject,content,createdAt,read,seen,avatar,cta,templateIdentifier,transactionId,payload';

/** A change of messages and count, applied by the tab that made it and by the others. */
interface Sync {
  upsert?: Message[];
  remove?: string[];
  /** What mark-all set on every message. */
  all?: Partial<Message>;
  count: number;
}

/**
 * What an event of the stream carries (its one data line, JSON; README, "Live: the stream"): its id,
 * and the unseen count, a new message, or neither (refetch).
 */
interface Live {
  id?: string;
  count?: number;
  message?: Message;
}

/** What tabs tell each other (over BroadcastChannel). */
type Note =
  | number // the leader's poll: the unseen count
  | Sync // a mutation, or the server's answer to one
  | string[] // what the leader's stream said: one read's lines together
  | 'stale' // a mutation was rolled back
  | 'hello'; // a tab arrived: the leader answers with the count

/** 1 when `x` sorts after `y` (descending), -1 before, 0 equal. */
const desc = (x: string, y: string) => +(x < y) - +(x > y);
/** The feed's order: newest first (createdAt, then _id, descending). */
export const newestFirst = (a: Message, b: Message) => desc(a.createdAt, b.createdAt) || desc(a._id, b._id);

/**
 * `base` with `incoming` merged in by `_id` (incoming wins), newest first. A message that did not
 * change keeps the object it had in `known` (what is loaded), so the elements and an app's
 * renderMessage see it unchanged: its JSON, small (the projection), is compared only for ids in both.
 * Linear in what is loaded: no map of it is built, and `base` (sorted) followed by the page is two
 * runs the sort merges (a page older than what is loaded: one run).
 */
const merge = (base: readonly Message[], incoming: readonly Message[], known = base): Message[] => {
  const add = new Map(incoming.map((m) => [m._id, m]));
  for (const m of known) {
    const n = add.get(m._id);
    if (n && JSON.stringify(n) == JSON.stringify(m)) add.set(m._id, m);
  }
  return [...base.filter((m) => !add.has(m._id)), ...add.values()].sort(newestFirst);
};

const aborted = (e: unknown) => (e as Error)?.name === 'AbortError';
/** Exponential backoff with jitter from `base` after `n` failures (at most 5 min), or the last failure's `Retry-After` when longer. */
const backoff = (base: number, n: number, failure?: NotifApiError) => Math.max(Math.min(MAX_BACKOFF, base * 2 ** n) * (0.5 + Math.random() / 2), (failure?.retryAfter ?? 0) * 1000);
/** Heard on the window: visibilitychange bubbles to it from the document. */
const WINDOW_EVENTS = ['visibilitychange', 'focus', 'online', 'offline'];

/** A short stable hash, so channel and lock names carry no secret. */
export const hash = (s: string): string => {
  let h = 0x811c9dc5;
  for (const c of s) h = Math.imul(h ^ c.codePointAt(0)!, 0x01000193);
  return h.toString(36);
};

/** The key of a store: service, subscriber, feed, payload filter and authentication (not the fetch function). */
export const storeKey = (c: InboxConfig): string =>
  JSON.stringify([c.baseUrl, c.subscriberId, c.feedIdentifier, c.payload, c.apiKey, c.subscriberHash]);

/** The page's stores (getInboxStore) by registry key. */
const registry = new Map<string, InboxStore>();
const fetchIds = new WeakMap<typeof fetch, number>();
let fetchCount = 0;

/**
 * The page's store for `config` (created on first use): every element that names the same service,
 * subscriber, feed, payload filter, authentication and app-supplied fetch shares one (one poller, one
 * state). Elements `connect()` it while attached; when the last one disconnects the store stops, and
 * leaves the registry unless it is reconnected in the same task (an element moved in the DOM).
 */
export function getInboxStore(config: InboxConfig): InboxStore {
  const { fetch } = config;
  if (fetch && !fetchIds.has(fetch)) fetchIds.set(fetch, ++fetchCount);
  const key = storeKey(config) + (fetch ? fetchIds.get(fetch) : 0);
  let store = registry.get(key);
  if (!store) registry.set(key, (store = new InboxStore(config, key)));
  return store;
}

/** How a store reaches the service: the config's address, key and fetch (request() reads no other key), and the proxy's headers. */
export const apiOptions = (config: InboxConfig): NotifClientOptions => ({
  ...config,
  // The proxy (server/proxy.ts) checks the hash against the subscriber id, percent-decoded. A header's
  // value is bytes: encodeURI encodes what is outside ASCII (and '%', spaces, quotes, brackets), and
  // leaves an id of letters, digits and URL punctuation (an email address) as it is, as a proxy of an
  // earlier version reads it.
  headers: config.subscriberHash ? { 'x-subscriber-id': encodeURI(config.subscriberId), 'x-subscriber-hash': config.subscriberHash } : undefined,
});

export class InboxStore extends EventTarget implements InboxStoreApi {
  readonly config: Readonly<InboxConfig>;
  /** How to reach the service (the client's options: address, key, fetch, proxy header). */
  #api: NotifClientOptions;
  state: InboxState = {
    messages: [],
    hasMore: false,
    unseenCount: 0,
    status: 'idle',
    loadingMore: false,
    error: null,
    tab: 'all',
    loaded: false,
    markAsSupported: true,
  };

  /** True once the server has answered the unseen count (until then the count is a placeholder 0). */
  counted?: boolean;

  /** The registry key of a store of getInboxStore. */
  #key?: string;
  #pageSize: number;
  #interval: number;
  #name: string;
  #refs = 0;
  #openFeeds = 0;
  // Unset until a first page is loaded (which `loaded: false` already says).
  #stale?: boolean;
  #fetchedAt?: number;
  #timer?: ReturnType<typeof setTimeout>;
  #failures = 0;
  #halted?: boolean; // 401/403: polling stopped until refresh()
  #leader?: boolean;
  #lockAbort?: AbortController; // a pending lock request, or the held lock (aborting it releases)
  #channel?: BroadcastChannel;
  // The latest request of each kind: an answer to any other is superseded and ignored.
  #feedCtrl?: AbortController; // first page
  #moreCtrl?: AbortController; // later pages: independent of first-page refreshes
  #countCtrl?: AbortController;
  #first?: Promise<void>; // the latest first-page request
  #counting?: Promise<void>;
  #busy = 0; // mutations in flight: server reads answered meanwhile may predate them
  #dirtyCount?: boolean;
  #dirtyFeed?: boolean;
  #lastWake?: number;
  // The stream (leader only; kept when the server has none, so it is not asked again). #live: it is
  // open, and polling rests.
  #stream?: AbortController;
  #live?: boolean;
  #resume?: Record<string, string>; // Last-Event-ID: the stream's last event, known to every tab (a new leader resumes from it)
  #retry?: number; // the service's retry (else 1 s)
  #drops = 0;
  #later?: ReturnType<typeof setTimeout>; // reconnect, or leave after 60 s hidden

  constructor(config: InboxConfig, key?: string) {
    super();
    this.#key = key;
    this.config = Object.freeze({ ...config });
    // The one place both are kept in range (for the elements' attributes and an app's config alike).
    this.#pageSize = Math.min(100, Math.max(0, Math.round(config.pageSize!))) || 20; // none, NaN, 0 or less -> 20
    this.#interval = Math.max(1000, config.pollInterval! > 0 ? config.pollInterval! : 15_000); // none, 0 or less -> 15 s
    this.#name = 'notif-inbox:' + hash(storeKey(config));
    this.#api = apiOptions(config);
  }

  subscribe(listener: (state: InboxState) => void): () => void {
    const handler = () => listener(this.state);
    this.addEventListener('change', handler);
    return () => this.removeEventListener('change', handler);
  }

  /** One of the inbox endpoints: `rest` below `/v1/subscribers/<subscriberId>/`, or an absolute path. */
  #call<T>(rest: string, init: RequestInit2, method = 'GET'): Promise<T> {
    return request<T>(this.#api, method, rest[0] == '/' ? rest : `/v1/subscribers/${encodeURIComponent(this.config.subscriberId)}/${rest}`, init);
  }

  #set(patch: Partial<InboxState>) {
    this.state = { ...this.state, ...patch };
    this.dispatchEvent(new Event('change'));
  }

  /** Back to idle from `status`. */
  #idle(status: InboxState['status']) {
    if (this.state.status === status) this.#set({ status: 'idle' });
  }

  /** A failure: in the state, in the console once (whatever elements show it) and as the `error` event. */
  #fail(error: Error, action: string, patch?: Partial<InboxState> | false, messageId?: string) {
    this.#set({ ...patch, error });
    console.warn('notif-inbox:', action, error);
    this.dispatchEvent(new CustomEvent<InboxErrorDetail>('error', { detail: { error, action, messageId } }));
  }

  // ---- lifecycle ----

  connect(): void {
    if (this.#refs++) return;
    const key = this.#key;
    if (key && !registry.has(key)) registry.set(key, this);
    for (const type of WINDOW_EVENTS) addEventListener(type, this.#onEvent);
    if (self.BroadcastChannel && navigator.locks) {
      this.#channel = new BroadcastChannel(this.#name);
      this.#channel.onmessage = ({ data }: MessageEvent<Note>) => {
        if (data === 'hello') {
          if (this.#leader && this.counted) this.#post(this.state.unseenCount);
        } else if (typeof data == 'number') this.#countChanged(data);
        else if (Array.isArray(data)) this.#hear(data);
        else if (data === 'stale') this.#refetch();
        else this.#sync(data);
      };
      this.#post('hello');
    }
    this.#onEvent();
  }

  disconnect(): void {
    if (!this.#refs || --this.#refs) return;
    for (const type of WINDOW_EVENTS) removeEventListener(type, this.#onEvent);
    this.#resign();
    this.#channel?.close();
    this.#channel = undefined;
    clearTimeout(this.#timer);
    this.#feedCtrl?.abort();
    this.#countCtrl?.abort();
    this.#abortMore();
    this.#feedCtrl = this.#countCtrl = this.#first = this.#counting = undefined;
    this.#openFeeds = 0;
    this.#idle('loading');
    queueMicrotask(() => {
      if (!this.#refs && registry.get(this.#key!) === this) registry.delete(this.#key!);
    });
  }

  /** At least one element is connected. */
  get connected(): boolean {
    return this.#refs > 0;
  }

  get #hidden() {
    return document.visibilityState === 'hidden';
  }

  /**
   * Polls while this tab leads (or is alone: no locks/BroadcastChannel), visible and not stopped by a
   * 401/403, and the stream is not open.
   */
  get #polls() {
    return this.#refs > 0 && !this.#hidden && !this.#halted && (this.#leader || !this.#channel) && !this.#live;
  }

  /**
   * Page visibility and the window's focus, online and offline events (and a check at connect):
   * offline or hidden stops polling (a hidden tab also leaves leadership); visible, the tab campaigns
   * for leadership and wakes up (at once when back online).
   */
  #onEvent = (e?: Event) => {
    const type = e?.type;
    if (type === 'offline' || this.#hidden) {
      clearTimeout(this.#timer);
      if (type === 'offline') this.#set({ status: 'offline' });
      // Hidden, a tab keeps its open stream for 60 s (a quick look elsewhere costs nothing).
      else if (this.#live) this.#later ??= setTimeout(() => this.#resign(), 6e4);
      else this.#resign();
    } else {
      // Visible, focused or back online: the 60 s hidden are over, and a reconnect waiting for its
      // backoff is not waited for (the count this wakes for reopens the stream, #listen).
      this.#later = void clearTimeout(this.#later);
      // Visible tabs queue for the lock; the holder polls.
      if (this.#channel && !this.#leader && !this.#lockAbort) {
        const { signal } = (this.#lockAbort = new AbortController());
        navigator.locks
          .request(this.#name, { signal }, () => {
            if (!this.#refs || this.#hidden) return void (this.#lockAbort = undefined);
            this.#leader = true;
            void this.#poll();
            return new Promise((release) => (signal.onabort = release));
          })
          .catch(() => {});
      }
      // Wake up: the count (when this tab polls) and the first page (when a feed is open), at most
      // once a second but at once when back online.
      const now = Date.now();
      if (type !== 'online' && now - this.#lastWake! < 1000) return;
      this.#lastWake = now;
      this.#idle('offline');
      if (this.#polls) void this.#poll();
      if (this.#openFeeds) void this.#fetchFirst();
    }
  };

  #resign() {
    this.#lockAbort?.abort();
    this.#lockAbort = undefined;
    this.#leader = false;
    // Closes the stream (on purpose: no reconnect; its reader hears of it after this).
    this.#stream?.abort();
    this.#stream = this.#live = this.#later = void clearTimeout(this.#later);
  }

  #post(note: Note) {
    this.#channel?.postMessage(note);
  }

  /** Applies a change of messages and count. */
  #sync({ upsert = [], remove = [], all, count }: Sync) {
    const byId = new Map(upsert.map((m) => [m._id, m]));
    const messages = this.state.messages.filter((m) => !remove.includes(m._id)).map((m) => byId.get(m._id) ?? (all ? { ...m, ...all } : m));
    this.#set({ messages, unseenCount: count });
  }

  /** Applies a change here and tells the other tabs. */
  #share(note: Sync) {
    this.#sync(note);
    this.#post(note);
  }

  // ---- freshness ----

  /**
   * The leader holds the service's stream (read with fetch, so headers and an app's fetch apply)
   * and relays each event to the other tabs. It asks for it after each count it fetched (the
   * service answers 404 for a subscriber it does not know yet, as a server without the stream
   * does: after a count, a 404 means "no stream", and a new subscriber goes live with its first
   * message). Closed, it polls (one count at once) and reconnects with backoff (#later: only a wake
   * lets a count reconnect it sooner); a server without the stream is polled as before, and not
   * asked again while this tab leads.
   */
  async #listen() {
    if (this.#stream || this.#later || this.config.live == 'poll' || !this.#polls) return;
    const ctrl = (this.#stream = new AbortController());
    try {
      const res = await this.#call<Response>('notifications/stream', {
        signal: ctrl.signal,
        raw: true,
        headers: this.#resume,
      });
      let buffer = '';
      this.#live = true;
      this.#schedule(); // none: polling rests while the stream is open
      // Cut into lines as the SSE spec reads them (lines end at CR, LF or CRLF; not at U+2028 as a
      // regex's `m` flag has it), heard here and relayed to the other tabs, which hear them alike.
      const read = (text: string) => {
        const lines = (buffer += text).split(/\r\n?|\n/);
        buffer = lines.pop()!;
        this.#hear(lines);
        this.#post(lines);
      };
      await res.body!.pipeThrough(new TextDecoderStream()).pipeTo(new WritableStream({ write: read }));
      throw 0; // the service ended it
    } catch (e) {
      const { status } = e as NotifApiError;
      if (ctrl != this.#stream) return; // closed on purpose
      // 404, 405, 501: a server without the stream, polled from now on; 401, 403: refused, and not
      // asked again either (the stream is asked for just after a count was answered: the polls go
      // on, and one refused halts the store). The stream stays set, so this tab does not ask again
      // while it leads.
      if (status == 401 || status == 403 || status == 404 || status == 405 || status == 501) return;
      this.#stream = this.#live = undefined;
      if (this.#hidden) return this.#resign();
      void this.#poll();
      this.#later = setTimeout(() => ((this.#later = undefined), this.#listen()), backoff(this.#retry || 1000, this.#drops++, e as NotifApiError));
    }
  }

  /**
   * Lines of the stream, in every tab. Each of the service's events is one `data:` line (its id
   * inside): a data line is an event; the others are `retry:`, `id:`, blank lines and comments.
   */
  #hear(lines: string[]) {
    for (const line of lines) {
      const [k, v] = line.split(/: ?(.*)/s);
      // The service's retry (it sends 1000). One under 500 ms, or not a number, is ignored: a stream
      // that sends an event and ends would be asked for again (with a count) at that pace, its
      // backoff starting again at each event.
      if (k == 'retry' && +v! >= 500) this.#retry = +v!;
      if (k == 'data') {
        this.#drops = 0; // the stream works: its backoff starts again
        try {
          this.#onLive(JSON.parse(v!));
        } catch {
          this.#refetch(); // unreadable: a refetch
        }
      }
    }
  }

  /** An event of the stream (its data, parsed), in every tab. */
  #onLive({ id, count, message }: Live) {
    if (id) this.#resume = { 'last-event-id': id };
    // A count; else a new message or a refetch: the first page is stale even when the count says
    // nothing (a mark-all-seen made meanwhile, as an open bell's own, leaves it where it was).
    if (count != null) this.#countChanged(count);
    else this.#refetch();
    // Every new message of the subscriber, once per browser (whatever feeds show it; a message's id
    // is unique to it): the first tab to take this message's lock tells the page (a visible tab
    // first: hidden ones try a moment later), and keeps it a while so later tabs find it taken.
    const tell = () => this.dispatchEvent(new CustomEvent('message-received', { detail: { message } }));
    if (message)
      setTimeout(
        () =>
          this.#channel
            ? navigator.locks.request('notif:' + message._id, { ifAvailable: true }, (lock) => lock && (tell(), new Promise((r) => setTimeout(r, 1e4))))
            : tell(),
        this.#hidden ? 99 : 0,
      );
  }

  #schedule(delay = this.#interval) {
    clearTimeout(this.#timer);
    if (this.#polls) this.#timer = setTimeout(() => void this.#poll(), delay);
  }

  async #poll() {
    clearTimeout(this.#timer);
    try {
      await this.#fetchCount();
    } catch (e) {
      if (aborted(e)) return;
      const err = e as NotifApiError;
      if (err.status === 401 || err.status === 403) {
        this.#halted = true;
        return this.#fail(err, 'poll', { status: 'error' });
      }
      if (!err.status) this.#set({ status: 'offline' });
      // (404: no such subscriber yet, not a failure: asked again at the usual pace.)
      this.#schedule(err.status == 404 ? undefined : backoff(this.#interval, ++this.#failures, err));
    }
  }

  /**
   * The unseen count, one request at a time: applied here, told to the other tabs, and the next poll
   * scheduled (unless the answer came too late to use).
   */
  #fetchCount(quiet?: boolean): Promise<void> {
    return (this.#counting ??= (async () => {
      const ctrl = (this.#countCtrl = new AbortController());
      try {
        const { count } = await this.#call<UnseenCountResponse>('notifications/unseen', ctrl);
        this.#failures = 0;
        this.#schedule();
        if (ctrl !== this.#countCtrl) return;
        if (this.#busy) return void (this.#dirtyCount = true);
        this.#countChanged(count, quiet);
        this.#post(count);
        void this.#listen();
      } finally {
        this.#counting = undefined;
      }
    })());
  }

  /** A new unseen count; `quiet` when the caller fetches the first page itself (refresh). */
  #countChanged(count: number, quiet?: boolean) {
    this.#idle('offline');
    if (count === this.state.unseenCount && this.counted) return;
    // The first count only fills the badge: a page loaded meanwhile is as fresh as it.
    this.#stale ||= this.counted;
    this.counted = true;
    this.#set({ unseenCount: count });
    if (!quiet && this.#stale && this.#openFeeds && this.state.loaded) void this.#fetchFirst();
  }

  /** One page of the current tab. */
  #page(page: number, signal: AbortSignal): Promise<FeedResponse> {
    const { feedIdentifier, payload } = this.config;
    // read: false on the unread tab, no filter on all
    return this.#call('notifications/feed', {
      signal,
      // fields: the projection (README, "Extensions"): our service sends only these, a spec server ignores it.
      query: { page, limit: this.#pageSize, read: this.state.tab !== 'unread' && undefined, feedIdentifier, payload: payload && encodePayload(payload), fields: FEED_FIELDS },
    });
  }

  #abortMore() {
    this.#moreCtrl?.abort();
    this.#moreCtrl = undefined;
    if (this.state.loadingMore) this.#set({ loadingMore: false });
  }

  /** The first page is stale: refetched now when a feed is open, else when one opens. */
  #refetch() {
    this.#stale = true;
    if (this.#openFeeds) void this.#fetchFirst();
  }

  /** Refetches the first page; resolves when the latest such request is answered. */
  #fetchFirst(): Promise<void> {
    return (this.#first = this.#loadFirst());
  }

  /** Loads the first page and merges it over what is loaded (older pages are kept). */
  async #loadFirst(): Promise<void> {
    this.#feedCtrl?.abort();
    const ctrl = (this.#feedCtrl = new AbortController());
    if (!this.state.loaded) this.#set({ status: 'loading' });
    // Asked again in this turn (a new message and the count it raised come in one read of the
    // stream): only the last asks the server.
    await 0;
    if (ctrl !== this.#feedCtrl) return this.#first;
    // Asked while a mutation is in flight, the page may predate it: it is asked again once they end
    // (see #busy; that later request supersedes this one, whenever this one is answered).
    if (this.#busy) this.#dirtyFeed = true;
    let res: FeedResponse;
    try {
      res = await this.#page(0, ctrl.signal);
    } catch (e) {
      if (ctrl !== this.#feedCtrl) return this.#first;
      this.#first = undefined; // the latest request is answered
      if (aborted(e)) return;
      const { status, loaded } = this.state;
      return this.#fail(e as Error, 'fetch', { status: !(e as NotifApiError).status ? 'offline' : loaded ? status : 'error' });
    }
    if (ctrl !== this.#feedCtrl) return this.#first;
    this.#first = undefined;
    if (this.#busy) return void (this.#dirtyFeed = true);
    const page = res.data ?? [];
    const old = this.state.messages;
    // Keep older loaded pages only when the new page joins them (no gap in between).
    // (an empty page joins nothing)
    const joins = res.hasMore && old.some((m) => page.some((p) => p._id === m._id));
    if (!joins) this.#abortMore();
    this.#stale = false;
    this.#fetchedAt = Date.now();
    this.#set({
      messages: merge(joins ? old.filter((m) => newestFirst(m, page.at(-1)!) > 0) : [], page, old),
      hasMore: joins ? this.state.hasMore : !!res.hasMore,
      totalCount: res.totalCount,
      loaded: true,
      status: 'idle',
      error: null,
    });
  }

  feedOpened(): void {
    this.#openFeeds++;
    if (this.#stale || !this.state.loaded || Date.now() - this.#fetchedAt! > this.#interval) void this.#fetchFirst();
  }

  feedClosed(): void {
    if (this.#openFeeds) this.#openFeeds--;
  }

  setTab(tab: InboxTab): void {
    if (tab === this.state.tab) return;
    this.#abortMore();
    this.#set({ tab, messages: [], hasMore: false, loaded: false });
    void this.#fetchFirst();
  }

  async refresh(): Promise<void> {
    this.#halted = false;
    this.#failures = 0;
    await Promise.all([
      this.#fetchCount(true).catch((e) => aborted(e) || this.#fail(e, 'fetch')),
      this.#fetchFirst(),
    ]);
  }

  async loadMore(): Promise<void> {
    const s = this.state;
    if (!s.loaded) return this.#first ?? this.#fetchFirst();
    if (!s.hasMore || s.loadingMore) return;
    const ctrl = (this.#moreCtrl = new AbortController());
    // Page by what is loaded of this tab's list; overlap from new messages is deduplicated.
    const loaded = s.messages.filter((m) => s.tab !== 'unread' || !m.read).length;
    this.#set({ loadingMore: true });
    try {
      const res = await this.#page((loaded / this.#pageSize) | 0, ctrl.signal);
      if (ctrl === this.#moreCtrl) this.#set({ messages: merge(this.state.messages, res.data ?? []), hasMore: !!res.hasMore, totalCount: res.totalCount, loadingMore: false });
    } catch (e) {
      if (ctrl === this.#moreCtrl && !aborted(e)) this.#fail(e as Error, 'loadMore', { loadingMore: false });
    }
  }

  // ---- mutations ----

  /**
   * Applies `change` to the messages at once (to the one with `messageId`, or to all without one; it
   * returns the changed message, null to remove it, or undefined to leave it), calls the server
   * (`[method, path, body]`, the path as for #call) with one idempotency key (retried with the same key while offline or throttled), and rolls back with
   * an `error` event when the server refuses.
   * `all` is what a mark-all sets on every message (the unseen count becomes 0).
   */
  async #mutate(
    action: string,
    messageId: string | undefined,
    change: (m: Message) => Message | null | void,
    [method, rest, body]: [string, string, unknown?],
    all?: Partial<Message>,
  ): Promise<void> {
    const { messages, unseenCount } = this.state;
    const originals: Message[] = [];
    const upsert: Message[] = [];
    const remove: string[] = [];
    let count = unseenCount;
    for (const m of messages) {
      const c = messageId && m._id !== messageId ? undefined : change(m);
      if (c === undefined) continue;
      originals.push(m);
      if (c) upsert.push(c);
      else remove.push(m._id);
      count += +!!(c && !c.seen) - +!m.seen;
    }
    count = all ? 0 : Math.max(0, count);
    const countDelta = count - unseenCount;
    this.#share({ upsert, remove, all, count });

    // (A first page in flight may be read before this reaches the server: asked again after it.)
    if (this.#first) this.#dirtyFeed = true;
    this.#busy++;
    const idempotencyKey = newIdempotencyKey();
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          const server = [await this.#call(rest, { idempotencyKey, body }, method)].flat().filter((m): m is Message => !!(m as Message)?._id); // messages (not counts or acknowledgements)
          if (server.length) this.#share({ upsert: server, count: this.state.unseenCount });
          return;
        } catch (e) {
          const { status, retryAfter, message } = e as NotifApiError;
          // A message the server no longer has (deleted, here or on another device; its 404 names
          // it, where one of a server without the endpoint cannot): gone here too, not an error.
          if (status == 404 && (action == 'remove' || message.includes(messageId!))) return this.#share({ remove: [messageId!], count: this.state.unseenCount });
          // Retried: offline (once back online), conflicting (409), throttled (429), unavailable (>= 502).
          if (!(status === 0 || status === 409 || status === 429 || status >= 502) || attempt > 3) throw e;
          await new Promise((r) =>
            navigator.onLine ? setTimeout(r, (retryAfter ?? 2 ** attempt / 2) * 1000) : addEventListener('online', r, { once: true }),
          );
        }
      }
    } catch (e) {
      // Roll back only what this mutation changed; later state (polls, other mutations) stays.
      const back = new Map(originals.map((m) => [m._id, m]));
      this.#set({
        messages: merge(
          this.state.messages.map((m) => back.get(m._id) ?? m),
          originals.filter((m) => remove.includes(m._id)),
        ),
        unseenCount: Math.max(0, this.state.unseenCount - countDelta),
      });
      // No single-message mark-as on this server: the elements hide the read toggle.
      const unsupported = !all && action.startsWith('mark') && (e as NotifApiError).status === 404;
      this.#post('stale');
      this.#fail(e as Error, action, unsupported && { markAsSupported: false }, messageId);
    } finally {
      if (!--this.#busy) {
        if (this.#dirtyCount && this.#polls) void this.#poll();
        if (this.#dirtyFeed) void this.#fetchFirst();
        this.#dirtyCount = this.#dirtyFeed = false;
      }
    }
  }

  #markAll(markAs: MarkAs & ('read' | 'seen'), action: string) {
    const all: Partial<Message> = markAs === 'read' ? { read: true, seen: true } : { seen: true };
    return this.#mutate(
      action,
      undefined,
      (m) => (!m.seen || (markAs === 'read' && !m.read) ? { ...m, ...all } : undefined),
      ['POST', 'messages/mark-all', { markAs, feedIdentifier: this.config.feedIdentifier }],
      all,
    );
  }

  markAllRead(): Promise<void> {
    return this.#markAll('read', 'markAllRead');
  }

  markAllSeen(): Promise<void> {
    return this.#markAll('seen', 'markAllSeen');
  }

  async #markOne(messageId: string, read: boolean) {
    if (this.state.markAsSupported)
      return this.#mutate(
      read ? 'markRead' : 'markUnread',
      messageId,
      (m) => ({ ...m, read, seen: m.seen || read }),
      ['POST', 'messages/mark-as', { messageId, markAs: read ? 'read' : 'unread' }],
    );
  }

  markRead(messageId: string): Promise<void> {
    return this.#markOne(messageId, true);
  }

  markUnread(messageId: string): Promise<void> {
    return this.#markOne(messageId, false);
  }

  remove(messageId: string): Promise<void> {
    return this.#mutate('remove', messageId, () => null, ['DELETE', '/v1/messages/' + encodeURIComponent(messageId)]);
  }

  /** The action, then (an unread message) mark-as read: shown read at once, and read on the server after the action's answer. */
  async action(messageId: string, type: MessageActionType): Promise<void> {
    const unread = this.state.messages.some((m) => m._id === messageId && !m.read);
    await this.#mutate(
      'action',
      messageId,
      (m) => ({ ...m, read: true, seen: true, cta: { ...m.cta, action: { ...m.cta?.action, status: 'done', result: { type, payload: {} } } } }),
      ['POST', `messages/${encodeURIComponent(messageId)}/actions/${type}`, { status: 'done' }],
    );
    if (unread) await this.#markOne(messageId, true);
  }
}
