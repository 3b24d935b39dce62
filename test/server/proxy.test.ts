import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInboxProxy, subscriberHash, toNodeListener } from '../../server/src/proxy.ts';
import { KEYS, startServer, type TestServer } from './helpers.ts';

// The browser-safe gateway in front of the real service: the page holds no key, proves its
// subscriber, and reaches only the inbox's endpoints for that subscriber.

const HMAC_KEY = 'host-app-secret';

async function listen(handler: (request: Request) => Promise<Response>): Promise<{ server: Server; url: string }> {
  const server = createServer(toNodeListener(handler));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('inbox proxy', () => {
  let service: TestServer;
  let proxy: { server: Server; url: string };
  let sessionProxy: { server: Server; url: string };
  let adaMessage: string;
  let graceMessage: string;

  // (The id percent-encoded, as the elements send it.)
  const as = (subscriberId: string, hash = subscriberHash(subscriberId, HMAC_KEY)) => ({
    'x-subscriber-id': encodeURIComponent(subscriberId),
    'x-subscriber-hash': hash,
  });
  const call = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}, base = proxy.url) =>
    fetch(`${base}/notif${path}`, init);

  before(async () => {
    service = await startServer();
    const wf = await service.post('/v2/workflows', {
      workflowId: 'hello',
      name: 'Hello',
      steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'Hi {{payload.name}}', body: 'Welcome', primaryAction: { label: 'OK' } } }],
    });
    assert.ok(wf.status === 201 || wf.status === 200, JSON.stringify(wf.body));
    for (const to of ['ada', 'grace']) assert.equal((await service.post('/v1/events/trigger', { name: 'hello', to, payload: { name: to } })).status, 201);
    adaMessage = (await service.get('/v1/subscribers/ada/notifications/feed')).body.data[0]._id;
    graceMessage = (await service.get('/v1/subscribers/grace/notifications/feed')).body.data[0]._id;
    proxy = await listen(createInboxProxy({ serviceUrl: service.url, apiKey: KEYS.a, hmacKey: HMAC_KEY }));
    sessionProxy = await listen(
      createInboxProxy({ serviceUrl: service.url, apiKey: KEYS.a, authenticate: (req) => (req.headers.get('cookie') === 'session=ada' ? 'ada' : null) }),
    );
  });
  after(async () => {
    proxy?.server.close();
    sessionProxy?.server.close();
    await service.dispose();
  });

  it('serves the feed and the unseen count of the subscriber whose hash is right, without the key in the page', async () => {
    const feed = await call('/v1/subscribers/ada/notifications/feed?limit=5', { headers: as('ada') });
    assert.equal(feed.status, 200);
    const body: any = await feed.json();
    assert.equal(body.data.length, 1);
    assert.equal(body.data[0].subject, 'Hi ada');
    const unseen = await call('/v1/subscribers/ada/notifications/unseen', { headers: as('ada') });
    assert.deepEqual(await unseen.json(), { count: 1 });
  });

  it("passes the feed's ETag and a browser's If-None-Match through: 304 with no body while the page is current", async () => {
    const path = '/v1/subscribers/ada/notifications/feed?limit=5';
    const first = await call(path, { headers: { ...as('ada'), 'accept-encoding': 'br' } });
    assert.equal(first.status, 200);
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^"[\w-]+"$/);
    assert.doesNotMatch(etag, /-(br|gzip)"$/, 'the tag of the plain text the proxy answers with');
    assert.equal(first.headers.get('cache-control'), 'private, no-cache');
    await first.arrayBuffer();
    const again = await call(path, { headers: { ...as('ada'), 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    assert.equal((await call(path, { headers: { ...as('ada'), 'if-none-match': '"stale"' } })).status, 200);
  });

  it('refuses a missing or wrong hash (401) and another subscriber (403)', async () => {
    assert.equal((await call('/v1/subscribers/ada/notifications/feed')).status, 401);
    assert.equal((await call('/v1/subscribers/ada/notifications/feed', { headers: as('ada', subscriberHash('ada', 'wrong')) })).status, 401);
    const other = await call('/v1/subscribers/grace/notifications/feed', { headers: as('ada') });
    assert.equal(other.status, 403);
    const b: any = await other.json();
    assert.equal(b.statusCode, 403);
    assert.equal(b.error, 'Forbidden');
  });

  it('takes the subscriber id percent-encoded: ids outside Latin-1, with a % or a space work, a malformed one proves nothing (401)', async () => {
    for (const id of ['Zoë-用户', '100%-sure', 'ada lovelace+1@example.com']) {
      assert.equal((await service.post('/v1/events/trigger', { name: 'hello', to: id, payload: { name: id } })).status, 201);
      const path = `/v1/subscribers/${encodeURIComponent(id)}/notifications/feed`;
      const feed = await call(path, { headers: as(id) });
      assert.equal(feed.status, 200, id);
      assert.equal(((await feed.json()) as any).data[0].subject, `Hi ${id}`);
      // Sent as it is, '100%-sure' does not decode: refused, as an id that proves nothing.
      if (id.includes('%')) assert.equal((await call(path, { headers: { ...as(id), 'x-subscriber-id': id } })).status, 401);
      // Printable ASCII without '%' decodes to itself: sent as it is (as the elements send it), it is the same id.
      if (/^[ -$&-~]+$/.test(id)) assert.equal((await call(path, { headers: { ...as(id), 'x-subscriber-id': id } })).status, 200);
    }
  });

  it("answers 500 with the error body when the host's authenticate throws, and logs the error for the host", async () => {
    const thrown = new Error('yourSession is not defined');
    const failing = await listen(createInboxProxy({ serviceUrl: service.url, apiKey: KEYS.a, authenticate: () => { throw thrown; } }));
    const logged: unknown[][] = [];
    const error = console.error;
    console.error = (...args: unknown[]) => void logged.push(args);
    try {
      const res = await call('/v1/subscribers/ada/notifications/unseen', {}, failing.url);
      assert.equal(res.status, 500);
      const body: any = await res.json();
      assert.equal(body.statusCode, 500);
      assert.equal(body.message, 'The proxy failed to answer');
      assert.ok(logged.some((args) => args.includes(thrown)), 'the error reaches the host log');
    } finally {
      console.error = error;
      failing.server.close();
    }
  });

  it('allows only the inbox endpoints', async () => {
    for (const [method, path] of [
      ['GET', '/v2/subscribers'],
      ['GET', '/v2/subscribers/ada'],
      ['POST', '/v1/events/trigger'],
      ['GET', '/v1/integrations'],
      ['DELETE', '/v1/messages/transaction/abc'],
      ['GET', '/v1/notifications'],
    ] as const) {
      const r = await call(path, { method, headers: as('ada') });
      assert.equal(r.status, 403, `${method} ${path}`);
    }
  });

  it('passes mutations through with their idempotency key, and the replay back', async () => {
    const headers = { ...as('ada'), 'content-type': 'application/json', 'idempotency-key': 'proxy-1' };
    const body = JSON.stringify({ markAs: 'read' });
    const first = await call('/v1/subscribers/ada/messages/mark-all', { method: 'POST', headers, body });
    assert.equal(first.status, 201);
    assert.equal(await first.json(), 1);
    const again = await call('/v1/subscribers/ada/messages/mark-all', { method: 'POST', headers, body });
    assert.equal(again.headers.get('idempotency-replay'), 'true');
    const action = await call(`/v1/subscribers/ada/messages/${adaMessage}/actions/primary`, {
      method: 'POST',
      headers: { ...as('ada'), 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'done' }),
    });
    assert.equal(action.status, 201);
    assert.equal(((await action.json()) as any).cta.action.status, 'done');
  });

  it("deletes only the subscriber's own messages", async () => {
    const theirs = await call(`/v1/messages/${graceMessage}`, { method: 'DELETE', headers: as('ada') });
    assert.equal(theirs.status, 404);
    assert.equal((await service.get('/v1/subscribers/grace/notifications/feed')).body.data.length, 1);
    const mine = await call(`/v1/messages/${adaMessage}`, { method: 'DELETE', headers: as('ada') });
    assert.equal(mine.status, 200);
    assert.deepEqual(await mine.json(), { acknowledged: true, status: 'deleted' });
  });

  it("reads and changes the subscriber's own preferences only (GET 14 and both PATCHes)", async () => {
    const json = { ...as('ada'), 'content-type': 'application/json' };
    const read = await call('/v2/subscribers/ada/preferences?criticality=all', { headers: as('ada') });
    assert.equal(read.status, 200);
    assert.equal(((await read.json()) as any).workflows[0].workflow.identifier, 'hello');
    const one = await call('/v1/subscribers/ada/preferences/hello', { method: 'PATCH', headers: json, body: JSON.stringify({ channels: { in_app: false } }) });
    assert.equal(one.status, 200);
    assert.deepEqual(((await one.json()) as any).workflows[0].channels, { in_app: false });
    const global = await call('/v1/subscribers/ada/preferences', { method: 'PATCH', headers: json, body: JSON.stringify({ enabled: true }) });
    assert.equal(global.status, 200);
    for (const [method, path] of [
      ['GET', '/v2/subscribers/grace/preferences'],
      ['PATCH', '/v1/subscribers/grace/preferences'],
      ['PATCH', '/v1/subscribers/grace/preferences/hello'],
    ] as const) {
      assert.equal((await call(path, { method, headers: json, body: method === 'GET' ? undefined : '{"enabled":false}' })).status, 403, path);
    }
    for (const path of ['/v1/subscribers/ada/preferences', '/v1/subscribers/ada/preferences/hello']) {
      assert.equal((await call(path, { method: 'PATCH', body: '{"enabled":false}' })).status, 401, `${path} without a hash`);
      assert.equal((await call(path, { method: 'PUT', headers: json, body: '{}' })).status, 403, `PUT ${path}`);
    }
    assert.equal((await call('/v1/subscribers/ada/preferences/hello/x', { method: 'PATCH', headers: json, body: '{}' })).status, 403);
    const grace = await service.get('/v2/subscribers/grace/preferences');
    assert.deepEqual(grace.body.workflows[0].channels, { in_app: true }, "grace's preferences unchanged");
  });

  it('makes a subscriber the service has not seen yet on first contact: its feed, count, stream and preferences answer, preferences save before any message', async () => {
    const id = 'newcomer-ünïcode';
    const path = `/v1/subscribers/${encodeURIComponent(id)}`;
    assert.equal((await service.get(`/v2/subscribers/${encodeURIComponent(id)}`)).status, 404, 'unknown to the service');
    // A wrong hash proves nothing, and makes nothing.
    assert.equal((await call(`${path}/notifications/feed`, { headers: as(id, subscriberHash(id, 'wrong')) })).status, 401);
    assert.equal((await service.get(`/v2/subscribers/${encodeURIComponent(id)}`)).status, 404, 'still unknown');
    // Two first requests at once (an inbox asks for its page and its count together): both answer.
    const [feed, unseen] = await Promise.all([call(`${path}/notifications/feed`, { headers: as(id) }), call(`${path}/notifications/unseen`, { headers: as(id) })]);
    assert.equal(feed.status, 200);
    assert.deepEqual(((await feed.json()) as any).data, []);
    assert.equal(unseen.status, 200);
    assert.deepEqual(await unseen.json(), { count: 0 });
    assert.equal((await service.get(`/v2/subscribers/${encodeURIComponent(id)}`)).status, 200, 'made');

    // Another newcomer's first contact is its stream, then its preferences, saved before any message.
    const other = 'newcomer-2';
    const stopped = new AbortController();
    const stream = await call(`/v1/subscribers/${other}/notifications/stream`, { headers: as(other), signal: stopped.signal });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    stopped.abort();
    await stream.body?.cancel().catch(() => {});
    const third = 'newcomer-3';
    const saved = await call(`/v1/subscribers/${third}/preferences/hello`, {
      method: 'PATCH',
      headers: { ...as(third), 'content-type': 'application/json' },
      body: JSON.stringify({ channels: { in_app: false } }),
    });
    assert.equal(saved.status, 200);
    const read = await call(`/v2/subscribers/${third}/preferences?criticality=all`, { headers: as(third) });
    assert.deepEqual(((await read.json()) as any).workflows.find((w: any) => w.workflow.identifier === 'hello').channels, { in_app: false });
    assert.equal((await service.post('/v1/events/trigger', { name: 'hello', to: third, payload: { name: third } })).status, 201);
    assert.deepEqual((await service.get(`/v1/subscribers/${third}/notifications/feed`)).body.data, [], 'its saved preference holds');

    // With the API key, an unknown subscriber stays 404 (nothing is made behind the caller's back).
    assert.equal((await service.get('/v1/subscribers/never-seen/notifications/feed')).status, 404);
    // A 404 about something else (a message that is not the subscriber's) stays a 404.
    const mark = await call('/v1/subscribers/ada/messages/mark-as', {
      method: 'POST',
      headers: { ...as('ada'), 'content-type': 'application/json' },
      body: JSON.stringify({ messageId: '000000000000000000000000', markAs: 'read' }),
    });
    assert.equal(mark.status, 404);
  });

  it("uses the host's own authentication when given, and never returns the key", async () => {
    const ok = await call('/v1/subscribers/ada/notifications/unseen', { headers: { cookie: 'session=ada' } }, sessionProxy.url);
    assert.equal(ok.status, 200);
    const text = JSON.stringify([...ok.headers]) + (await ok.text());
    assert.equal(text.includes(KEYS.a), false);
    assert.equal((await call('/v1/subscribers/ada/notifications/unseen', {}, sessionProxy.url)).status, 401);
    assert.equal((await call('/v1/subscribers/grace/notifications/unseen', { headers: { cookie: 'session=ada' } }, sessionProxy.url)).status, 403);
  });
});
