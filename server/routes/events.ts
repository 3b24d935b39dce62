import type { App, AppContext } from '../app.ts';

export function eventRoutes(_app: App, _ctx: AppContext) {}
