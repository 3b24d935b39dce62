import type { PreferencesTranslation } from './translation.ts';

/**
 * `<notif-preferences>`' English strings, in its entry only (a registered translation's own win).
 */
const enPreferences: PreferencesTranslation = {
  allNotifications: 'All notifications',
  allNotificationsHint: 'Turned off, only critical notifications reach you: those marked “Always on”, which you cannot turn off.',
  channels: { in_app: 'In-app', email: 'Email', sms: 'SMS', chat: 'Chat', push: 'Push' },
  alwaysOn: 'Always on: critical',
  workflowOff: 'Off: none of these reach you.',
  channelOff: 'Off for every workflow.',
  preferencesError: "Couldn't load your preferences",
};

export default enPreferences;
