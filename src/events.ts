// The events the elements fire. All bubble and are composed (they leave the shadow roots), all are
// prefixed `notif-`, and all are typed here so `el.addEventListener('notif-action', e => e.detail.button)`
// type-checks in the host application.
import type { Message } from './api/types.ts';
import type { InboxTab, MessageActionType } from './store/types.ts';

/** Cancelable: `preventDefault()` keeps the page (for SPA routers) instead of following `url`. */
export interface NotifMessageClickDetail {
  message: Message;
  /** The safe redirect URL of the message's CTA, or null when it has none (or an unsafe one). */
  url: string | null;
}

/** Cancelable: `preventDefault()` keeps the page instead of following the button's `url`. */
export interface NotifActionDetail {
  message: Message;
  button: MessageActionType;
  status: 'pending' | 'done';
  /** The safe URL of the button (the service's `url` on a button whose step has a redirect), or null. */
  url: string | null;
}

export interface NotifReadChangeDetail {
  /** The messages changed, or 'all' for mark-all. */
  messageIds: readonly string[] | 'all';
  read: boolean;
}

export interface NotifSeenChangeDetail {
  messageIds: readonly string[] | 'all';
  seen: boolean;
}

export interface NotifUnseenCountChangeDetail {
  count: number;
}

export interface NotifErrorDetail {
  error: Error;
  /** What failed: 'markAllRead', 'markRead', 'remove', 'action', 'fetch', 'poll', 'preferences', 'configure' (no base-url or subscriber-id came), ... */
  action: string;
  messageId?: string;
}

/** The user picked a tab of a feed (a bell's included). */
export interface NotifTabChangeDetail {
  tab: InboxTab;
}

/** A new message reached the inbox (from the service's stream): fired once per browser, in one tab. */
export interface NotifMessageReceivedDetail {
  message: Message;
}

export interface NotifEventDetails {
  'notif-message-click': NotifMessageClickDetail;
  'notif-action': NotifActionDetail;
  'notif-read-change': NotifReadChangeDetail;
  'notif-seen-change': NotifSeenChangeDetail;
  'notif-unseen-count-change': NotifUnseenCountChangeDetail;
  'notif-error': NotifErrorDetail;
  'notif-message-received': NotifMessageReceivedDetail;
  'notif-tab-change': NotifTabChangeDetail;
}

export type NotifEventName = keyof NotifEventDetails;

declare global {
  interface GlobalEventHandlersEventMap {
    'notif-message-click': CustomEvent<NotifMessageClickDetail>;
    'notif-action': CustomEvent<NotifActionDetail>;
    'notif-read-change': CustomEvent<NotifReadChangeDetail>;
    'notif-seen-change': CustomEvent<NotifSeenChangeDetail>;
    'notif-unseen-count-change': CustomEvent<NotifUnseenCountChangeDetail>;
    'notif-error': CustomEvent<NotifErrorDetail>;
    'notif-message-received': CustomEvent<NotifMessageReceivedDetail>;
    'notif-tab-change': CustomEvent<NotifTabChangeDetail>;
  }
}
