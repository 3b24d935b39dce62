// The script-tag file's entry (dist/notif-inbox.min.js): the package. <notif-preferences> is a file
// of its own beside it (dist/notif-preferences.min.js), loaded when the bell's preferences button
// asks for it, at once when the page has one, and otherwise when the browser is idle (so one added
// to the page later is defined too). Custom rendering's hosts are one too, loaded by the feed once a
// page sets a render hook, as in the ES build.
export * from './index.ts';
export type { NotifPreferences } from './components/notif-preferences/notif-preferences.ts';

const loadPreferences = () => import('./components/notif-preferences/notif-preferences.ts');
if (document.querySelector('notif-preferences')) void loadPreferences();
else if ('requestIdleCallback' in self) requestIdleCallback(() => void loadPreferences());
else setTimeout(() => void loadPreferences());
