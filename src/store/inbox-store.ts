// InboxStore: the state the elements render and the actions they call (the contract is types.ts).
// A facade over its parts: each tab's list (feed-pages.ts), optimistic mutations (mutations.ts),
// freshness (freshness/: the poller of the unseen count, the service's stream, the page's
// visibility), and the browser tabs' leadership and relay (tabs/leadership.ts): one stream or
// poller for every tab of a browser. It never touches elements: only document.visibilityState and
// window events.
import { channelName, pageSizeOf, pollIntervalOf, serviceCaller } from './config.ts';
import { INITIAL_STATE, TABS, isAbort, type MessageChange, type StoreContext } from './context.ts';
import { FeedPages } from './feed-pages.ts';
import { Freshness } from './freshness/freshness.ts';
import type { LiveEvent } from './freshness/live-stream.ts';
import { Mutations, actionMutation, applyChange, loadedMessages, markAllMutation, markOneMutation, removeMutation } from './mutations.ts';
import { TabLeadership } from './tabs/leadership.ts';
import type { FeedList, InboxConfig, InboxErrorDetail, InboxState, InboxStoreApi, InboxTab, MessageActionType } from './types.ts';

/** How the page's registry (registry.ts) follows a store of getInboxStore. */
export interface StoreRegistration {
  /** The store is connected again: the page's store for its key. */
  connected(): void;
  /** The last element let it go. */
  released(): void;
}

export class InboxStore extends EventTarget implements InboxStoreApi {
  readonly config: Readonly<InboxConfig>;
  state: InboxState = INITIAL_STATE;

  /** True once the server has answered the unseen count (until then the count is a placeholder 0). */
  counted?: boolean;

  #registration?: StoreRegistration;
  /** Elements connected. */
  #connections = 0;
  #tabs: TabLeadership;
  /** Each tab's list. */
  #feeds: Record<InboxTab, FeedPages>;
  /** Feeds shown that follow the store's tab (feedOpened without a tab): they move with setTab. */
  #following = 0;
  #mutations: Mutations;
  /** The unseen count polled, the stream, the page's visibility. */
  #freshness: Freshness;

