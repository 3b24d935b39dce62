import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, KEYS, sqlOn, startServer, TestServer, type Reply } from './helpers.ts';

// The idempotency-key header (decisions.md, "Idempotency"), exercised on POST /v2/subscribers:
// a second processing of a create would update the subscriber and raise its __v, so __v = 0 after
// a replay proves the request ran once.

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

async function countSubscribers(server: TestServer, subscriberId: string, key: string = KEYS.a) {
  const r = await server.get('/v2/subscribers', { key, query: { subscriberId, limit: 100 } });
  assert.equal(r.status, 200);
  return r.body.totalCount as number;
}

describe('idempotency-key', () => {
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  it('replays the same key and body: same status and body, Idempotency-Replay: true, key echoed, processed once', async () => {
    const body = { subscriberId: 'idem-1', firstName: 'Once', data: { n: 1 } };
    const first = await server.post('/v2/subscribers', body, withKey('key-1'));
    assert.equal(first.status, 201);
    assert.equal(first.headers.get('idempotency-key'), 'key-1');
    assert.equal(first.headers.get('idempotency-replay'), null);
    for (let i = 0; i < 3; i++) {
      const again = await server.post('/v2/subscribers', body, withKey('key-1'));
      assert.equal(again.status, 201);
      assert.deepEqual(again.body, first.body);
      assert.equal(again.headers.get('idempotency-replay'), 'true');
      assert.equal(again.headers.get('idempotency-key'), 'key-1');
      assert.match(again.headers.get('content-type') ?? '', /application\/json/);
    }
    assert.equal(await countSubscribers(server, 'idem-1'), 1);
    const stored = await server.get('/v2/subscribers/idem-1');
    assert.equal(stored.body.__v, 0, 'the replays did not run the create again');
    // without the header the request runs (and, the subscriber existing, updates it)
    const plain = await server.post('/v2/subscribers', body);
    assert.equal(plain.body.__v, 1);
    assert.equal(plain.headers.get('idempotency-replay'), null);
  });

  it('replays a refusal as it was (a 409 stays a 409 even once the cause is gone)', async () => {
    await server.post('/v2/subscribers', { subscriberId: 'idem-2' });
    const refused = await server.post('/v2/subscribers', { subscriberId: 'idem-2' }, { ...withKey('key-2'), query: { failIfExists: true } });
    expectErrorBody(refused, 409);
    const again = await server.post('/v2/subscribers', { subscriberId: 'idem-2' }, { ...withKey('key-2'), query: { failIfExists: true } });
    expectErrorBody(again, 409);
    assert.equal(again.headers.get('idempotency-replay'), 'true');
    assert.deepEqual(again.body, refused.body);
    // a validation failure is kept too
    const invalid = await server.post('/v2/subscribers', { subscriberId: 5 }, withKey('key-2b'));
    expectErrorBody(invalid, 422);
    const invalidAgain = await server.post('/v2/subscribers', { subscriberId: 5 }, withKey('key-2b'));
    assert.equal(invalidAgain.headers.get('idempotency-replay'), 'true');
    assert.deepEqual(invalidAgain.body, invalid.body);
  });

  it('422 for the same key with a different body (or query), echoing the key; nothing is processed', async () => {
    const first = await server.post('/v2/subscribers', { subscriberId: 'idem-3', firstName: 'A' }, withKey('key-3'));
    assert.equal(first.status, 201);
    const other = await server.post('/v2/subscribers', { subscriberId: 'idem-3', firstName: 'B' }, withKey('key-3'));
    const b = expectErrorBody(other, 422);
    assert.match(b.message, /idempotency-key/i);
    assert.equal(other.headers.get('idempotency-key'), 'key-3');
    const otherQuery = await server.post('/v2/subscribers', { subscriberId: 'idem-3', firstName: 'A' }, { ...withKey('key-3'), query: { failIfExists: true } });
    expectErrorBody(otherQuery, 422);
    const otherTarget = await server.post('/v2/subscribers', { subscriberId: 'idem-3-bis', firstName: 'A' }, withKey('key-3'));
    expectErrorBody(otherTarget, 422);
    assert.equal((await server.get('/v2/subscribers/idem-3')).body.firstName, 'A');
    expectErrorBody(await server.get('/v2/subscribers/idem-3-bis'), 404);
  });

  it('400 for a key longer than 255 characters (255 is fine); nothing is processed', async () => {
    const long = await server.post('/v2/subscribers', { subscriberId: 'idem-4' }, withKey('k'.repeat(256)));
    const b = expectErrorBody(long, 400);
    assert.match(b.message, /255/);
    expectErrorBody(await server.get('/v2/subscribers/idem-4'), 404);
    const ok = await server.post('/v2/subscribers', { subscriberId: 'idem-4' }, withKey('k'.repeat(255)));
    assert.equal(ok.status, 201);
    assert.equal(ok.headers.get('idempotency-key'), 'k'.repeat(255));
  });

  it('keys are scoped to the organization: another organization reusing the key is processed normally', async () => {
    const body = { subscriberId: 'idem-5', firstName: 'Acme' };
    const mine = await server.post('/v2/subscribers', body, withKey('shared-key'));
    assert.equal(mine.status, 201);
    const theirs = await server.post('/v2/subscribers', body, { key: KEYS.other, ...withKey('shared-key') });
    assert.equal(theirs.status, 201);
    assert.equal(theirs.headers.get('idempotency-replay'), null);
    assert.notEqual(theirs.body._id, mine.body._id);
    assert.notEqual(theirs.body._organizationId, mine.body._organizationId);
    assert.equal(await countSubscribers(server, 'idem-5', KEYS.other), 1);
    // and their own replay is theirs
    const theirsAgain = await server.post('/v2/subscribers', body, { key: KEYS.other, ...withKey('shared-key') });
    assert.equal(theirsAgain.headers.get('idempotency-replay'), 'true');
    assert.deepEqual(theirsAgain.body, theirs.body);
    // a different body under that key in the other organization is not a clash with ours
    const otherBody = await server.post('/v2/subscribers', { subscriberId: 'idem-5b' }, { key: KEYS.other, ...withKey('another-shared-key') });
    assert.equal(otherBody.status, 201);
    const ours = await server.post('/v2/subscribers', { subscriberId: 'idem-5c' }, withKey('another-shared-key'));
    assert.equal(ours.status, 201);
  });

  it("never replays one environment's answer to another environment of the organization", async () => {
    const body = { subscriberId: 'idem-env', firstName: 'Production' };
    const mine = await server.post('/v2/subscribers', body, withKey('env-key'));
    assert.equal(mine.status, 201);
    const staging = await server.post('/v2/subscribers', body, { key: KEYS.b, ...withKey('env-key') });
    const b = expectErrorBody(staging, 422);
    assert.match(b.message, /idempotency-key/);
    assert.equal(JSON.stringify(staging.body).includes(mine.body._id), false);
    expectErrorBody(await server.get('/v2/subscribers/idem-env', { key: KEYS.b }), 404);
  });

  it('GET requests ignore the header', async () => {
    await server.post('/v2/subscribers', { subscriberId: 'idem-6' });
    const r = await server.get('/v2/subscribers/idem-6', withKey('k'.repeat(300)));
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('idempotency-replay'), null);
  });

  it('a replay survives a restart of the server', async () => {
    const body = { subscriberId: 'idem-7', lastName: 'Durable' };
    const first = await server.post('/v2/subscribers', body, withKey('key-7'));
    assert.equal(first.status, 201);
    await server.restart();
    const again = await server.post('/v2/subscribers', body, withKey('key-7'));
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotency-replay'), 'true');
    assert.deepEqual(again.body, first.body);
    expectErrorBody(await server.post('/v2/subscribers', { ...body, lastName: 'Changed' }, withKey('key-7')), 422);
    assert.equal((await server.get('/v2/subscribers/idem-7')).body.__v, 0);
  });
});

