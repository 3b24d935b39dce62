import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, KEYS, startServer, type TestServer } from './helpers.ts';

describe('authentication', () => {
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  it('answers 401 without an Authorization header', async () => {
    const r = await server.get('/v1/subscribers/x/notifications/unseen', { key: null });
    const b = expectErrorBody(r, 401);
    assert.equal(b.error, 'Unauthorized');
    assert.equal(b.path, '/v1/subscribers/x/notifications/unseen');
    assert.match(b.message, /Authorization/);
  });

  it('answers 401 for a scheme other than ApiKey', async () => {
    const r = await server.get('/v2/subscribers', { key: null, headers: { authorization: `Bearer ${KEYS.a}` } });
    expectErrorBody(r, 401);
  });

  it('answers 401 for an unknown key', async () => {
    const r = await server.get('/v2/subscribers', { key: 'nk_not_a_key' });
    expectErrorBody(r, 401);
  });

  it('answers 404 with the error body for an unknown route', async () => {
    const r = await server.get('/v1/nothing-here');
    expectErrorBody(r, 404);
  });

  it('answers CORS preflight for any origin without a key', async () => {
    const r = await server.request('OPTIONS', '/v1/subscribers/x/messages/mark-all', {
      key: null,
      headers: {
        origin: 'https://example.test',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,idempotency-key,content-type',
      },
    });
    assert.ok(r.status === 204 || r.status === 200, `status ${r.status}`);
    assert.equal(r.headers.get('access-control-allow-origin'), '*');
    assert.match(r.headers.get('access-control-allow-headers') ?? '', /idempotency-key/i);
    assert.equal(r.headers.get('access-control-max-age'), '7200', 'browsers reuse the preflight for two hours');
  });
});

describe('fault injection', () => {
  it('is off unless the server starts with --faults', async () => {
    const server = await startServer();
    try {
      const r = await server.post('/__faults', { path: '/v2/subscribers', status: 500 });
      expectErrorBody(r, 404);
    } finally {
      await server.dispose();
    }
  });

  it('fails the next matching request through the real error handler, once', async () => {
    const { TestServer } = await import('./helpers.ts');
    const server = await new TestServer().start(['--no-seed', '--faults']);
    try {
      const armed = await server.post('/__faults', { path: '/v2/subscribers', status: 500, method: 'GET' });
      assert.equal(armed.status, 201);
      const failed = await server.get('/v2/subscribers');
      const b = expectErrorBody(failed, 500);
      assert.match(b.errorId, /^[0-9a-f]{16}$/);
      const next = await server.get('/v2/subscribers');
      assert.notEqual(next.status, 500);
    } finally {
      await server.dispose();
    }
  });
});
