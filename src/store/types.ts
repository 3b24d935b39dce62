// The contract between the store and the elements. The elements read `InboxState` and call the
// actions; they never call fetch or NotifClient themselves (components -> store -> api).
import type { Message } from '../api/types.ts';

export type InboxStatus = 'idle' | 'loading' | 'error' | 'offline';
export type InboxTab = 'all' | 'unread';

/** One tab's list: its loaded messages and pages. */
export interface FeedList {
  /** Loaded messages of the tab, newest first, deduplicated by `_id`. */
  readonly messages: readonly Message[];
  /** The server's number of messages in the tab (`totalCount` of the latest page), when known. */
  readonly totalCount?: number;
  /** More pages exist after the loaded ones. */
  readonly hasMore: boolean;
  /** `loading` only for the first page (skeleton); see `loadingMore` for later pages. */
  readonly status: InboxStatus;
  readonly loadingMore: boolean;
  /** False until the first page has been answered. */
  readonly loaded: boolean;
}

/**
 * The store's state. A store holds a list per tab (`lists`): each feed shows the list of its own tab.
 * The list fields at the top level are those of the store's tab (`tab`, set by `setTab`), for code
 * that drives the store without the elements.
 */
export interface InboxState extends FeedList {
  readonly lists: Readonly<Record<InboxTab, FeedList>>;
  /** Unseen in-app messages on the server (endpoint 13), capped as the server caps it. */
  readonly unseenCount: number;
  /** The error behind `status: 'error'`, or the last refused mutation. */
  readonly error: Error | null;
  /** The store's tab (`setTab`): the one its top-level list fields are of. */
  readonly tab: InboxTab;
  /** The server has no single-message mark-as endpoint (404): hide per-message read toggles. */
  readonly markAsSupported: boolean;
}

/** What identifies a store: every element on a page that names the same service, subscriber and feed shares one. */
export interface InboxConfig {
  baseUrl: string;
  subscriberId: string;
  /** Development only: a secret. */
  apiKey?: string;
  /** For the proxy: HMAC-SHA256 of the subscriber id. */
  subscriberHash?: string;
  /** An app-supplied authorised fetch. */
  fetch?: typeof fetch;
  feedIdentifier?: string | string[];
  /** Partial payload filter (base64-JSON-encoded for endpoint 10). */
  payload?: Record<string, unknown>;
  /** Milliseconds between unseen-count polls; default 15000. */
  pollInterval?: number;
  /** Page size, 1..100, default 20. */
  pageSize?: number;
  /** `auto` (default): the service's stream when it has one, else polling; `poll`: polling only. */
  live?: 'auto' | 'poll';
}

export type MessageActionType = 'primary' | 'secondary';

/** Detail of the store's `error` event, re-emitted by the elements as `notif-error`. */
export interface InboxErrorDetail {
  error: Error;
  /** The action that failed: 'markAllRead', 'markRead', 'remove', 'action', 'fetch', ... */
  action: string;
  messageId?: string;
}

export interface InboxStoreApi extends EventTarget {
  readonly config: Readonly<InboxConfig>;
  readonly state: InboxState;
  /** True once the server has answered the unseen count: later increases are new messages (announced). */
  readonly counted?: boolean;
  /** Calls `listener` after every state change; returns the unsubscribe function. */
  subscribe(listener: (state: InboxState) => void): () => void;
  /** Reference-counted: polling runs while at least one element is connected. */
  connect(): void;
  disconnect(): void;
  /**
   * A feed shows `tab`'s list (popover opened, full-page feed connected): refreshed if stale, and
   * kept fresh while shown. Without `tab`: the store's tab, whichever it is (the feed follows setTab).
   */
  feedOpened(tab?: InboxTab): void;
  /** A feed no longer shows `tab`'s list (without `tab`: the store's tab). */
  feedClosed(tab?: InboxTab): void;
  /** The store's tab: its list is loaded, and the feeds that follow the store's tab show it. */
  setTab(tab: InboxTab): void;
  // The actions resolve once the server has answered (or the store gave up); they never reject: a
  // failure is in `state` and the `error` event (a refused mutation rolled back), so callers need no catch.
  /** Refetches the unseen count and the first page of the store's tab and of every list shown. */
  refresh(): Promise<void>;
  /** The next page of `tab`'s list (default: the store's tab). */
  loadMore(tab?: InboxTab): Promise<void>;
  markAllRead(): Promise<void>;
  markAllSeen(): Promise<void>;
  markRead(messageId: string): Promise<void>;
  markUnread(messageId: string): Promise<void>;
  remove(messageId: string): Promise<void>;
  /** Endpoint 1 with `status: 'done'` and this button type. */
  action(messageId: string, type: MessageActionType): Promise<void>;
}
