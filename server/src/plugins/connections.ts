import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';

// The connections and requests themselves: their ids, how long a client may take to send one
// (app.ts hands these to Node's server), and how they end when the process closes.

/** How long a client may take to send a request's headers, and the whole request, when nothing else is set. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;
/** Keep-alive connections idle longer than this are closed: past a load balancer's usual 60 s. */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/** How often Node checks the timeouts above: at most this, so they are kept to within a second. */
export const CONNECTIONS_CHECK_MS = 1000;

/** A request id a load balancer sent is kept when it looks like one: letters, digits, `.:_-`, up to 128. */
const REQUEST_ID = /^[\w.:-]{1,128}$/;
/** While closing, how often idle and unused connections are looked for. */
const CLOSING_SWEEP_MS = 50;

const connections: FastifyPluginAsync = async (app) => {
  // A request id in every log line of the request, and in the answer's X-Request-Id: the one a
  // load balancer sent when it looks like an id, a new one otherwise (app.ts reads the header).
  app.addHook('onRequest', async (request, reply) => {
    if (!REQUEST_ID.test(request.id)) request.id = randomUUID();
    reply.header('x-request-id', request.id);
  });

  // Closing (SIGTERM): answers in flight end their connection, so a kept-alive client does not
  // hold the process open; idle connections are closed as they become idle. A connection that has
  // sent no request yet (a client's spare one, opened after it dropped a stream) is not idle to
  // Node until its headers timeout: those are closed too.
  let closing: NodeJS.Timeout | undefined;
  const unused = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  app.server.on('request', (request: IncomingMessage) => unused.delete(request.socket));
  app.addHook('preClose', async () => {
    closing = setInterval(() => {
      app.server.closeIdleConnections();
      for (const socket of unused) socket.destroy();
    }, CLOSING_SWEEP_MS);
  });
  app.addHook('onClose', async () => clearInterval(closing));

  // An answer given before its request's body was read (a 401 in onRequest, before a slow body)
  // ends the connection: kept open, Node's request timeout would answer the same request a second
  // time (408) on it. (Whether the body has arrived whole by then cannot be told: Node may run the
  // hooks before parsing the rest of the packet.) Answers to requests whose body was read keep it.
  app.addHook('onSend', async (request, reply, payload) => {
    const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length']) > 0;
    if (closing || (hasBody && request.body === undefined)) reply.header('connection', 'close');
    return payload;
  });
};

export default fp(connections, { name: 'connections' });