describe('idempotency-key under concurrency', () => {
  // Two processes on one database, as a deployment with several servers runs: the same request
  // sent to both at once. One of them processes it; the other either replays the stored answer or,
  // while the first still holds the key, answers 409 with Retry-After: 1. (Inside one process a
  // SQLite request never yields between taking the key and storing the answer, so the window is
  // only visible across processes; the big body widens it.)
  let server: TestServer;
  let twin: TestServer;
  before(async () => {
    server = await startServer();
    twin = await new TestServer({}, server.dbPath).start();
  });
  after(async () => {
    await twin?.dispose();
    await server?.dispose();
  });

  function classify(r: Reply, key: string): 'processed' | 'replayed' | 'in-flight' {
    assert.equal(r.headers.get('idempotency-key'), key, 'every answer echoes the key');
    if (r.status === 409) {
      expectErrorBody(r, 409);
      assert.equal(r.headers.get('retry-after'), '1');
      return 'in-flight';
    }
    assert.equal(r.status, 201, JSON.stringify(r.body).slice(0, 300));
    return r.headers.get('idempotency-replay') === 'true' ? 'replayed' : 'processed';
  }

  it('each pair of identical concurrent requests is processed once; the other is a replay or a 409 with Retry-After: 1', async () => {
    const blob = 'x'.repeat(300_000);
    let inFlight = 0;
    const retry: { key: string; body: object; processed: Reply }[] = [];
    for (let i = 0; i < 20; i++) {
      const key = `pair-${i}`;
      const body = { subscriberId: `pair-${i}`, data: { blob, i } };
      const replies = await Promise.all([server, twin].map((s) => s.post('/v2/subscribers', body, withKey(key))));
      const kinds = replies.map((r) => classify(r, key));
      assert.equal(kinds.filter((k) => k === 'processed').length, 1, `pair ${i}: ${kinds.join(', ')}`);
      const processed = replies[kinds.indexOf('processed')]!;
      replies.forEach((r, j) => kinds[j] === 'replayed' && assert.deepEqual(r.body, processed.body));
      if (kinds.includes('in-flight')) {
        inFlight++;
        retry.push({ key, body, processed });
      }
    }
    assert.ok(inFlight > 0, 'no request saw the key in flight');
    // after Retry-After, the same request gets the stored answer
    for (const { key, body, processed } of retry.slice(0, 3)) {
      const again = await twin.post('/v2/subscribers', body, withKey(key));
      assert.equal(classify(again, key), 'replayed');
      assert.deepEqual(again.body, processed.body);
    }
    for (let i = 0; i < 20; i++) {
      assert.equal(await countSubscribers(server, `pair-${i}`), 1);
      assert.equal((await server.get(`/v2/subscribers/pair-${i}`)).body.__v, 0, `pair-${i} was processed twice`);
    }
  });

  it('in one process, concurrent identical requests are processed once as well', async () => {
    for (let i = 0; i < 20; i++) {
      const key = `solo-${i}`;
      const body = { subscriberId: `solo-${i}`, data: { i } };
      const replies = await Promise.all([0, 1, 2].map(() => server.post('/v2/subscribers', body, withKey(key))));
      const kinds = replies.map((r) => classify(r, key));
      assert.equal(kinds.filter((k) => k === 'processed').length, 1, `solo ${i}: ${kinds.join(', ')}`);
      assert.equal((await server.get(`/v2/subscribers/solo-${i}`)).body.__v, 0);
    }
  });
});

