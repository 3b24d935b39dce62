import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createInboxProxy, subscriberHash, toNodeListener } from '../../server/src/proxy.ts';
import { KEYS, startServer, type TestServer } from './helpers.ts';
import { chunks } from './stream-fixtures.ts';
import { waitFor } from './engine-fixtures.ts';

// The proxy in front of the real service, as an attacker talks to it: requests Node parses but the
// Fetch API refuses, bodies that never end, and answers that stream.

const HMAC_KEY = 'host-app-secret';
const hash = (id: string) => subscriberHash(id, HMAC_KEY);

async function listen(handler: (request: Request) => Promise<Response>): Promise<{ server: Server; port: number; url: string }> {
  const server = createServer(toNodeListener(handler));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { server, port, url: `http://127.0.0.1:${port}` };
}

/** Sends raw bytes and resolves with the answer's status line, or 'no answer' after `waitMs`. */
function rawRequest(port: number, text: string, waitMs = 3000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    const done = (line: string) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(line);
    };
    const timer = setTimeout(() => done(got.split('\r\n')[0] || 'no answer'), waitMs);
    socket.on('error', () => done(got.split('\r\n')[0] || 'connection error'));
    socket.on('data', (chunk) => {
      got += chunk.toString('latin1');
      if (got.includes('\r\n\r\n')) done(got.split('\r\n')[0]!);
    });
    socket.on('connect', () => socket.write(text));
  });
}

