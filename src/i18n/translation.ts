/**
 * `<notif-preferences>`' strings. Optional in a `Translation`: that element's entry carries the
 * English ones (./en-preferences.ts), so the other elements' builds do not.
 */
export interface PreferencesTranslation {
  /** The global switch. */
  allNotifications: string;
  allNotificationsHint: string;
  /** The channels' names. */
  channels: { in_app: string; email: string; sms: string; chat: string; push: string };
  /** A critical workflow's note: its switches are locked on. */
  alwaysOn: string;
  /** A workflow turned off: none of its channels delivers. */
  workflowOff: string;
  /** A channel turned off for every workflow (the global preference): off in each workflow too. */
  channelOff: string;
  preferencesError: string;
}

/**
 * Every string the elements show or announce. Counts arrive both as numbers (for plural rules) and
 * already formatted for the locale (for display).
 */
export interface Translation extends Partial<PreferencesTranslation> {
  /** BCP 47 language tag, e.g. 'en' or 'de-CH'. */
  $code: string;
  /** The language's own name, e.g. 'Deutsch' (for a language picker; the elements do not show it). */
  $name?: string;
  /** Its direction (the elements follow the page's `dir`, whatever this says). */
  $dir?: 'ltr' | 'rtl';

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
  /**
   * What people read instead of an error they can do nothing about: a missing setting, or a service
   * that refuses this inbox (401, 403: a wrong key or subscriber hash). Developers read the console.
   */
  unavailable: string;
  offline: string;
  retry: string;
  /** The preferences view's title, and the bell's button that opens it. */
  preferences: string;
  /** The button that leaves the preferences view for the messages. */
  back: string;
  /** Closes the bell's popover. */
  close: string;
  markRead: string;
  markUnread: string;
  delete: string;
  done: string;
  openNotification: string;
  /** The button under a long body that shows it whole, and the one that cuts it again. */
  showMore: string;
  showLess: string;
  /** Announced politely when new messages arrive. */
  newNotifications: (count: number, formatted: string) => string;
}
