import { createHmac, timingSafeEqual } from 'node:crypto';
import { STATUS_CODES } from 'node:http';

/**
 * The browser-safe gateway (DESIGN.md, Security). A page must never hold the API key, so the host
 * app mounts this handler on its own domain (say under `/notif`) and points the elements'
 * `base-url` at it. It holds the key, authenticates the end user, allows only the inbox's own
 * endpoints, and only for that user's subscriber; everything else answers 403.
 *
 * A standard `(Request) => Promise<Response>` handler: mount it in any framework that speaks the
 * Fetch API, or in plain Node with `toNodeListener` below.
 *
 *   const proxy = createInboxProxy({ serviceUrl: 'http://127.0.0.1:3030', apiKey: process.env.NOTIF_API_KEY,
 *     basePath: '/notif', authenticate: async (req) => (await session(req))?.userId ?? null });
 */
export interface InboxProxyOptions {
  /** Where the notification service answers, e.g. `http://127.0.0.1:3030`. */
  serviceUrl: string;
  /** The environment's API key; it never leaves the server. */
  apiKey: string;
  /** The path the handler is mounted under (stripped before forwarding). Default `/notif`. */
  basePath?: string;
  /**
   * The host's own authentication: the signed-in user's subscriberId, or null. When given, it
   * decides alone. Otherwise the page proves its subscriber with `x-subscriber-hash`: the
   * HMAC-SHA256 (hex) of the subscriber id under `hmacKey`, computed by the host's server when it
   * renders the page (as Novu's subscriber hash is).
   */
  authenticate?: (request: Request) => string | null | Promise<string | null>;
  /** Key of the subscriber hash; default the API key (as Novu does). */
  hmacKey?: string;
  /** For tests or custom agents. */
  fetch?: typeof fetch;
}

/** The inbox's endpoints: method, path, and where the subscriber id (or message id) sits. */
const ROUTES: { method: string; path: RegExp }[] = [
  { method: 'GET', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/notifications\/feed$/ },
  { method: 'GET', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/notifications\/unseen$/ },
  { method: 'POST', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/messages\/mark-all$/ },
  { method: 'POST', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/messages\/mark-as$/ },
  { method: 'POST', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/messages\/[^/]+\/actions\/[^/]+$/ },
  { method: 'DELETE', path: /^\/v1\/messages\/(?<message>[^/]+)$/ },
  { method: 'GET', path: /^\/v2\/subscribers\/(?<subscriber>[^/]+)\/preferences$/ },
  { method: 'PATCH', path: /^\/v1\/subscribers\/(?<subscriber>[^/]+)\/preferences(?:\/[^/]+)?$/ },
];

/** Request headers passed on; answer headers passed back. Nothing else crosses. */
const FORWARD = ['content-type', 'idempotency-key'];
const RETURN = ['content-type', 'retry-after', 'idempotency-replay', 'idempotency-key', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

export function subscriberHash(subscriberId: string, key: string): string {
  return createHmac('sha256', key).update(subscriberId).digest('hex');
}

export function createInboxProxy(options: InboxProxyOptions): (request: Request) => Promise<Response> {
  const base = (options.basePath ?? '/notif').replace(/\/$/, '');
  const service = options.serviceUrl.replace(/\/$/, '');
  const hmacKey = options.hmacKey ?? options.apiKey;
  const send = options.fetch ?? fetch;

  const refuse = (status: number, message: string, path: string) =>
    Response.json(
      { statusCode: status, error: STATUS_CODES[status], message, timestamp: new Date().toISOString(), path },
      { status },
    );

  /** The subscriber this request speaks for, or null when it proves none. */
  async function who(request: Request): Promise<string | null> {
    if (options.authenticate) return options.authenticate(request);
    const claimed = request.headers.get('x-subscriber-id');
    const hash = request.headers.get('x-subscriber-hash');
    if (!claimed || !hash) return null;
    const expected = Buffer.from(subscriberHash(claimed, hmacKey));
    const given = Buffer.from(hash.toLowerCase());
    return given.length === expected.length && timingSafeEqual(given, expected) ? claimed : null;
  }

  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname !== base && !url.pathname.startsWith(base + '/')) return refuse(404, 'Not found', url.pathname);
    const path = url.pathname.slice(base.length);
    const route = ROUTES.find((r) => r.method === request.method && r.path.test(path));
    if (!route) return refuse(403, `${request.method} ${path} is not an inbox endpoint`, url.pathname);

    const subscriberId = await who(request);
    if (!subscriberId) return refuse(401, 'The subscriber is not authenticated', url.pathname);
    const groups = route.path.exec(path)!.groups!;
    const query = new URLSearchParams(url.search);
    if (groups.subscriber !== undefined) {
      let inPath: string;
      try {
        inPath = decodeURIComponent(groups.subscriber);
      } catch {
        return refuse(403, 'Malformed subscriber id', url.pathname);
      }
      if (inPath !== subscriberId) return refuse(403, 'Another subscriber', url.pathname);
    } else {
      // A message id alone names no subscriber: the service deletes it only if it is this one's.
      query.set('subscriberId', subscriberId);
    }

    const headers = new Headers({ authorization: `ApiKey ${options.apiKey}` });
    for (const name of FORWARD) {
      const value = request.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    const search = query.size ? `?${query}` : '';
    const body = request.method === 'GET' || request.method === 'DELETE' ? undefined : await request.text();
    let answer: Response;
    try {
      answer = await send(`${service}${path}${search}`, { method: request.method, headers, body, redirect: 'manual' });
    } catch {
      return refuse(502, 'The notification service did not answer', url.pathname);
    }
    const back = new Headers();
    for (const name of RETURN) {
      const value = answer.headers.get(name);
      if (value !== null) back.set(name, value);
    }
    return new Response(answer.status === 204 ? null : await answer.arrayBuffer(), { status: answer.status, headers: back });
  };
}

/** Adapts the handler to Node's `http.createServer` (or Express / Fastify's raw request). */
export function toNodeListener(handler: (request: Request) => Promise<Response>) {
  return async (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && chunks.length > 0;
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url}`, {
      method: req.method,
      headers,
      body: hasBody ? Buffer.concat(chunks) : undefined,
    });
    const response = await handler(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  };
}
