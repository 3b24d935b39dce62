import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { HttpError } from '../errors.ts';

/**
 * Fault injection for tests of the elements' error paths, on only with `serve --faults` (never by
 * default). A test arms a rule with `POST /__faults {method?, path, status, times?, retryAfter?}`;
 * the next `times` requests whose path contains `path` fail with `status` through the app's real
 * error handling (a 500 is an unexpected error with an errorId, as any other 500 would be).
 * `DELETE /__faults` disarms everything. Beside it, a test-only read: `GET /__streams` (the
 * streams this process holds: the elements' tests count them).
 */
interface Rule {
  method?: string;
  path: string;
  status: number;
  times: number;
  retryAfter?: number;
}

/** An injected 500: the error handler answers it as any other, but does not print it. */
export class InjectedFault extends Error {}

const faults: FastifyPluginAsync = async (app) => {
  let rules: Rule[] = [];

  app.post('/__faults', async (request, reply) => {
    const body = (request.body ?? {}) as Partial<Rule>;
    if (typeof body.path !== 'string' || typeof body.status !== 'number' || body.status < 400 || body.status > 599) {
      throw new HttpError(422, 'a fault needs {path: string, status: 400..599}');
    }
    rules.push({ method: body.method?.toUpperCase(), path: body.path, status: body.status, times: body.times ?? 1, retryAfter: body.retryAfter });
    return reply.code(201).send({ armed: rules.length });
  });
  app.delete('/__faults', async () => {
    rules = [];
    return { armed: 0 };
  });

  app.addHook('onRequest', async (request) => {
    if (request.url.startsWith('/__faults') || request.method === 'OPTIONS') return;
    const rule = rules.find((candidate) => (!candidate.method || candidate.method === request.method) && request.url.includes(candidate.path));
    if (!rule) return;
    rule.times--;
    if (rule.times <= 0) rules = rules.filter((other) => other !== rule);
    if (rule.status >= 500 && rule.status !== 503) throw new InjectedFault(`injected fault for ${request.method} ${request.url}`);
    const headers = rule.retryAfter !== undefined ? { 'Retry-After': String(rule.retryAfter) } : undefined;
    throw new HttpError(rule.status, `injected fault (${rule.status})`, undefined, headers);
  });

  app.get('/__streams', async () => app.db.changes.listeners);
};

export default fp(faults, { name: 'faults', dependencies: ['db'] });
