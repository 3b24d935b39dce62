import { NotifBell } from './notif-bell.component.ts';

export { NotifBell };
export default NotifBell;

NotifBell.define('notif-bell');

declare global {
  interface HTMLElementTagNameMap {
    'notif-bell': NotifBell;
  }
}
