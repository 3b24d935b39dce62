import { NotifPreferences } from './notif-preferences.component.ts';

export { NotifPreferences };
export default NotifPreferences;

NotifPreferences.define('notif-preferences');

declare global {
  interface HTMLElementTagNameMap {
    'notif-preferences': NotifPreferences;
  }
}
