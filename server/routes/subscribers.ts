import type { App, AppContext } from '../app.ts';

export function subscriberRoutes(_app: App, _ctx: AppContext) {}
