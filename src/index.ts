// The package's entry: registers <notif-bell>, <notif-feed> and <notif-message>, and exports the
// classes, the event types and the store registry. NotifClient (every endpoint of the service) is
// `notif-inbox/client` (src/client.ts): the elements do not need it, so it stays out of their bundle.
import './components/notif-bell/notif-bell.ts';
import './components/notif-feed/notif-feed.ts';
import './components/notif-message/notif-message.ts';

export { NotifBell } from './components/notif-bell/notif-bell.component.ts';
export { NotifFeed } from './components/notif-feed/notif-feed.component.ts';
export { NotifMessage } from './components/notif-message/notif-message.component.ts';
export type { MessageActions, MessageRenderer } from './components/notif-message/notif-message.component.ts';
// <notif-preferences> is its own entry (notif-inbox/notif-preferences), loaded by the bell when needed.
export type { NotifPreferences } from './components/notif-preferences/notif-preferences.component.ts';
export { NotifElement } from './internal/base-element.ts';
export { safeHref, safeImageSrc, isLocalHost, apiKeyNeedsWarning } from './internal/url.ts';
export { VERSION } from './internal/version.ts';
export * from './events.ts';
export type * from './api/types.ts';
export type * from './store/types.ts';
export { NotifApiError } from './api/request.ts';
export type { NotifClientOptions, CallOptions } from './api/request.ts';
export { getInboxStore } from './store/index.ts';
export type { PreferencesTranslation, Translation } from './i18n/translation.ts';
export { registerTranslation } from './i18n/localize.ts';
