import type { App, AppContext } from '../app.ts';

export function messageRoutes(_app: App, _ctx: AppContext) {}
