import type { App } from './app.ts';
import { HttpError } from './errors.ts';

/**
 * Fault injection for tests of the elements' error paths, on only with `serve --faults` (never by
 * default). A test arms a rule with `POST /__faults {method?, path, status, times?, retryAfter?}`;
 * the next `times` requests whose path contains `path` fail with `status` through the app's real
 * error handling (a 500 is an unexpected error with an errorId, as any other 500 would be).
 * `DELETE /__faults` disarms everything.
 */
interface Rule {
  method?: string;
  path: string;
  status: number;
  times: number;
  retryAfter?: number;
}

export class InjectedFault extends Error {}

export function faults(app: App) {
  let rules: Rule[] = [];

  app.post('/__faults', async (request, reply) => {
    const b = (request.body ?? {}) as Partial<Rule>;
    if (typeof b.path !== 'string' || typeof b.status !== 'number' || b.status < 400 || b.status > 599) {
      throw new HttpError(422, 'a fault needs {path: string, status: 400..599}');
    }
    rules.push({ method: b.method?.toUpperCase(), path: b.path, status: b.status, times: b.times ?? 1, retryAfter: b.retryAfter });
    return reply.code(201).send({ armed: rules.length });
  });
  app.delete('/__faults', async () => {
    rules = [];
    return { armed: 0 };
  });

  app.addHook('onRequest', async (request) => {
    if (request.url.startsWith('/__faults') || request.method === 'OPTIONS') return;
    const rule = rules.find((r) => (!r.method || r.method === request.method) && request.url.includes(r.path));
    if (!rule) return;
    if (--rule.times <= 0) rules = rules.filter((r) => r !== rule);
    if (rule.status >= 500 && rule.status !== 503) throw new InjectedFault(`injected fault for ${request.method} ${request.url}`);
    const headers = rule.retryAfter !== undefined ? { 'Retry-After': String(rule.retryAfter) } : undefined;
    throw new HttpError(rule.status, `injected fault (${rule.status})`, undefined, headers);
  });
}
