import type { Translation } from './translation.ts';

const en: Translation = {
  $code: 'en',

  notifications: 'Notifications',
  bellLabel: (count, formatted) => (count ? `Notifications, ${formatted} unseen` : 'Notifications'),
  markAllRead: 'Mark all as read',
  tabAll: 'All',
  tabUnread: 'Unread',
  feedTabs: 'Filter notifications',
  unread: 'Unread',
  emptyAll: 'No notifications yet',
  emptyAllHint: 'New notifications will appear here.',
  emptyUnread: "You're all caught up",
  emptyUnreadHint: 'No unread notifications.',
  loading: 'Loading notifications',
  loadingMore: 'Loading more…',
  errorTitle: "Couldn't load notifications",
  errorHint: 'Check your connection and try again.',
  unavailable: 'Notifications are unavailable right now',
  offline: 'Offline: showing what was loaded.',
  retry: 'Retry',
  preferences: 'Notification preferences',
  back: 'Back to notifications',
  close: 'Close',
  markRead: 'Mark as read',
  markUnread: 'Mark as unread',
  delete: 'Delete',
  done: 'Done',
  openNotification: 'Open notification',
  showMore: 'Show more',
  showLess: 'Show less',
  newNotifications: (count, formatted) => (count === 1 ? '1 new notification' : `${formatted} new notifications`),
};

export default en;
