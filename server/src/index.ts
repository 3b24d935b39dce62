// notif-inbox-server as a library, for host apps that run the service inside their own process:
// the app, the database, the delayed-step scheduler, API keys and the browser-safe proxy.
export { buildApp, type App, type AppConfig } from './app.ts';
export { openDatabase, type Db } from './db/index.ts';
export { Scheduler } from './engine/scheduler.ts';
export { generateKey, registerKey } from './db/keys.ts';
export { createInboxProxy, subscriberHash, toNodeListener, type InboxProxyOptions } from './proxy.ts';
