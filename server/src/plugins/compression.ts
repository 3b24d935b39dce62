import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { chooseEncoding, COMPRESSIBLE, encode, encodeInPool, POOL_THRESHOLD, THRESHOLD } from '../encoding.ts';

/**
 * Compresses answers of THRESHOLD bytes and more, brotli or gzip as the request accepts
 * (encoding.ts: one synchronous call per answer, on the thread pool for a large one). Register it after every other plugin with an
 * onSend hook, so they see the answer as written (the idempotency store keeps the plain text and
 * replays it in the encoding asked then).
 */
const compression: FastifyPluginAsync = async (app) => {
  app.addHook('onSend', async (request, reply, payload) => {
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    const size = Buffer.byteLength(payload);
    if (size < THRESHOLD || request.method === 'HEAD' || reply.hasHeader('content-encoding')) return payload;
    if (!COMPRESSIBLE.test(String(reply.getHeader('content-type') ?? ''))) return payload;
    // Caches must tell answers for one Accept-Encoding from answers for another.
    const vary = reply.getHeader('vary');
    if (!vary) reply.header('vary', 'accept-encoding');
    else if (!/accept-encoding|\*/i.test(String(vary))) reply.header('vary', `${vary}, accept-encoding`);
    const encoding = chooseEncoding(request.headers['accept-encoding']);
    if (!encoding) return payload;
    reply.header('content-encoding', encoding).removeHeader('content-length');
    // A large answer on the thread pool: the event loop serves other requests meanwhile.
    return size >= POOL_THRESHOLD ? encodeInPool(payload, encoding, size) : encode(payload, encoding, size);
  });
};

export default fp(compression, { name: 'compression' });
