import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { errorResponse } from './error-response.ts';

// The proxy's Node adapter: a `(Request) => Promise<Response>` handler as a listener of Node's
// http server.

/** A Host header: a name or IPv4 address, or an IPv6 address in brackets, with a port or not. */
const HOST = /^[a-z0-9._~-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/i;

/**
 * Adapts the handler to Node's `http.createServer` (or Express / Fastify's raw request).
 *
 * No request can bring the process down: whatever cannot become a `Request` (an absolute-form or
 * `*` target, a method the Fetch API forbids such as TRACE, a malformed Host header) is answered 400
 * with decisions.md's error body, and a handler that throws answers 500. The request body is handed
 * to the handler as a stream, so nothing is read before it authenticates; the answer is piped back
 * chunk by chunk as it comes (Server-Sent Events pass through), and a client that goes away aborts
 * the request's signal, which ends the handler's fetch to the service.
 */
export function toNodeListener(handler: (request: Request) => Promise<Response>) {
  return (req: IncomingMessage, res: ServerResponse) => {
    serve(handler, req, res).catch(() => {
      // The answer was under way when the client or the service went away: nothing left to tell.
      if (!res.destroyed) res.destroy();
    });
  };
}

const BODYLESS = new Set(['GET', 'HEAD']);

async function serve(
  handler: (request: Request) => Promise<Response>,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const target = req.url ?? '';
  const aborted = new AbortController();
  // 'close' on the answer before it finished: the client went away.
  res.on('close', () => {
    if (!res.writableFinished) aborted.abort();
  });
  let request: Request;
  try {
    if (!target.startsWith('/')) throw new Error('not an origin-form request target');
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(', '));
    }
    const host = req.headers.host ?? 'localhost';
    if (!HOST.test(host)) throw new Error('the Host header is not a host');
    const url = new URL(`http://${host}${target}`);
    const hasBody = !BODYLESS.has(req.method ?? 'GET') && (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined);
    // `duplex: 'half'`: Node's fetch needs it for a streamed body (the DOM's RequestInit lacks it).
    const init = { method: req.method, headers, body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined, signal: aborted.signal, duplex: 'half' };
    request = new Request(url, init as RequestInit);
  } catch {
    return answer(res, req, errorResponse(400, 'Malformed request', target.startsWith('/') ? target.split('?')[0]! : '/'), aborted);
  }
  let response: Response;
  try {
    response = await handler(request);
  } catch (err) {
    // (The host's code threw, its `authenticate` say: the client gets a plain 500, the host's log the error.)
    console.error('notif-inbox proxy: the handler threw', err);
    response = errorResponse(500, 'The proxy failed to answer', new URL(request.url).pathname);
  }
  await answer(res, req, response, aborted);
}

/** Writes the Response out as its chunks come, waiting when the client reads slowly. */
async function answer(
  res: ServerResponse,
  req: IncomingMessage,
  response: Response,
  aborted: AbortController,
) {
  if (res.destroyed) {
    await response.body?.cancel().catch(() => {});
    return;
  }
  // A body the handler left unread (refused before authentication, say): the connection closes
  // after the answer, so the rest is not waited for.
  if (!req.complete) res.setHeader('connection', 'close');
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.flushHeaders();
  if (!response.body || req.method === 'HEAD') {
    await response.body?.cancel().catch(() => {});
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const stop = () => reader.cancel().catch(() => {});
  // A body that fails while the client is not reading (the proxy's write timeout) closes the
  // connection at once, rather than once the client reads again.
  reader.closed.catch(() => {
    if (!res.destroyed) res.destroy();
  });
  aborted.signal.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (res.destroyed) break;
      if (res.write(value)) continue;
      // The client reads slowly: wait until it has taken what is written (or has gone). The other
      // listener goes too: a long body drains many times, and each wait would leave one behind.
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      });
    }
  } finally {
    aborted.signal.removeEventListener('abort', stop);
  }
  if (res.destroyed) {
    await stop();
    return;
  }
  res.end();
}
