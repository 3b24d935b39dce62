// One tab's list: its first page (refetched when stale, merged over what is loaded), the next
// pages (load more), the tab's filter, and the feed's order.
import { encodePayload, type NotifApiError } from '../api/request.ts';
import type { FeedResponse, Message } from '../api/types.ts';
import { isAbort, type StoreContext } from './context.ts';
import type { FeedList, InboxState, InboxTab } from './types.ts';

/** The service knows no such subscriber yet (an API key's call; through the proxy it is made on first contact): an empty inbox. */
const NOT_FOUND = 404;

/**
 * The Message fields the feed asks for (the projection; a page of 20 without the embedded subscriber
 * and template is a tenth of the bytes). `payload` and `transactionId` are kept for apps' own rendering.
 */
export const FEED_FIELDS = '_id,subject,content,createdAt,read,seen,avatar,cta,templateIdentifier,transactionId,payload';

/** 1 when `x` sorts after `y` in descending order, -1 when before, 0 when equal. */
function descending(x: string, y: string): number {
  if (x > y) return -1;
  if (x < y) return 1;
  return 0;
}

/** The feed's order: newest first (createdAt, then _id, descending). */
export const newestFirst = (a: Message, b: Message): number => descending(a.createdAt, b.createdAt) || descending(a._id, b._id);

/**
 * `base` with `incoming` merged in by `_id` (incoming wins), newest first. A message that did not
 * change keeps the object it had in `known` (what is loaded), so the elements and an app's
 * renderMessage see it unchanged: its JSON, small (the projection), is compared only for ids in both.
 * Linear in what is loaded: no map of it is built, and `base` (sorted) followed by the page is two
 * runs the sort merges (a page older than what is loaded: one run).
 */
export function merge(base: readonly Message[], incoming: readonly Message[], known: readonly Message[] = base): Message[] {
  const added = new Map(incoming.map((message) => [message._id, message]));
  for (const message of known) {
    const newer = added.get(message._id);
    if (newer && JSON.stringify(newer) == JSON.stringify(message)) added.set(message._id, message);
  }
  return [...base.filter((message) => !added.has(message._id)), ...added.values()].sort(newestFirst);
}

export interface FeedPagesOptions {
  context: StoreContext;
  /** The tab whose list this is (its filter, and its place in the state's `lists`). */
  tab: InboxTab;
  /** Messages per page. */
  pageSize: number;
  /** A first page older than this (ms) is refetched when a feed opens. */
  maxAge: number;
  /** The mutations made here (mutations.ts): a first page the server read before some of them gets their changes. */
  mutations: {
    replayFromNow(): (messages: readonly Message[]) => readonly Message[] | undefined;
  };
}

export class FeedPages {
  #options: FeedPagesOptions;
  /** Feeds shown now (elements that said feedOpened). */
  #openFeeds = 0;
  /** The first page is known to be out of date (unset until a first page is loaded, which `loaded: false` already says). */
  #stale?: boolean;
  #fetchedAt?: number;
  /** The latest first-page request: the answer to any other is superseded and ignored. */
  #firstController?: AbortController;
  /** Later pages' request: independent of first-page refreshes. */
  #moreController?: AbortController;
  /** The latest first-page request, until it is answered. */
  #first?: Promise<void>;

  constructor(options: FeedPagesOptions) {
    this.#options = options;
  }

  /** At least one feed shows this list. */
  get open(): boolean {
    return this.#openFeeds > 0;
  }

