import { NotifMessage } from './notif-message.component.ts';

export { NotifMessage };
export default NotifMessage;

NotifMessage.define('notif-message');

declare global {
  interface HTMLElementTagNameMap {
    'notif-message': NotifMessage;
  }
}
