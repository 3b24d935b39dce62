import type { App, AppContext } from '../app.ts';

export function notificationRoutes(_app: App, _ctx: AppContext) {}
