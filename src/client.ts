// `notif-inbox/client`: NotifClient, one typed method per endpoint of the service, for apps that
// talk to it directly (server code, scripts, tests). It registers no element and has no Lit in it.
// The elements do not need it: they call the six inbox endpoints through api/request.ts.
export { NotifClient, NotifApiError, newIdempotencyKey, encodePayload, unwrap } from './api/client.ts';
export type { CallOptions, NotifClientOptions, Query } from './api/client.ts';
export type * from './api/types.ts';
