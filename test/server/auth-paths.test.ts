import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, startServer, type TestServer } from './helpers.ts';

// The router decodes the path before it routes, so the authentication check and the rate limiter
// must judge the path the router routes, not the raw one: `/%76%32/workflows` is `/v2/workflows`.

const ENCODED = [
  '/%76%32/workflows',
  '/v%32/workflows',
  '/%76%32/%77orkflows',
  '/%76%31/subscribers/ada/notifications/feed',
  '/v1/subscribers/ada/notifications/%75nseen',
  '/%76%31/integrations',
  '/%76%32/subscribers/ada',
];

/** Raw paths reach the server as written (fetch would keep them too, but URL() may normalise). */
async function rawGet(server: TestServer, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + path, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

describe('authentication of percent-encoded paths', () => {
  let server: TestServer;
  before(async () => (server = await startServer({ NOTIF_RATE_LIMIT: '1000/60s' })));
  after(async () => server?.dispose());

  it('answers 401 without a key however the path is encoded, and never a stack trace', async () => {
    for (const path of ENCODED) {
      const r = await rawGet(server, path);
      expectErrorBody(r, 401);
      assert.doesNotMatch(r.text, /\n\s+at |node:internal|\.ts:\d+/, `${path}: ${r.text}`);
    }
  });

  it('serves the same paths with a key, counted by the rate limiter', async () => {
    const r = await rawGet(server, '/%76%32/workflows', { authorization: 'ApiKey test_key_a' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('ratelimit-limit'), '1000');
    const anonymous = await rawGet(server, '/%76%31/integrations');
    assert.equal(anonymous.headers.get('ratelimit-limit'), '1000', 'an unauthenticated encoded path is counted too');
  });
});
