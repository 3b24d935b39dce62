import { NotifFeed } from './notif-feed.component.ts';

export { NotifFeed };
export default NotifFeed;

NotifFeed.define('notif-feed');

declare global {
  interface HTMLElementTagNameMap {
    'notif-feed': NotifFeed;
  }
}
