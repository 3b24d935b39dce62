// What the store's parts (feed pages, mutations, poller, stream) share with the facade that owns
// the state (inbox-store.ts). Types only: the parts never import the facade.
import type { RequestInit2 } from '../api/request.ts';
import type { Message } from '../api/types.ts';
import type { FeedList, InboxConfig, InboxState, InboxTab } from './types.ts';

export interface StoreContext {
  readonly config: Readonly<InboxConfig>;
  /** The state now. */
  state(): InboxState;
  /** Changes the state and tells the subscribers. */
  set(patch: Partial<InboxState>): void;
  /** Changes `tab`'s list (none: every list), and the state with `statePatch`, and tells the subscribers. */
  setList(tab: InboxTab | undefined, patch: Partial<FeedList>, statePatch?: Partial<InboxState>): void;
  /** A failure: in the state (with `patch`), in the console once, and as the store's `error` event. */
  fail(error: Error, action: string, patch?: Partial<InboxState>, messageId?: string): void;
  /** One of the inbox endpoints: `rest` below `/v1/subscribers/<subscriberId>/`, or an absolute path. */
  call<T>(rest: string, init: RequestInit2, method?: string): Promise<T>;
}

/** A change of messages and count, applied by the tab that made it and by the others. */
export interface MessageChange {
  upsert?: Message[];
  remove?: string[];
  /** What mark-all set on every message. */
  all?: Partial<Message>;
  count: number;
}

/** The tabs, each with its list. */
export const TABS: readonly InboxTab[] = ['all', 'unread'];

/** A list before anything is loaded. */
export const EMPTY_LIST: FeedList = {
  messages: [],
  hasMore: false,
  status: 'idle',
  loadingMore: false,
  loaded: false,
};

/** A store's state before anything is loaded. */
export const INITIAL_STATE: InboxState = {
  ...EMPTY_LIST,
  lists: { all: EMPTY_LIST, unread: EMPTY_LIST },
  unseenCount: 0,
  error: null,
  tab: 'all',
  markAsSupported: true,
};

/** Whether `error` is the abort of a request (superseded or stopped on purpose), not a failure. */
export const isAbort = (error: unknown): boolean => (error as Error | undefined)?.name === 'AbortError';