  constructor(config: InboxConfig, registration?: StoreRegistration) {
    super();
    this.config = Object.freeze({ ...config });
    this.#registration = registration;
    const context: StoreContext = {
      config: this.config,
      state: () => this.state,
      set: (patch) => this.#set(patch),
      setList: (tab, patch, statePatch) => this.#setList(tab, patch, statePatch),
      fail: (error, action, patch, messageId) => this.#fail(error, action, patch, messageId),
      call: serviceCaller(config),
    };
    const interval = pollIntervalOf(config);
    const mutating = () => this.#mutations.busy;
    this.#tabs = new TabLeadership(channelName(config));
    this.#mutations = new Mutations({
      context,
      share: (change) => this.#share(change),
      rolledBack: () => {
        // A first page answered while it was in flight got its change: each list is marked stale
        // (a count change, quiet), fetched when the next change comes or a feed opens (fetched
        // now, it would clear the error being shown).
        this.#eachFeed((list) => list.countChanged(false, true));
        this.#tabs.post({ type: 'stale' });
      },
      settled: () => this.#freshness.poller.mutationsSettled(),
    });
    const feed = (tab: InboxTab) => new FeedPages({ context, tab, pageSize: pageSizeOf(config), maxAge: interval, mutations: this.#mutations });
    this.#feeds = { all: feed('all'), unread: feed('unread') };
    this.#freshness = new Freshness({
      context,
      tabs: this.#tabs,
      interval,
      mutating,
      connected: () => this.#connections > 0,
      counted: (count, quiet) => this.#countChanged(count, quiet),
      event: (event) => this.#onLive(event),
      offline: () => this.#setList(undefined, { status: 'offline' }),
      woke: () => {
        this.#idle('offline');
        this.#eachFeed((list) => {
          if (list.open) void list.fetchFirst();
        });
      },
      unreadable: () => this.#refetch(),
    });
  }

  subscribe(listener: (state: InboxState) => void): () => void {
    const handler = () => listener(this.state);
    this.addEventListener('change', handler);
    return () => this.removeEventListener('change', handler);
  }

  /** Changes the state (the top-level list fields follow the store's tab's list) and tells the subscribers. */
  #set(patch: Partial<InboxState>) {
    const next = { ...this.state, ...patch };
    this.state = { ...next, ...next.lists[next.tab] };
    this.dispatchEvent(new Event('change'));
  }

  /** Changes `tab`'s list (none: every list), with `statePatch`. */
  #setList(tab: InboxTab | undefined, patch: Partial<FeedList>, statePatch?: Partial<InboxState>) {
    const lists = { ...this.state.lists };
    for (const each of TABS) if (!tab || each === tab) lists[each] = { ...lists[each], ...patch };
    this.#set({ ...statePatch, lists });
  }

  /** Calls `action` with each tab's list. */
  #eachFeed(action: (list: FeedPages) => void) {
    for (const tab of TABS) action(this.#feeds[tab]);
  }

  /** Every list's first page is stale: refetched now where a feed shows it, else when one does. */
  #refetch() {
    this.#eachFeed((list) => list.refetch());
  }

  /** Back to idle from `status`, in every list. */
  #idle(status: InboxState['status']) {
    for (const tab of TABS) if (this.state.lists[tab].status === status) this.#setList(tab, { status: 'idle' });
  }

  /** A failure: in the state, in the console once (whatever elements show it) and as the `error` event. */
  #fail(error: Error, action: string, patch?: Partial<InboxState>, messageId?: string) {
    this.#set({ ...patch, error });
    console.warn('notif-inbox:', action, error);
    this.dispatchEvent(new CustomEvent<InboxErrorDetail>('error', { detail: { error, action, messageId } }));
  }

  // ---- lifecycle ----

  connect(): void {
    this.#connections++;
    if (this.#connections > 1) return;
    this.#registration?.connected();
    this.#tabs.join({
      countToShare: () => (this.counted ? this.state.unseenCount : undefined),
      count: (count) => this.#countChanged(count),
      // (In the order they came: each waits for the same load.)
      stream: (items) => this.#freshness.hear(items),
      change: (change) => this.#applyChange(change),
      stale: () => this.#refetch(),
      told: (messageId) => this.#freshness.told(messageId),
    });
    this.#freshness.start();
  }

  disconnect(): void {
    if (!this.#connections) return;
    this.#connections--;
    if (this.#connections) return;
    this.#freshness.stop();
    this.#eachFeed((list) => list.stop());
    this.#following = 0;
    this.#idle('loading');
    this.#registration?.released();
  }

  /** At least one element is connected. */
  get connected(): boolean {
    return this.#connections > 0;
  }

  /** Applies a change of messages and count. */
  #applyChange(change: MessageChange) {
    const lists = { ...this.state.lists };
    for (const tab of TABS) lists[tab] = { ...lists[tab], messages: applyChange(lists[tab].messages, change) };
    this.#set({ lists, unseenCount: change.count });
  }

  /** Applies a change here and tells the other tabs. */
  #share(change: MessageChange) {
    this.#applyChange(change);
    this.#tabs.post({ type: 'change', change });
  }

  // ---- freshness ----

  /** A new unseen count; `quiet` when the caller fetches the first page itself (refresh). */
  #countChanged(count: number, quiet = false) {
    this.#idle('offline');
    if (count === this.state.unseenCount && this.counted) return;
    const firstCount = !this.counted;
    this.counted = true;
    this.#set({ unseenCount: count });
    this.#eachFeed((list) => list.countChanged(firstCount, quiet));
  }

  /** An event of the stream (its data, parsed), in every tab. */
  #onLive({ count, message }: LiveEvent) {
    // A count; else a new message or a refetch: the first page is stale even when the count says
    // nothing (a mark-all-seen made meanwhile, as an open bell's own, leaves it where it was).
    if (count != null) this.#countChanged(count);
    else this.#refetch();
    // Every new message of the subscriber, once per browser (whatever feeds show it).
    if (message) {
      this.#freshness.tellOnce(message._id, () => this.dispatchEvent(new CustomEvent('message-received', { detail: { message } })));
    }
  }

  // ---- the feed ----

  feedOpened(tab?: InboxTab): void {
    if (!tab) this.#following++;
    this.#feeds[tab ?? this.state.tab].opened();
  }

  feedClosed(tab?: InboxTab): void {
    if (!tab && this.#following) this.#following--;
    this.#feeds[tab ?? this.state.tab].closed();
  }

  setTab(tab: InboxTab): void {
    const previous = this.state.tab;
    if (tab === previous) return;
    this.#set({ tab });
    // The feeds that follow the store's tab show the new one.
    for (let feed = 0; feed < this.#following; feed++) {
      this.#feeds[previous].closed();
      this.#feeds[tab].opened();
    }
    this.#feeds[tab].fetchIfOld();
  }

  async refresh(): Promise<void> {
    this.#freshness.poller.restart();
    const count = this.#freshness.poller.fetchCount(true).catch((error: Error) => {
      if (!isAbort(error)) this.#fail(error, 'fetch');
    });
    const pages = TABS.filter((tab) => tab === this.state.tab || this.#feeds[tab].open).map((tab) => this.#feeds[tab].fetchFirst());
    await Promise.all([count, ...pages]);
  }

  loadMore(tab?: InboxTab): Promise<void> {
    return this.#feeds[tab ?? this.state.tab].loadMore();
  }

  // ---- mutations ----

  markAllRead(): Promise<void> {
    return this.#mutations.run(markAllMutation('read', this.config.feedIdentifier));
  }

  markAllSeen(): Promise<void> {
    return this.#mutations.run(markAllMutation('seen', this.config.feedIdentifier));
  }

  /** Marks one message read or unread, where the server can (else the elements hide the toggle). */
  async #markOne(messageId: string, read: boolean) {
    if (this.state.markAsSupported) await this.#mutations.run(markOneMutation(messageId, read));
  }

  markRead(messageId: string): Promise<void> {
    return this.#markOne(messageId, true);
  }

  markUnread(messageId: string): Promise<void> {
    return this.#markOne(messageId, false);
  }

  remove(messageId: string): Promise<void> {
    return this.#mutations.run(removeMutation(messageId));
  }

  /** The action, then (an unread message) mark-as read: shown read at once, and read on the server after the action's answer. */
  async action(messageId: string, type: MessageActionType): Promise<void> {
    const unread = loadedMessages(this.state.lists).some((message) => message._id === messageId && !message.read);
    await this.#mutations.run(actionMutation(messageId, type));
    if (unread) await this.#markOne(messageId, true);
  }
}
