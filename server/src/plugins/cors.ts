import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import cors from '@fastify/cors';

/** How long a browser may keep a preflight's answer: two hours, Chromium's cap. */
const PREFLIGHT_MAX_AGE_S = 2 * 60 * 60;

/**
 * CORS for any origin (DESIGN.md, "The server"): a page on another origin can call the service in
 * development, as a script-tag user's would; the headers the elements send and read are allowed.
 */
const corsPlugin: FastifyPluginAsync = async (app) => {
  await app.register(cors, {
    origin: '*',
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'idempotency-key', 'x-subscriber-id', 'x-subscriber-hash', 'Last-Event-ID'],
    exposedHeaders: ['ETag', 'Idempotency-Replay', 'Idempotency-Key', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    // Two hours, Chromium's cap: a page polling from another origin sends one preflight per URL per
    // two hours instead of every ten minutes (bench/polling.mjs: 4.10 requests a minute with 600).
    maxAge: PREFLIGHT_MAX_AGE_S,
  });
};

export default fp(corsPlugin, { name: 'cors' });
