import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { hashKey } from '../db/keys.ts';
import { HttpError } from '../errors.ts';
import { FixedWindowCounter, type Counted } from '../fixed-window.ts';
import { isApiRequest } from './auth.ts';

/**
 * Rate limits, as decisions.md sets them: off unless configured (`serve --rate-limit 100/60s` or
 * NOTIF_RATE_LIMIT=100/60s). When on, every /v1 and /v2 response carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset` (seconds until the window ends), and a request past the
 * limit gets 429 with `Retry-After` (seconds) and the error body.
 *
 * A fixed window per caller. The caller is the API key presented (scope `key`, the default) or the
 * environment the key belongs to (scope `environment`: every key of one environment shares a budget).
 * Requests without a usable key (none, or one that is unknown) are counted per client address, so
 * they cannot skip the limit (a new random key per request would otherwise get a budget each).
 *
 * The counters live in this process's memory: each server process counts on its own, and a restart
 * starts every window afresh. Several processes behind one address each allow the full limit.
 */

export type RateLimitScope = 'key' | 'environment';

export interface RateLimitConfig {
  /** Requests allowed per window. */
  limit: number;
  /** Window length in milliseconds. */
  windowMs: number;
  scope: RateLimitScope;
}

declare module 'fastify' {
  interface FastifyRequest {
    rateLimit?: Counted;
  }
}

export interface RateLimitOptions extends RateLimitConfig {
  /** The clock (tests); Date.now by default. */
  now?: () => number;
}

const MS_PER_SECOND = 1000;

/**
 * Counts every API request (/v1, /v2; not a preflight) against its caller's window. Register it
 * before the auth plugin, so requests with an unknown key count too. Needs the db plugin (the key
 * resolver tells a key's environment).
 */
const rateLimit: FastifyPluginAsync<RateLimitOptions> = async (app, options) => {
  const counter = new FixedWindowCounter(options.limit, options.windowMs);
  const now = options.now ?? Date.now;

  const callerOf = async (authorization: string | undefined, ip: string): Promise<string> => {
    const apiKey = authorization ? /^\s*apikey\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
    if (apiKey) {
      // An unknown key counts against its address: a new random key per request gets no budget of its own.
      const environment = (await app.keys.resolve(apiKey))?.environmentId;
      if (environment) return options.scope === 'environment' ? `env:${environment}` : `key:${hashKey(apiKey)}`;
    }
    return `ip:${ip}`;
  };

  app.addHook('onRequest', async (request) => {
    if (request.method === 'OPTIONS' || !isApiRequest(request)) return;
    const at = now();
    const taken = counter.take(await callerOf(request.headers.authorization, request.ip), at);
    request.rateLimit = taken;
    if (!taken.allowed) {
      const retryAfter = Math.max(1, Math.ceil((taken.resetAt - at) / MS_PER_SECOND));
      throw new HttpError(429, `Rate limit of ${taken.limit} requests per ${options.windowMs / MS_PER_SECOND} s exceeded; retry in ${retryAfter} s`, undefined, {
        'Retry-After': String(retryAfter),
      });
    }
  });

  // On every response of a counted request, errors included (onSend runs for them as well).
  app.addHook('onSend', async (request, reply, payload) => {
    const counted = request.rateLimit;
    if (!counted) return payload;
    reply.header('RateLimit-Limit', String(counted.limit));
    reply.header('RateLimit-Remaining', String(Math.max(0, counted.remaining)));
    reply.header('RateLimit-Reset', String(Math.max(0, Math.ceil((counted.resetAt - now()) / MS_PER_SECOND))));
    return payload;
  });
};

export default fp(rateLimit, { name: 'rate-limit', dependencies: ['db'] });