  /** The list in the state. */
  get #list(): FeedList {
    return this.#options.context.state().lists[this.#options.tab];
  }

  #set(patch: Partial<FeedList>, statePatch?: Partial<InboxState>) {
    this.#options.context.setList(this.#options.tab, patch, statePatch);
  }

  /** A feed shows the list: its first page is fetched when none is loaded, or it is stale or old. */
  opened(): void {
    this.#openFeeds++;
    this.fetchIfOld();
  }

  /** Fetches the first page when none is loaded, or it is stale or old. */
  fetchIfOld(): void {
    const old = Date.now() - this.#fetchedAt! > this.#options.maxAge;
    if (this.#stale || !this.#list.loaded || old) void this.fetchFirst();
  }

  closed(): void {
    if (this.#openFeeds) this.#openFeeds--;
  }

  /** The first page is stale: refetched now when a feed is open, else when one opens. */
  refetch(): void {
    this.#stale = true;
    if (this.open) void this.fetchFirst();
  }

  /**
   * The unseen count changed: the first page is stale, unless this is the first count (it only
   * fills the badge: a page loaded meanwhile is as fresh as it). A stale page is refetched when a
   * feed shows it, unless `quiet` (the caller fetches it itself).
   */
  countChanged(firstCount: boolean, quiet: boolean): void {
    if (!firstCount) this.#stale = true;
    if (!quiet && this.#stale && this.open && this.#list.loaded) void this.fetchFirst();
  }

  /** Refetches the first page; resolves when the latest such request is answered. */
  fetchFirst(): Promise<void> {
    this.#first = this.#loadFirst();
    return this.#first;
  }

  /** The next page (or the first, when none is loaded yet). */
  async loadMore(): Promise<void> {
    const { context, pageSize, tab } = this.#options;
    const list = this.#list;
    if (!list.loaded) return this.#first ?? this.fetchFirst();
    if (!list.hasMore || list.loadingMore) return;
    const controller = new AbortController();
    this.#moreController = controller;
    // Page by what is loaded of this tab's list; overlap from new messages is deduplicated.
    const loaded = list.messages.filter((message) => tab !== 'unread' || !message.read).length;
    this.#set({ loadingMore: true });
    try {
      const response = await this.#page(Math.floor(loaded / pageSize), controller.signal);
      if (controller !== this.#moreController) return;
      this.#set({
        messages: merge(this.#list.messages, response.data ?? []),
        hasMore: !!response.hasMore,
        totalCount: response.totalCount,
        loadingMore: false,
      });
    } catch (error) {
      if (controller !== this.#moreController || isAbort(error)) return;
      this.#set({ loadingMore: false });
      context.fail(error as Error, 'loadMore');
    }
  }

  /** Every element let the store go: requests aborted, no feed open. */
  stop(): void {
    this.#firstController?.abort();
    this.#firstController = undefined;
    this.#first = undefined;
    this.#abortMore();
    this.#openFeeds = 0;
  }

  /** One page of the list. */
  #page(page: number, signal: AbortSignal): Promise<FeedResponse> {
    const { context, pageSize, tab } = this.#options;
    const { feedIdentifier, payload } = context.config;
    return context.call('notifications/feed', {
      signal,
      query: {
        page,
        limit: pageSize,
        // The Unread tab's filter; none on All.
        read: tab === 'unread' ? false : undefined,
        feedIdentifier,
        payload: payload && encodePayload(payload),
        // The projection (docs/service.md, "The wire"): our service sends only these, a server without it ignores it.
        fields: FEED_FIELDS,
      },
    });
  }

  #abortMore() {
    this.#moreController?.abort();
    this.#moreController = undefined;
    if (this.#list.loadingMore) this.#set({ loadingMore: false });
  }

  /** Loads the first page and merges it over what is loaded (older pages are kept). */
  async #loadFirst(): Promise<void> {
    const { context } = this.#options;
    this.#firstController?.abort();
    const controller = new AbortController();
    this.#firstController = controller;
    if (!this.#list.loaded) this.#set({ status: 'loading' });
    // Asked again in this turn (a new message and the count it raised come in one read of the
    // stream): only the last asks the server.
    await Promise.resolve();
    if (controller !== this.#firstController) return this.#first;
    const replayMutations = this.#options.mutations.replayFromNow();
    let response: FeedResponse;
    try {
      response = await this.#page(0, controller.signal);
    } catch (error) {
      if (controller !== this.#firstController) return this.#first;
      const status = (error as NotifApiError).status;
      // A subscriber the service has not seen yet has no messages: an empty inbox, not an error.
      if (status === NOT_FOUND) response = { data: [], totalCount: 0, hasMore: false, pageSize: this.#options.pageSize, page: 0 };
      else {
        this.#first = undefined; // the latest request is answered
        if (isAbort(error)) return;
        const { status: listStatus, loaded } = this.#list;
        let next = listStatus;
        if (!status) next = 'offline';
        else if (!loaded) next = 'error';
        this.#set({ status: next });
        context.fail(error as Error, 'fetch');
        return;
      }
    }
    if (controller !== this.#firstController) return this.#first;
    this.#first = undefined;
    // The server may have read the page before mutations made meanwhile (an open bell's mark all
    // seen): their changes are applied to it, as they were to what is loaded.
    // When some of them are no longer kept, the page is asked for again (a new request's are kept).
    const page = replayMutations(response.data ?? []);
    if (!page) return this.refetch();
    const loaded = this.#list.messages;
    // Older loaded pages are kept only when the new page joins them (no gap in between; an empty page joins nothing).
    const joins = response.hasMore && loaded.some((message) => page.some((fresh) => fresh._id === message._id));
    if (!joins) this.#abortMore();
    this.#stale = false;
    this.#fetchedAt = Date.now();
    const kept = joins ? loaded.filter((message) => newestFirst(message, page.at(-1)!) > 0) : [];
    this.#set({
      messages: merge(kept, page, loaded),
      hasMore: joins ? this.#list.hasMore : !!response.hasMore,
      totalCount: response.totalCount,
      loaded: true,
      status: 'idle',
    }, { error: null });
  }
}