describe('proxy hardening', () => {
  let service: TestServer;
  let proxy: Awaited<ReturnType<typeof listen>>;

  const feed = () =>
    fetch(`${proxy.url}/notif/v1/subscribers/ada/notifications/unseen`, { headers: { 'x-subscriber-id': 'ada', 'x-subscriber-hash': hash('ada') } });

  before(async () => {
    service = await startServer();
    assert.equal((await service.post('/v2/subscribers', { subscriberId: 'ada' })).status, 201);
    proxy = await listen(createInboxProxy({ serviceUrl: service.url, apiKey: KEYS.a, hmacKey: HMAC_KEY }));
  });
  after(async () => {
    proxy?.server.close();
    await service?.dispose();
  });

  it('answers 400 to every request the Fetch API cannot hold, and keeps answering', async () => {
    const auth = `x-subscriber-id: ada\r\nx-subscriber-hash: ${hash('ada')}\r\n`;
    const malformed = [
      `TRACE /notif/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      `TRACK /notif/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      `GET http://x/notif/v1/subscribers/ada/notifications/feed HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`,
      `OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      `GET /notif/v1/subscribers/ada/notifications/feed HTTP/1.1\r\nHost: a b\r\n${auth}\r\n`,
      `GET /notif/v1/subscribers/ada/notifications/feed HTTP/1.1\r\nHost: evil/path?\r\n${auth}\r\n`,
      `GET /notif/v1/subscribers/ada/notifications/feed HTTP/1.1\r\nHost: 127.0.0.1\r\nx-subscriber-id: ada\r\nx-subscriber-hash: \xff\xfe\r\n\r\n`,
    ];
    for (const text of malformed) {
      const status = await rawRequest(proxy.port, text);
      assert.match(status, /^HTTP\/1\.1 4\d\d /, `${JSON.stringify(text.split('\r\n')[0])} -> ${status}`);
      assert.equal((await feed()).status, 200, `the proxy still answers after ${JSON.stringify(text.split('\r\n')[0])}`);
    }
    const r = await fetch(`${proxy.url}/notif/x`, { method: 'PATCH' });
    assert.equal(r.status, 403);
    const body: any = await r.json();
    for (const field of ['statusCode', 'error', 'message', 'timestamp', 'path']) assert.ok(field in body, field);
  });

  it('the error body of a malformed request is decisions.md\'s', async () => {
    const socket = connect(proxy.port, '127.0.0.1');
    const text = await new Promise<string>((resolve) => {
      let got = '';
      socket.on('data', (c) => (got += c));
      socket.on('end', () => resolve(got));
      socket.on('close', () => resolve(got));
      socket.write('TRACE /notif/x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    });
    assert.match(text, /^HTTP\/1\.1 400 /);
    const body = JSON.parse(/\{.*\}/s.exec(text.slice(text.indexOf('\r\n\r\n')))![0]);
    assert.equal(body.statusCode, 400);
    assert.equal(body.error, 'Bad Request');
    assert.equal(body.path, '/notif/x');
  });

  it('refuses an unauthenticated body before reading it, and caps an authenticated one', async () => {
    // 300 MB announced, 1 KB sent: the 401 comes at once, without waiting for the rest.
    const head = `POST /notif/v1/subscribers/ada/messages/mark-all HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${300 * 1024 * 1024}\r\n\r\n`;
    assert.match(await rawRequest(proxy.port, head + 'x'.repeat(1024)), /^HTTP\/1\.1 401 /);
    const ada = { 'x-subscriber-id': 'ada', 'x-subscriber-hash': hash('ada'), 'content-type': 'application/json' };
    const announced = `POST /notif/v1/subscribers/ada/messages/mark-all HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(ada)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}content-length: ${300 * 1024 * 1024}\r\n\r\n`;
    assert.match(await rawRequest(proxy.port, announced + 'x'.repeat(1024)), /^HTTP\/1\.1 413 /);
    // Chunked, so no length is announced: reading stops at the cap.
    const big = JSON.stringify({ markAs: 'read', pad: 'x'.repeat(65536) });
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const r = await fetch(`${proxy.url}/notif/v1/subscribers/ada/messages/mark-all`, { method: 'POST', headers: ada, body: stream, duplex: 'half' } as RequestInit);
    assert.equal(r.status, 413);
    assert.equal((await fetch(`${proxy.url}/notif/v1/subscribers/ada/messages/mark-all`, { method: 'POST', headers: ada, body: '{"markAs":"seen"}' })).status, 201);
    assert.equal((await feed()).status, 200);
  });
});

describe('proxy streaming', () => {
  let upstream: Server;
  let proxy: Awaited<ReturnType<typeof listen>>;
  let release: () => void = () => {};
  let upstreamClosed: Promise<void>;

  before(async () => {
    // A stand-in service that answers one event, then holds the answer open until told.
    upstream = createServer((_req, res) => {
      upstreamClosed = new Promise((r) => res.on('close', () => r()));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      release = () => res.write('data: second\n\n');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const serviceUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    proxy = await listen(createInboxProxy({ serviceUrl, apiKey: KEYS.a, hmacKey: HMAC_KEY }));
  });
  after(() => {
    proxy?.server.close();
    upstream?.closeAllConnections();
    upstream?.close();
  });

  it('passes each chunk on as it comes, and ends the service request when the client goes away', async () => {
    const client = new AbortController();
    const r = await fetch(`${proxy.url}/notif/v1/subscribers/ada/notifications/feed`, {
      headers: { 'x-subscriber-id': 'ada', 'x-subscriber-hash': hash('ada') },
      signal: client.signal,
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'text/event-stream');
    const { next } = chunks(r);
    assert.equal(await next(), 'data: first\n\n');
    release();
    assert.equal(await next(), 'data: second\n\n');
    client.abort();
    await Promise.race([upstreamClosed, new Promise((_, reject) => setTimeout(() => reject(new Error('the service request stayed open')), 2000))]);
  });
});

describe('proxy: requests of one subscriber at once', () => {
  let upstream: Server;
  let proxy: Awaited<ReturnType<typeof listen>>;
  /** Answers the held requests of the stand-in service. */
  const held: (() => void)[] = [];

  before(async () => {
    // A stand-in service that holds every JSON answer until told (a stream answers at once, and stays open).
    upstream = createServer((req, res) => {
      if (req.url!.includes('/stream')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': open\n\n');
        return;
      }
      held.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"count":1}'));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const serviceUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    proxy = await listen(createInboxProxy({ serviceUrl, apiKey: KEYS.a, hmacKey: HMAC_KEY, maxInFlight: 3 }));
  });
  after(() => {
    proxy?.server.close();
    upstream?.closeAllConnections();
    upstream?.close();
  });

  const ask = (who: string, what = 'notifications/unseen', signal?: AbortSignal) =>
    fetch(`${proxy.url}/notif/v1/subscribers/${who}/${what}`, { headers: { 'x-subscriber-id': who, 'x-subscriber-hash': hash(who) }, signal });
  /** Until the stand-in service holds `n` requests. */
  const holding = (n: number) => waitFor(`${n} requests held`, async () => (held.length == n ? true : undefined), 2000, 10);

  it('answers 429 with Retry-After past maxInFlight, counts each subscriber apart and not its stream, and frees a place when an answer ends', async () => {
    const streams = new AbortController();
    const stream = await ask('ada', 'notifications/stream', streams.signal);
    assert.equal(stream.status, 200, 'the stream is not counted');
    const first = [ask('ada'), ask('ada'), ask('ada')];
    await holding(3);
    const busy = await ask('ada');
    assert.equal(busy.status, 429);
    assert.equal(busy.headers.get('retry-after'), '1');
    const body = (await busy.json()) as { statusCode: number; error: string; message: string };
    assert.equal(body.statusCode, 429);
    assert.equal(body.error, 'Too Many Requests');
    assert.match(body.message, /3 requests/);
    assert.equal((await ask('ada', 'notifications/stream', streams.signal)).status, 200, 'a second stream neither');
    const bob = ask('bob');
    await holding(4);
    held.splice(0).forEach((answer) => answer());
    for (const r of [...first, bob]) assert.equal((await r).status, 200);
    // Their places are free again.
    const again = [ask('ada'), ask('ada'), ask('ada')];
    await holding(3);
    held.splice(0).forEach((answer) => answer());
    for (const r of again) assert.equal((await r).status, 200);
    streams.abort();
  });

  it('a request the service breaks off frees its place too', async () => {
    const pending = [ask('cy'), ask('cy'), ask('cy')];
    await holding(3);
    // The service goes away mid-answer: each gets the proxy's 502.
    held.length = 0;
    upstream.closeAllConnections();
    for (const r of pending) assert.equal((await r).status, 502);
    const after = [ask('cy'), ask('cy'), ask('cy')];
    await holding(3);
    held.splice(0).forEach((answer) => answer());
    for (const r of after) assert.equal((await r).status, 200);
  });
});