describe('idempotency-key expiry', () => {
  // A key is replayed for 24 hours; after that nothing reads it again, so it must not stay: the
  // elements send a new key with every change (a mark, an action, a preference), each stored with
  // its answer, and a table that only grows is disk without bound.
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  it('keys older than 24 hours are deleted as keyed requests come; younger ones stay', async () => {
    const hour = 60 * 60 * 1000;
    const insert = 'insert into idempotency_keys (organization_id, key, request_hash, state, status_code, body, created_at) values (?, ?, ?, ?, ?, ?, ?)';
    await sqlOn(server, insert, ['org', 'expired', 'h', 'done', 201, null, Date.now() - 25 * hour]);
    await sqlOn(server, insert, ['org', 'abandoned', 'h', 'in_flight', null, null, Date.now() - 48 * hour]);
    await sqlOn(server, insert, ['org', 'young', 'h', 'done', 201, null, Date.now() - 23 * hour]);
    assert.equal((await server.post('/v2/subscribers', { subscriberId: 'idem-expiry' }, withKey('fresh'))).status, 201);
    const keys = async () => (await sqlOn(server, 'select key from idempotency_keys order by key')).map((r) => r.key);
    // The deletion runs beside the request: wait for it a while.
    for (let i = 0; i < 40 && (await keys()).includes('expired'); i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(await keys(), ['fresh', 'young']);
  });
});
