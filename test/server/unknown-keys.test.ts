import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Db } from '../../server/src/db/index.ts';
import { KeyResolver, registerKey } from '../../server/src/db/keys.ts';
import { expectErrorBody, KEYS, openTestDatabase, SERVICE_COMMAND, TestServer, watchSelects } from './helpers.ts';

// Unknown API keys (server/src/db/keys.ts): each costs one database lookup, so an unknown key is
// remembered a few seconds (a client retrying a wrong key costs one lookup, not one a request), in
// a bounded table (random keys cannot grow memory), and a key registered later works at once.
// With rate limits on, unknown keys count against their client's address, not a budget of their own.

describe('KeyResolver: unknown keys', () => {
  let db: Db;
  let lookups = 0;
  let done: () => Promise<void>;

  before(async () => {
    const opened = await openTestDatabase();
    const real = opened.db;
    done = opened.done;
    // The same database, counting the lookups of api_keys.
    db = watchSelects(real, (from, builder) => (from === 'api_keys' && lookups++, builder));
    await registerKey(db, 'known-key', 'acme', 'production');
  });
  after(async () => done?.());

  it('looks an unknown key up once while it is remembered, again once that ended', async () => {
    let now = 1_000_000;
    const keys = new KeyResolver(db, { now: () => now });
    lookups = 0;
    for (let i = 0; i < 50; i++) assert.equal(await keys.resolve('wrong-key'), null);
    assert.equal(lookups, 1, 'one lookup for 50 requests');
    // Concurrent requests with one unknown key share the lookup.
    const together = await Promise.all(Array.from({ length: 20 }, () => keys.resolve('other-wrong-key')));
    assert.deepEqual(new Set(together), new Set([null]));
    assert.equal(lookups, 2);
    now += 60_000;
    assert.equal(await keys.resolve('wrong-key'), null);
    assert.equal(lookups, 3, 'looked up again once forgotten');
    // Known keys: looked up once, then remembered.
    const tenant = await keys.resolve('known-key');
    assert.ok(tenant?.environmentId);
    assert.deepEqual(await keys.resolve('known-key'), tenant);
    assert.equal(lookups, 4);
  });

  it('remembers a bounded number of unknown keys, however many random ones come', async () => {
    const keys = new KeyResolver(db, { maxUnknown: 100 });
    for (let i = 0; i < 1000; i++) assert.equal(await keys.resolve(`random-${i}-${randomBytes(8).toString('hex')}`), null);
    assert.ok(keys.unknownHeld <= 100, `${keys.unknownHeld} unknown keys held`);
  });

  it('a key registered after it was refused works at once', async () => {
    const keys = new KeyResolver(db);
    assert.equal(await keys.resolve('late-key'), null);
    assert.equal(await keys.resolve('late-key'), null);
    const tenant = await registerKey(db, 'late-key', 'acme', 'staging');
    assert.deepEqual(await keys.resolve('late-key'), tenant);
  });
});

describe('unknown keys over HTTP', () => {
  let server: TestServer;
  before(async () => (server = await new TestServer().start(['--no-seed', '--rate-limit', '3/60s'])));
  after(async () => server?.dispose());

  it('answers 401 with the error body, the same for a repeated key', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await server.get('/v1/subscribers/anyone', { key: 'not-a-key' });
      const b = expectErrorBody(r, 401);
      assert.equal(b.error, 'Unauthorized');
      assert.equal(b.message, 'API key not found');
      assert.equal(b.path, '/v1/subscribers/anyone');
    }
  });

  it('counts unknown keys against their address (rate limit per key): a new random key per request does not escape the limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await server.get('/v1/subscribers/anyone', { key: `nk_${randomBytes(24).toString('hex')}` })).status);
    assert.ok(statuses.includes(429), `statuses: ${statuses.join(', ')}`);
    const limited = await server.get('/v1/subscribers/anyone', { key: `nk_${randomBytes(24).toString('hex')}` });
    expectErrorBody(limited, 429);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    // A known key keeps its own budget.
    assert.equal((await server.get('/v1/subscribers/anyone', { key: KEYS.a })).status, 404);
  });

  it('a key made by `keys create` while the service runs works at once', async () => {
    const { execFileSync } = await import('node:child_process');
    const key = execFileSync(process.execPath, [...SERVICE_COMMAND, 'keys', 'create', '--org', 'acme', '--env', 'later', '--db', server.dbPath], {
      cwd: join(import.meta.dirname, '../..'),
      env: { ...process.env, DATABASE_URL: server.postgres ? server.dbPath : '' },
      encoding: 'utf8',
    }).trim();
    assert.match(key, /^nk_/);
    const r = await server.get('/v1/subscribers/anyone', { key });
    expectErrorBody(r, 404);
  });
});
