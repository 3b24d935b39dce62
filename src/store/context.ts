// What the store's parts (feed pages, mutations, poller, stream) share with the facade that owns
// the state (inbox-store.ts). Types only: the parts never import the facade.
import type { RequestInit2 } from '../api/request.ts';
import type { Message } from '../api/types.ts';
import type { InboxConfig, InboxState } from './types.ts';

export interface StoreContext {
  readonly config: Readonly<InboxConfig>;
  /** The state now. */
  state(): InboxState;
  /** Changes the state and tells the subscribers. */
  set(patch: Partial<InboxState>): void;
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

/** A store's state before anything is loaded. */
export const INITIAL_STATE: InboxState = {
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

/** Whether `error` is the abort of a request (superseded or stopped on purpose), not a failure. */
export const isAbort = (error: unknown): boolean => (error as Error | undefined)?.name === 'AbortError';
