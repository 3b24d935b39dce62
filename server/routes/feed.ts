import type { App, AppContext } from '../app.ts';

export function feedRoutes(_app: App, _ctx: AppContext) {}
