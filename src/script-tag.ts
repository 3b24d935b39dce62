// The script-tag file's entry (dist/notif-inbox.min.js): the package, and <notif-preferences>
// registered at once (the ES build loads it only when needed).
export * from './index.ts';
export { NotifPreferences } from './components/notif-preferences/notif-preferences.ts';
// Custom rendering's hosts, which the ES build loads once a page sets a render hook.
import './components/notif-feed/custom-hosts.ts';
