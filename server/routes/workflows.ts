import type { App, AppContext } from '../app.ts';

export function workflowRoutes(_app: App, _ctx: AppContext) {}
