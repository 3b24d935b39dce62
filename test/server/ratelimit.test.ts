import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, KEYS, startServer, TestServer, type Reply } from './helpers.ts';

const HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

function limitHeaders(r: Reply) {
  return {
    limit: Number(r.headers.get('ratelimit-limit')),
    remaining: Number(r.headers.get('ratelimit-remaining')),
    reset: Number(r.headers.get('ratelimit-reset')),
  };
}

describe('rate limits: off unless configured', () => {
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  it('sends no RateLimit headers and never 429s', async () => {
    for (let i = 0; i < 30; i++) {
      const r = await server.get('/v1/notifications');
      assert.equal(r.status, 200);
      for (const h of HEADERS) assert.equal(r.headers.get(h), null, `${h} on request ${i + 1}`);
    }
  });
});

describe('rate limits: 5 requests per 10 s per API key (--rate-limit 5/10s)', () => {
  let server: TestServer;
  before(async () => (server = await new TestServer().start(['--no-seed', '--rate-limit', '5/10s'])));
  after(() => server.dispose());

  it('counts down in the headers, then answers 429 with Retry-After and the error body', async () => {
    for (let i = 1; i <= 5; i++) {
      const r = await server.get('/v1/notifications');
      assert.equal(r.status, 200, `request ${i}`);
      const h = limitHeaders(r);
      assert.equal(h.limit, 5);
      assert.equal(h.remaining, 5 - i);
      assert.ok(h.reset >= 1 && h.reset <= 10, `RateLimit-Reset ${h.reset}`);
    }
    const sixth = await server.get('/v1/notifications');
    const b = expectErrorBody(sixth, 429);
    assert.equal(b.error, 'Too Many Requests');
    assert.equal(b.path, '/v1/notifications');
    assert.match(b.message, /rate limit/i);
    const retryAfter = Number(sixth.headers.get('retry-after'));
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 10, `Retry-After ${sixth.headers.get('retry-after')}`);
    const h = limitHeaders(sixth);
    assert.equal(h.limit, 5);
    assert.equal(h.remaining, 0);
    assert.ok(h.reset >= 1 && h.reset <= 10);
    // The browser may read them across origins.
    assert.match(sixth.headers.get('access-control-expose-headers') ?? '', /Retry-After/);

    // Every further request in the window is refused too, whatever the endpoint.
    expectErrorBody(await server.post('/v1/events/trigger', { name: 'x', to: 's' }), 429);
    expectErrorBody(await server.get('/v1/notifications/0123456789abcdef01234567'), 429);
  });

  it('keeps a separate budget for another API key', async () => {
    const r = await server.get('/v1/notifications', { key: KEYS.b });
    assert.equal(r.status, 200);
    assert.equal(limitHeaders(r).remaining, 4);
    const other = await server.get('/v1/notifications', { key: KEYS.other });
    assert.equal(other.status, 200);
    assert.equal(limitHeaders(other).remaining, 4);
  });

  it('puts the headers on error responses as well, and counts them', async () => {
    const missing = await server.get('/v1/notifications/0123456789abcdef01234567', { key: KEYS.other });
    expectErrorBody(missing, 404);
    assert.equal(limitHeaders(missing).remaining, 3);
    const invalid = await server.get('/v1/notifications', { key: KEYS.other, query: { limit: 500 } });
    expectErrorBody(invalid, 422);
    assert.equal(limitHeaders(invalid).remaining, 2);
  });

  it('counts requests with an unknown or no key too (per address: another unknown key gets no budget of its own)', async () => {
    for (let i = 1; i <= 5; i++) {
      const r = await server.get('/v1/notifications', { key: `nk_guess_${i}` });
      expectErrorBody(r, 401);
      assert.equal(limitHeaders(r).remaining, 5 - i);
    }
    expectErrorBody(await server.get('/v1/notifications', { key: 'nk_guess' }), 429);
    const anonymous = await server.get('/v1/notifications', { key: null });
    expectErrorBody(anonymous, 429);
    assert.equal(limitHeaders(anonymous).limit, 5);
    // A known key keeps its own budget.
    assert.equal((await server.get('/v1/notifications', { key: KEYS.b })).status, 200);
  });

  it('leaves the health check and CORS preflight alone', async () => {
    const health = await server.get('/health', { key: null });
    assert.equal(health.status, 200);
    assert.equal(health.headers.get('ratelimit-limit'), null);
    const preflight = await server.request('OPTIONS', '/v1/notifications', {
      key: null,
      headers: { origin: 'https://example.test', 'access-control-request-method': 'GET' },
    });
    assert.ok(preflight.status === 204 || preflight.status === 200);
    assert.equal(preflight.headers.get('ratelimit-limit'), null);
  });
});

describe('rate limits: windows and scopes', () => {
  it('opens a new window once the old one has ended', async () => {
    const server = await startServer({ NOTIF_RATE_LIMIT: '2/1s' });
    try {
      assert.equal((await server.get('/v1/notifications')).status, 200);
      assert.equal((await server.get('/v1/notifications')).status, 200);
      const refused = await server.get('/v1/notifications');
      expectErrorBody(refused, 429);
      assert.equal(refused.headers.get('retry-after'), '1');
      await new Promise((r) => setTimeout(r, 1100));
      const again = await server.get('/v1/notifications');
      assert.equal(again.status, 200);
      assert.equal(limitHeaders(again).remaining, 1);
    } finally {
      await server.dispose();
    }
  });

  it('shares one budget between the keys of an environment with scope environment', async () => {
    const server = await startServer({
      NOTIF_RATE_LIMIT: '3/60s',
      NOTIF_RATE_LIMIT_SCOPE: 'environment',
      NOTIF_API_KEYS: `${KEYS.a}=acme/production,second_key_a=acme/production,${KEYS.b}=acme/staging`,
    });
    try {
      assert.equal(limitHeaders(await server.get('/v1/notifications')).remaining, 2);
      assert.equal(limitHeaders(await server.get('/v1/notifications', { key: 'second_key_a' })).remaining, 1);
      assert.equal(limitHeaders(await server.get('/v1/notifications')).remaining, 0);
      expectErrorBody(await server.get('/v1/notifications', { key: 'second_key_a' }), 429);
      // Another environment of the same organization is not affected.
      const staging = await server.get('/v1/notifications', { key: KEYS.b });
      assert.equal(staging.status, 200);
      assert.equal(limitHeaders(staging).remaining, 2);
    } finally {
      await server.dispose();
    }
  });

  it('refuses to start with a malformed limit', async () => {
    const server = new TestServer();
    try {
      await assert.rejects(server.start(['--no-seed', '--rate-limit', 'lots']), /exited with 2[\s\S]*N\/window/);
      await assert.rejects(server.start(['--no-seed', '--rate-limit', '0/10s']), /exited with 2[\s\S]*at least 1/);
      await assert.rejects(server.start(['--no-seed', '--rate-limit', '5/10s', '--rate-limit-scope', 'ip']), /exited with 2[\s\S]*scope/);
    } finally {
      await server.dispose();
    }
  });
});
