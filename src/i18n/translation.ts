/**
 * Every string the elements show or announce. Counts arrive both as numbers (for plural rules) and
 * already formatted for the locale (for display).
 */
export interface Translation {
  /** BCP 47 language tag, e.g. 'en' or 'de-CH'. */
  $code: string;
  $name: string;
  $dir: 'ltr' | 'rtl';

  notifications: string;
  /** The bell's accessible name, e.g. "Notifications, 3 unseen". `formatted` is "99+" past 99. */
  bellLabel: (count: number, formatted: string) => string;
  markAllRead: string;
  tabAll: string;
  tabUnread: string;
  feedTabs: string;
  unread: string;
  emptyAll: string;
  emptyAllHint: string;
  emptyUnread: string;
  emptyUnreadHint: string;
  loading: string;
  loadingMore: string;
  errorTitle: string;
  errorHint: string;
  offline: string;
  retry: string;
  notConfigured: string;
  markRead: string;
  markUnread: string;
  delete: string;
  done: string;
  openNotification: string;
  /** Announced politely when new messages arrive. */
  newNotifications: (count: number, formatted: string) => string;
}
