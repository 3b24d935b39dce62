// InboxStore: the state the elements render and the actions they call (the contract is types.ts).
// It polls the unseen count, refetches the first feed page only when needed, applies mutations
// optimistically, and shares one poller between the tabs of a browser (navigator.locks elects a
// leader among the visible tabs; BroadcastChannel carries its results and every tab's mutations).
// It never touches elements: only document.visibilityState and window events.
import {
  NotifApiError, deleteMessage, feed, markAll, markAs, messageAction, newIdempotencyKey, unseenCount,
  type CallOptions, type NotifClientOptions,
} from '../api/request.ts';
import type { FeedResponse, MarkAs, Message } from '../api/types.ts';
import type { InboxConfig, InboxErrorDetail, InboxState, InboxStoreApi, InboxTab, MessageActionType } from './types.ts';

const MAX_BACKOFF = 5 * 60_000;

/** What tabs tell each other (over BroadcastChannel). */
type Note =
  | { t: 'count'; count: number } // the leader's poll
  | { t: 'sync'; upsert?: Message[]; remove?: string[]; all?: Partial<Message>; count: number } // a mutation
  | { t: 'stale' } // a mutation was rolled back
  | { t: 'hello' }; // a tab arrived: the leader answers with the count

const newestFirst = (a: Message, b: Message) =>
  a.createdAt === b.createdAt ? (a._id < b._id ? 1 : a._id > b._id ? -1 : 0) : a.createdAt < b.createdAt ? 1 : -1;

/** `base` with `incoming` merged in by `_id` (incoming wins), newest first. */
const merge = (base: readonly Message[], incoming: readonly Message[]): Message[] => {
  const byId = new Map(base.map((m) => [m._id, m]));
  for (const m of incoming) byId.set(m._id, m);
  return [...byId.values()].sort(newestFirst);
};

const isUnseen = (m: Message | undefined) => !!m && !m.seen;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hasDocument = typeof document !== 'undefined';
const retryable = (e: unknown) => e instanceof NotifApiError && (e.status === 0 || e.status === 409 || e.status === 429 || e.status >= 502);

/** A short stable hash, so channel and lock names carry no secret. */
export const hash = (s: string): string => {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
};

