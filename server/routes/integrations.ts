import type { App, AppContext } from '../app.ts';

export function integrationRoutes(_app: App, _ctx: AppContext) {}
