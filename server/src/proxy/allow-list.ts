// What crosses the proxy: the inbox's own endpoints, and a few headers each way.

/** An inbox endpoint: its method, and its path with where the subscriber id (or message id) sits. */
export interface InboxRoute {
  method: string;
  path: RegExp;
}

/** The inbox's endpoints. */
export const INBOX_ROUTES: InboxRoute[] = [
  { method: 'GET', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/notifications\/feed$/ },
  { method: 'GET', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/notifications\/unseen$/ },
  { method: 'GET', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/notifications\/stream$/ },
  { method: 'POST', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/messages\/mark-all$/ },
  { method: 'POST', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/messages\/mark-as$/ },
  { method: 'POST', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/messages\/[^/]+\/actions\/[^/]+$/ },
  { method: 'DELETE', path: /^\/v1\/messages\/(?<message>[^/]+)$/ },
  { method: 'GET', path: /^\/v2\/subscribers\/(?<subscriber>[^/]+)\/preferences$/ },
  { method: 'PATCH', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/preferences(?:\/[^/]+)?$/ },
  // The subscriber notifications family.
  { method: 'GET', path: /^\/v2\/subscribers\/(?<subscriber>[^/]+)\/notifications(?:\/count)?$/ },
  { method: 'PATCH', path: /^\/v2\/subscribers\/(?<subscriber>[^/]+)\/notifications\/[^/]+\/(?:read|unread|archive|unarchive|snooze|unsnooze)$/ },
  { method: 'PATCH', path: /^\/v2\/subscribers\/(?<subscriber>[^/]+)\/notifications\/[^/]+\/actions\/(?:primary|secondary)\/(?:complete|revert)$/ },
  { method: 'DELETE', path: /^\/v2\/subscribers\/(?<subscriber>[^/]+)\/notifications\/[^/]+$/ },
  { method: 'POST', path: /^\/v2\/subscribers\/(?<subscriber>[^/]+)\/notifications\/(?:read|seen|archive|read-archive|delete)$/ },
];

/** The inbox endpoint a request is for, and the ids its path names; undefined when it is for none. */
export function inboxRoute(method: string, path: string): { subscriber?: string; message?: string } | undefined {
  const route = INBOX_ROUTES.find((candidate) => candidate.method === method && candidate.path.test(path));
  if (!route) return undefined;
  return { ...route.path.exec(path)!.groups };
}

/** Request headers passed on; nothing else crosses. */
export const FORWARDED_HEADERS = ['content-type', 'idempotency-key', 'last-event-id', 'if-none-match'];
/** Answer headers passed back; nothing else crosses. */
export const RETURNED_HEADERS = [
  'content-type',
  'cache-control',
  'etag',
  'retry-after',
  'idempotency-replay',
  'idempotency-key',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
];
