import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Tenant } from '../db/keys.ts';
import { HttpError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Whom the request speaks for: set by the auth plugin for every /v1 and /v2 request. */
    tenant: Tenant;
  }
}

const API_PATH = /^\/v[12]\//;
/** `Authorization: <scheme> <credentials>`. */
const AUTHORIZATION = /^(\S+)\s+(\S+)$/;

/**
 * True when the request is for the API (/v1, /v2): judged on the path the router routes, which it
 * has percent-decoded (`/%76%32/workflows` is `/v2/workflows`), never on the raw URL. A request no
 * route matched is judged on its decoded path, so it is authenticated too when it looks like one.
 */
export function isApiRequest(request: FastifyRequest): boolean {
  const routed = request.routeOptions.url;
  if (routed !== undefined) return API_PATH.test(routed);
  const raw = request.url.split('?')[0]!;
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    path = raw;
  }
  return API_PATH.test(path);
}

/**
 * Every API request (not a preflight) carries `Authorization: ApiKey <key>`: its tenant is the
 * key's environment and organization (the db plugin's key resolver); 401 otherwise. Needs the db
 * plugin.
 */
const auth: FastifyPluginAsync = async (app) => {
  app.decorateRequest('tenant', null as unknown as Tenant);
  app.addHook('onRequest', async (request) => {
    if (request.method === 'OPTIONS' || !isApiRequest(request)) return;
    const header = request.headers.authorization;
    if (!header) throw new HttpError(401, 'Missing Authorization header; expected "Authorization: ApiKey <key>"');
    const parts = AUTHORIZATION.exec(header.trim());
    if (!parts || parts[1]!.toLowerCase() !== 'apikey') {
      throw new HttpError(401, 'Unsupported authorization scheme; expected "Authorization: ApiKey <key>"');
    }
    const tenant = await app.keys.resolve(parts[2]!);
    if (!tenant) throw new HttpError(401, 'API key not found');
    request.tenant = tenant;
  });
};

export default fp(auth, { name: 'auth', dependencies: ['db'] });