/** The key of a store: service, subscriber, feed, payload filter and authentication (not the fetch function). */
export const storeKey = (c: InboxConfig): string =>
  JSON.stringify([c.baseUrl, c.subscriberId, c.feedIdentifier ?? null, c.payload ?? null, c.apiKey ?? null, c.subscriberHash ?? null]);

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

  /** Called when the first element arrives and when the last one leaves (for the page registry). */
  onConnect?: () => void;
  onDispose?: () => void;

  #pageSize: number;
  #interval: number;
  #name: string;
  #refs = 0;
  #openFeeds = 0;
  #stale = true;
  #fetchedAt = 0;
  #timer?: ReturnType<typeof setTimeout>;
  #failures = 0;
  #halted = false; // 401/403: polling stopped until refresh()
  #leader = false;
  #lockAbort?: AbortController;
  #unlock?: () => void;
  #channel?: BroadcastChannel;
  #feedSeq = 0; // first-page requests
  #feedCtrl?: AbortController;
  #moreSeq = 0; // later pages: independent of first-page refreshes
  #moreCtrl?: AbortController;
  #first?: Promise<void>; // the latest first-page request
  #countSeq = 0;
  #countCtrl?: AbortController;
  #counting?: Promise<number | undefined>;
  #busy = 0; // mutations in flight: server reads answered meanwhile may predate them
  #dirtyCount = false;
  #dirtyFeed = false;
  /** True once the server has answered the unseen count (until then the count is a placeholder 0). */
  counted = false;
  #lastWake = -Infinity;

  constructor(config: InboxConfig) {
    super();
    this.config = Object.freeze({ ...config });
    const size = Math.floor(config.pageSize ?? 20);
    this.#pageSize = Number.isFinite(size) ? Math.min(100, Math.max(1, size)) : 20;
    this.#interval = Math.max(1000, config.pollInterval ?? 15_000);
    this.#name = `notif-inbox:${hash(storeKey(config))}`;
    this.#api = {
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      fetch: config.fetch,
      headers: config.subscriberHash ? { 'x-subscriber-hash': config.subscriberHash } : undefined,
    };
  }

  subscribe(listener: (state: InboxState) => void): () => void {
    const handler = () => listener(this.state);
    this.addEventListener('change', handler);
    return () => this.removeEventListener('change', handler);
  }

  #set(patch: Partial<InboxState>) {
    this.state = { ...this.state, ...patch };
    this.dispatchEvent(new CustomEvent('change', { detail: this.state }));
  }

  #fail(error: Error, action: string, messageId?: string) {
    this.#set({ error });
    this.dispatchEvent(new CustomEvent<InboxErrorDetail>('error', { detail: { error, action, messageId } }));
  }

  // ---- lifecycle ----

  connect(): void {
    if (this.#refs++ > 0) return;
    this.onConnect?.();
    if (hasDocument) {
      document.addEventListener('visibilitychange', this.#onVisibility);
      for (const type of ['focus', 'online', 'offline']) window.addEventListener(type, this.#onWindow);
    }
    if (typeof BroadcastChannel !== 'undefined' && typeof navigator !== 'undefined' && navigator.locks) {
      this.#channel = new BroadcastChannel(this.#name);
      this.#channel.onmessage = (e: MessageEvent<Note>) => this.#onNote(e.data);
      this.#post({ t: 'hello' });
    }
    this.#onVisibility();
  }

  disconnect(): void {
    if (this.#refs === 0 || --this.#refs > 0) return;
    if (hasDocument) {
      document.removeEventListener('visibilitychange', this.#onVisibility);
      for (const type of ['focus', 'online', 'offline']) window.removeEventListener(type, this.#onWindow);
    }
    this.#resign();
    this.#channel?.close();
    this.#channel = undefined;
    clearTimeout(this.#timer);
    this.#feedCtrl?.abort();
    this.#countCtrl?.abort();
    this.#abortMore();
    this.#feedSeq++;
    this.#countSeq++;
    this.#first = this.#counting = undefined;
    this.#openFeeds = 0;
    if (this.state.loadingMore || this.state.status === 'loading') this.#set({ loadingMore: false, status: 'idle' });
    this.onDispose?.();
  }

  /** At least one element is connected. */
  get connected(): boolean {
    return this.#refs > 0;
  }

  get #hidden() {
    return hasDocument && document.visibilityState === 'hidden';
  }

  /** Polls while this tab leads (or alone: no locks/BroadcastChannel), and only while visible. */
  get #polls() {
    return this.#refs > 0 && !this.#hidden && !this.#halted && (this.#leader || !this.#channel);
  }

  #onVisibility = () => {
    if (this.#refs === 0) return;
    if (this.#hidden) {
      clearTimeout(this.#timer);
      this.#resign();
    } else {
      this.#campaign();
      this.#wake();
    }
  };

  #onWindow = (e: Event) => {
    if (e.type === 'offline') {
      clearTimeout(this.#timer);
      this.#set({ status: 'offline' });
    } else this.#wake(e.type === 'online');
  };

  /** Visible tabs queue for the lock; the holder polls. */
  #campaign() {
    if (!this.#channel || this.#leader || this.#lockAbort) return;
    const abort = (this.#lockAbort = new AbortController());
    navigator.locks
      .request(this.#name, { signal: abort.signal }, () => {
        this.#lockAbort = undefined;
        if (this.#refs === 0 || this.#hidden) return;
        this.#leader = true;
        void this.#poll();
        return new Promise<void>((release) => (this.#unlock = release));
      })
      .catch(() => {});
  }

  #resign() {
    this.#lockAbort?.abort();
    this.#lockAbort = undefined;
    this.#unlock?.();
    this.#unlock = undefined;
    this.#leader = false;
  }

  #post(note: Note) {
    this.#channel?.postMessage(note);
  }

  #onNote(note: Note) {
    if (note.t === 'hello') {
      if (this.#leader && this.counted) this.#post({ t: 'count', count: this.state.unseenCount });
    } else if (note.t === 'count') {
      this.#countChanged(note.count);
    } else if (note.t === 'stale') {
      this.#stale = true;
      if (this.#openFeeds) void this.#fetchFirst();
    } else {
      const all = note.all;
      const remove = new Set(note.remove);
      const upsert = new Map(note.upsert?.map((m) => [m._id, m]));
      const messages = this.state.messages
        .filter((m) => !remove.has(m._id))
        .map((m) => upsert.get(m._id) ?? (all ? { ...m, ...all } : m));
      this.#set({ messages, unseenCount: note.count });
    }
  }

  // ---- freshness ----

  /** Now: the count (when this tab polls) and the first page (when a feed is open). */
  #wake(force = false) {
    if (this.#refs === 0 || this.#hidden) return;
    const now = Date.now();
    if (!force && now - this.#lastWake < 1000) return;
    this.#lastWake = now;
    if (this.state.status === 'offline') this.#set({ status: 'idle' });
    if (this.#polls) void this.#poll();
    if (this.#openFeeds) void this.#fetchFirst();
  }

  #schedule(delay = this.#interval) {
    clearTimeout(this.#timer);
    if (this.#polls) this.#timer = setTimeout(() => void this.#poll(), delay);
  }

  async #poll() {
    clearTimeout(this.#timer);
    try {
      const count = await this.#fetchCount();
      this.#failures = 0;
      if (count !== undefined) this.#post({ t: 'count', count });
      this.#schedule();
    } catch (e) {
      if ((e as Error)?.name === 'AbortError') return;
      const err = e as NotifApiError;
      if (err.status === 401 || err.status === 403) {
        this.#halted = true;
        this.#set({ status: 'error' });
        return this.#fail(err, 'poll');
      }
      if (err.status === 0) this.#set({ status: 'offline' });
      const backoff = Math.min(MAX_BACKOFF, this.#interval * 2 ** ++this.#failures) * (0.5 + Math.random() / 2);
      this.#schedule(Math.max(backoff, (err.retryAfter ?? 0) * 1000));
    }
  }

  /** The unseen count, one request at a time; undefined when the answer came too late to use. */
  #fetchCount(refetch = true): Promise<number | undefined> {
    return (this.#counting ??= this.#loadCount(refetch).finally(() => (this.#counting = undefined)));
  }

  async #loadCount(refetch: boolean) {
    const ctrl = (this.#countCtrl = new AbortController());
    const seq = this.#countSeq;
    const { count } = await unseenCount(this.#api, this.config.subscriberId, {}, { signal: ctrl.signal });
    if (seq !== this.#countSeq) return undefined;
    if (this.#busy) {
      this.#dirtyCount = true;
      return undefined;
    }
    this.#countChanged(count, refetch);
    return count;
  }

  #countChanged(count: number, refetch = true) {
    if (this.state.status === 'offline') this.#set({ status: 'idle' });
    if (count === this.state.unseenCount && this.counted) return;
    // The first count only fills the badge: a page loaded meanwhile is as fresh as it.
    this.#stale ||= this.counted;
    this.counted = true;
    this.#set({ unseenCount: count });
    if (refetch && this.#stale && this.#openFeeds && this.state.loaded) void this.#fetchFirst();
  }

  #feedQuery(page: number) {
    const { feedIdentifier, payload } = this.config;
    return { page, limit: this.#pageSize, read: this.state.tab === 'unread' ? false : undefined, feedIdentifier, payload };
  }

  #abortMore() {
    this.#moreCtrl?.abort();
    this.#moreSeq++;
    if (this.state.loadingMore) this.#set({ loadingMore: false });
  }

  /** Refetches the first page; resolves when the latest such request is answered. */
  #fetchFirst(): Promise<void> {
    const p: Promise<void> = this.#loadFirst().finally(() => {
      if (this.#first === p) this.#first = undefined;
    });
    return (this.#first = p);
  }

  /** Loads the first page and merges it over what is loaded (older pages are kept). */
  async #loadFirst(): Promise<void> {
    this.#feedCtrl?.abort();
    const { signal } = (this.#feedCtrl = new AbortController());
    const seq = ++this.#feedSeq;
    if (!this.state.loaded) this.#set({ status: 'loading' });
    let res: FeedResponse;
    try {
      res = await feed(this.#api, this.config.subscriberId, this.#feedQuery(0), { signal });
    } catch (e) {
      if (seq !== this.#feedSeq) return this.#first;
      if ((e as Error)?.name === 'AbortError') return;
      const err = e as NotifApiError;
      this.#set({ status: err.status === 0 ? 'offline' : this.state.loaded ? this.state.status : 'error' });
      return this.#fail(err, 'fetch');
    }
    if (seq !== this.#feedSeq) return this.#first;
    if (this.#busy) {
      this.#dirtyFeed = true;
      return;
    }
    const page = res.data ?? [];
    const old = this.state.messages;
    const last = page[page.length - 1];
    const ids = new Set(page.map((m) => m._id));
    // Keep older loaded pages only when the new page joins them (no gap in between).
    const joins = res.hasMore && last && old.some((m) => ids.has(m._id));
    const messages = joins ? merge(old.filter((m) => newestFirst(m, last) > 0), page) : merge([], page);
    if (!joins) this.#abortMore();
    this.#stale = false;
    this.#fetchedAt = Date.now();
    this.#set({ messages, hasMore: joins ? this.state.hasMore : !!res.hasMore, loaded: true, status: 'idle', error: null });
  }

  feedOpened(): void {
    this.#openFeeds++;
    if (this.#stale || !this.state.loaded || Date.now() - this.#fetchedAt > this.#interval) void this.#fetchFirst();
  }

  feedClosed(): void {
    this.#openFeeds = Math.max(0, this.#openFeeds - 1);
  }

  setTab(tab: InboxTab): void {
    if (tab === this.state.tab) return;
    this.#abortMore();
    this.#set({ tab, messages: [], hasMore: false, loaded: false, loadingMore: false });
    void this.#fetchFirst();
  }

  async refresh(): Promise<void> {
    this.#halted = false;
    this.#failures = 0;
    await Promise.all([
      this.#fetchCount(false).then(
        (count) => {
          if (count !== undefined) this.#post({ t: 'count', count });
          this.#schedule();
        },
        (e) => {
          if ((e as Error)?.name !== 'AbortError') this.#fail(e as Error, 'fetch');
        },
      ),
      this.#fetchFirst(),
    ]);
  }

  async loadMore(): Promise<void> {
    const s = this.state;
    if (!s.loaded) return this.#first ?? this.#fetchFirst();
    if (!s.hasMore || s.loadingMore) return;
    const { signal } = (this.#moreCtrl = new AbortController());
    const seq = ++this.#moreSeq;
    // Page by what is loaded of this tab's list; overlap from new messages is deduplicated.
    const loaded = s.tab === 'unread' ? s.messages.filter((m) => !m.read).length : s.messages.length;
    this.#set({ loadingMore: true });
    try {
      const res = await feed(this.#api, this.config.subscriberId, this.#feedQuery(Math.floor(loaded / this.#pageSize)), { signal });
      if (seq !== this.#moreSeq) return;
      this.#set({ messages: merge(this.state.messages, res.data ?? []), hasMore: !!res.hasMore, loadingMore: false });
    } catch (e) {
      if (seq !== this.#moreSeq || (e as Error)?.name === 'AbortError') return;
      this.#set({ loadingMore: false });
      this.#fail(e as Error, 'loadMore');
    }
  }

  // ---- mutations ----

  /**
   * Applies `change` to the messages `which` selects at once, calls the server with one
   * idempotency key (retried with the same key while offline or throttled), and rolls back with an
   * `error` event when the server refuses. `change` returning null removes the message.
   */
  async #mutate(
    action: string,
    messageId: string | undefined,
    which: (m: Message) => boolean,
    change: (m: Message) => Message | null,
    call: (o: CallOptions) => Promise<Message | Message[] | unknown>,
    opts: { all?: Partial<Message>; count?: number; ok404?: boolean } = {},
  ): Promise<void> {
    const before = this.state;
    const originals = before.messages.filter(which);
    const changed = originals.map(change);
    const removed = originals.filter((_, i) => !changed[i]).map((m) => m._id);
    const upsert = changed.filter((m): m is Message => !!m);
    const delta = originals.reduce((d, m, i) => d + +isUnseen(changed[i] ?? undefined) - +isUnseen(m), 0);
    const count = opts.count ?? Math.max(0, before.unseenCount + delta);
    const countDelta = count - before.unseenCount;
    const apply = (ups: Message[]) => {
      const map = new Map(ups.map((m) => [m._id, m]));
      const gone = new Set(removed);
      this.#set({
        messages: this.state.messages.filter((m) => !gone.has(m._id)).map((m) => map.get(m._id) ?? m),
      });
    };
    apply(upsert);
    this.#set({ unseenCount: count });
    this.#post({ t: 'sync', upsert, remove: removed, all: opts.all, count });

    this.#busy++;
    const idempotencyKey = newIdempotencyKey();
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          const result = await call({ idempotencyKey });
          const server = (Array.isArray(result) ? result : [result]).filter(
            (m): m is Message => !!m && typeof m === 'object' && typeof (m as Message)._id === 'string',
          );
          if (server.length) {
            apply(server);
            this.#post({ t: 'sync', upsert: server, count: this.state.unseenCount });
          }
          return;
        } catch (e) {
          const err = e as NotifApiError;
          if (opts.ok404 && err.status === 404) return;
          if (!retryable(err) || attempt >= 4) throw err;
          if (typeof navigator !== 'undefined' && !navigator.onLine) {
            await new Promise((r) => window.addEventListener('online', r, { once: true }));
          } else await sleep(err.retryAfter !== undefined ? err.retryAfter * 1000 : 500 * 2 ** attempt);
        }
      }
    } catch (e) {
      // Roll back only what this mutation changed; later state (polls, other mutations) stays.
      const gone = new Set(removed);
      const back = new Map(originals.map((m) => [m._id, m]));
      this.#set({
        messages: merge(
          this.state.messages.map((m) => back.get(m._id) ?? m),
          originals.filter((m) => gone.has(m._id)),
        ),
        unseenCount: Math.max(0, this.state.unseenCount - countDelta),
      });
      if (action === 'markRead' || action === 'markUnread') {
        if ((e as NotifApiError).status === 404) this.#set({ markAsSupported: false });
      }
      this.#post({ t: 'stale' });
      this.#fail(e as Error, action, messageId);
    } finally {
      if (--this.#busy === 0) {
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
      (m) => (markAs === 'read' ? !m.read || !m.seen : !m.seen),
      (m) => ({ ...m, ...all }),
      (o) => markAll(this.#api, this.config.subscriberId, { markAs, feedIdentifier: this.config.feedIdentifier }, o),
      { all, count: 0 },
    );
  }

  markAllRead(): Promise<void> {
    return this.#markAll('read', 'markAllRead');
  }

  markAllSeen(): Promise<void> {
    return this.#markAll('seen', 'markAllSeen');
  }

  #markOne(messageId: string, read: boolean) {
    if (!this.state.markAsSupported) return Promise.resolve();
    return this.#mutate(
      read ? 'markRead' : 'markUnread',
      messageId,
      (m) => m._id === messageId,
      (m) => ({ ...m, read, seen: m.seen || read }),
      (o) => markAs(this.#api, this.config.subscriberId, { messageId, markAs: read ? 'read' : 'unread' }, o),
    );
  }

  markRead(messageId: string): Promise<void> {
    return this.#markOne(messageId, true);
  }

  markUnread(messageId: string): Promise<void> {
    return this.#markOne(messageId, false);
  }

  remove(messageId: string): Promise<void> {
    return this.#mutate(
      'remove',
      messageId,
      (m) => m._id === messageId,
      () => null,
      (o) => deleteMessage(this.#api, messageId, o).then(() => undefined),
      { ok404: true },
    );
  }

  action(messageId: string, type: MessageActionType): Promise<void> {
    return this.#mutate(
      'action',
      messageId,
      (m) => m._id === messageId,
      (m) => ({ ...m, cta: { ...m.cta, action: { ...m.cta?.action, status: 'done', result: { type, payload: {} } } } }),
      (o) => messageAction(this.#api, this.config.subscriberId, messageId, type, { status: 'done' }, o),
    );
  }
}
