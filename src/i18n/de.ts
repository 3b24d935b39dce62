import type { Translation } from './translation.ts';

/** German. Register it with `registerTranslation(de)`; elements whose locale is `de` or `de-*` use it. */
const de: Translation = {
  $code: 'de',
  $name: 'Deutsch',
  $dir: 'ltr',

  notifications: 'Benachrichtigungen',
  bellLabel: (count, formatted) => (count === 0 ? 'Benachrichtigungen' : `Benachrichtigungen, ${formatted} ungesehen`),
  // (The header's button: the usual "Alle als gelesen markieren" does not fit beside the title.)
  markAllRead: 'Alle gelesen',
  tabAll: 'Alle',
  tabUnread: 'Ungelesen',
  feedTabs: 'Benachrichtigungen filtern',
  unread: 'Ungelesen',
  emptyAll: 'Noch keine Benachrichtigungen',
  emptyAllHint: 'Wenn etwas passiert, finden Sie es hier.',
  emptyUnread: 'Alles gelesen',
  emptyUnreadHint: 'Keine ungelesenen Benachrichtigungen.',
  loading: 'Benachrichtigungen werden geladen',
  loadingMore: 'Weitere werden geladen …',
  errorTitle: 'Benachrichtigungen konnten nicht geladen werden',
  errorHint: 'Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
  unavailable: 'Benachrichtigungen sind gerade nicht verfügbar',
  offline: 'Sie sind offline. Angezeigt wird, was bereits geladen war.',
  retry: 'Erneut versuchen',
  preferences: 'Benachrichtigungseinstellungen',
  back: 'Zurück zu den Benachrichtigungen',
  close: 'Schließen',
  markRead: 'Als gelesen markieren',
  markUnread: 'Als ungelesen markieren',
  delete: 'Löschen',
  done: 'Erledigt',
  openNotification: 'Benachrichtigung öffnen',
  showMore: 'Mehr anzeigen',
  showLess: 'Weniger anzeigen',
  newNotifications: (count, formatted) => (count === 1 ? '1 neue Benachrichtigung' : `${formatted} neue Benachrichtigungen`),

  allNotifications: 'Alle Benachrichtigungen',
  allNotificationsHint: 'Ausgeschaltet erreichen Sie nur kritische Benachrichtigungen: die mit „Immer an“, die sich nicht ausschalten lassen.',
  channels: { in_app: 'In der App', email: 'E-Mail', sms: 'SMS', chat: 'Chat', push: 'Push' },
  alwaysOn: 'Immer an: kritisch',
  workflowOff: 'Aus: Nichts davon erreicht Sie.',
  channelOff: 'Für alle Abläufe aus.',
  preferencesError: 'Ihre Einstellungen konnten nicht geladen werden',
};

export default de;
