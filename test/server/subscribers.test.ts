import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, KEYS, sqlOn, startServer, type Reply, type TestServer } from './helpers.ts';
import { createWorkflow, getFeed, triggerEvent, unseenCount } from './fixtures.ts';

// Subscribers: create (8), get (3), search (6), credentials (4, 5), preferences (14), over real HTTP.

/** Runs SQL on the server's own database (fixtures the API has no way to make: equal timestamps, workflows). */

function expect422(reply: Reply, ...fields: string[]) {
  const b = expectErrorBody(reply, 422);
  assert.equal(b.error, 'Unprocessable Entity');
  assert.equal(typeof b.errors, 'object', `no errors map: ${JSON.stringify(b)}`);
  for (const f of fields) {
    assert.ok(b.errors[f], `errors lacks '${f}': ${JSON.stringify(b.errors)}`);
    assert.ok(Array.isArray(b.errors[f].messages) && b.errors[f].messages.length > 0);
    assert.ok('value' in b.errors[f]);
  }
  return b;
}

describe('POST /v2/subscribers (create)', () => {
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  it('creates a subscriber: 201 with the Subscriber, unknown fields dropped', async () => {
    const r = await server.post('/v2/subscribers', {
      subscriberId: 'create-1',
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.test',
      phone: '+15550001',
      avatar: 'https://example.test/a.png',
      locale: 'en-GB',
      timezone: 'Europe/London',
      data: { plan: 'pro', nested: { n: 1 } },
      isOnline: true,
      _environmentId: 'somebody-else',
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.match(r.headers.get('content-type') ?? '', /application\/json/);
    const s = r.body;
    assert.match(s._id, /^[0-9a-f]{24}$/);
    assert.equal(s.subscriberId, 'create-1');
    assert.equal(s.firstName, 'Ada');
    assert.equal(s.lastName, 'Lovelace');
    assert.equal(s.email, 'ada@example.test');
    assert.equal(s.phone, '+15550001');
    assert.equal(s.avatar, 'https://example.test/a.png');
    assert.equal(s.locale, 'en-GB');
    assert.equal(s.timezone, 'Europe/London');
    assert.deepEqual(s.data, { plan: 'pro', nested: { n: 1 } });
    assert.deepEqual(s.channels, []);
    assert.deepEqual(s.topics, []);
    assert.equal(s.isOnline, false);
    assert.equal(s.deleted, false);
    assert.equal(s.__v, 0);
    assert.match(s._environmentId, /^[0-9a-f]{24}$/);
    assert.notEqual(s._environmentId, 'somebody-else');
    assert.match(s._organizationId, /^[0-9a-f]{24}$/);
    assert.ok(!Number.isNaN(Date.parse(s.createdAt)) && s.createdAt.endsWith('Z'));
    assert.equal(s.createdAt, s.updatedAt);

    const got = await server.get('/v2/subscribers/create-1');
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, s);
  });

  it('updates an existing subscriberId (same _id, given fields only; null clears)', async () => {
    const first = await server.post('/v2/subscribers', { subscriberId: 'create-2', firstName: 'A', lastName: 'B', data: { x: 1 } });
    assert.equal(first.status, 201);
    const second = await server.post('/v2/subscribers', { subscriberId: 'create-2', firstName: 'Alan', lastName: null, email: 'alan@x.test' });
    assert.equal(second.status, 201);
    assert.equal(second.body._id, first.body._id);
    assert.equal(second.body.firstName, 'Alan');
    assert.equal(second.body.lastName, undefined);
    assert.equal(second.body.email, 'alan@x.test');
    assert.deepEqual(second.body.data, { x: 1 });
    assert.equal(second.body.__v, 1);
    assert.equal(second.body.createdAt, first.body.createdAt);
    assert.ok(second.body.updatedAt >= first.body.updatedAt);
    const third = await server.post('/v2/subscribers', { subscriberId: 'create-2', data: { y: 2 } });
    assert.deepEqual(third.body.data, { y: 2 });
    assert.equal(third.body.firstName, 'Alan');
  });

  it('failIfExists=true: 409 for an existing subscriberId, 201 for a new one; failIfExists=false updates', async () => {
    await server.post('/v2/subscribers', { subscriberId: 'create-3', firstName: 'Before' });
    const clash = await server.post('/v2/subscribers', { subscriberId: 'create-3', firstName: 'After' }, { query: { failIfExists: true } });
    const b = expectErrorBody(clash, 409);
    assert.equal(b.error, 'Conflict');
    assert.match(b.message, /create-3/);
    const unchanged = await server.get('/v2/subscribers/create-3');
    assert.equal(unchanged.body.firstName, 'Before');

    const fresh = await server.post('/v2/subscribers', { subscriberId: 'create-3b' }, { query: { failIfExists: true } });
    assert.equal(fresh.status, 201);
    const upd = await server.post('/v2/subscribers', { subscriberId: 'create-3', firstName: 'After' }, { query: { failIfExists: false } });
    assert.equal(upd.status, 201);
    assert.equal(upd.body.firstName, 'After');
  });

  it('the same subscriberId in another environment is another subscriber', async () => {
    const a = await server.post('/v2/subscribers', { subscriberId: 'shared-id', firstName: 'InA' });
    const b = await server.post('/v2/subscribers', { subscriberId: 'shared-id', firstName: 'InB' }, { key: KEYS.b, query: { failIfExists: true } });
    const o = await server.post('/v2/subscribers', { subscriberId: 'shared-id', firstName: 'InOther' }, { key: KEYS.other, query: { failIfExists: true } });
    assert.equal(b.status, 201);
    assert.equal(o.status, 201);
    assert.notEqual(a.body._id, b.body._id);
    assert.notEqual(a.body._environmentId, b.body._environmentId);
    assert.equal(a.body._organizationId, b.body._organizationId);
    assert.notEqual(a.body._organizationId, o.body._organizationId);
    assert.equal((await server.get('/v2/subscribers/shared-id')).body.firstName, 'InA');
    assert.equal((await server.get('/v2/subscribers/shared-id', { key: KEYS.b })).body.firstName, 'InB');
    assert.equal((await server.get('/v2/subscribers/shared-id', { key: KEYS.other })).body.firstName, 'InOther');
  });

  it('422 when subscriberId is missing, empty, blank, too long or not a string', async () => {
    expect422(await server.post('/v2/subscribers', { firstName: 'x' }), 'subscriberId');
    const missing = expect422(await server.post('/v2/subscribers', {}), 'subscriberId');
    assert.deepEqual(missing.errors.subscriberId.messages, ['is required']);
    expect422(await server.post('/v2/subscribers', { subscriberId: '' }), 'subscriberId');
    expect422(await server.post('/v2/subscribers', { subscriberId: '   ' }), 'subscriberId');
    const long = expect422(await server.post('/v2/subscribers', { subscriberId: 'x'.repeat(256) }), 'subscriberId');
    assert.equal(long.errors.subscriberId.value, 'x'.repeat(256));
    assert.equal((await server.post('/v2/subscribers', { subscriberId: 'y'.repeat(255) })).status, 201);
    for (const bad of [42, true, null, {}, ['a'], ['a', 'b']]) {
      const r = expect422(await server.post('/v2/subscribers', { subscriberId: bad }), 'subscriberId');
      assert.deepEqual(r.errors.subscriberId.value, bad);
    }
  });

  it('422 for wrong types of the other fields, naming each, and creates nothing', async () => {
    const r = expect422(
      await server.post('/v2/subscribers', {
        subscriberId: 'types-1',
        firstName: 5,
        lastName: false,
        email: ['a@x.test'],
        phone: {},
        avatar: 1.5,
        locale: [],
        timezone: 7,
        data: [1, 2],
      }),
      'firstName', 'lastName', 'email', 'phone', 'avatar', 'locale', 'timezone', 'data',
    );
    assert.deepEqual(r.errors.firstName, { messages: ['must be string'], value: 5 });
    assert.deepEqual(r.errors.data, { messages: ['must be object'], value: [1, 2] });
    assert.match(r.message, /firstName must be string/);
    expectErrorBody(await server.get('/v2/subscribers/types-1'), 404);

    for (const data of ['text', 5, true]) expect422(await server.post('/v2/subscribers', { subscriberId: 'types-2', data }), 'data');
    // a wrong type and a missing subscriberId are reported together
    expect422(await server.post('/v2/subscribers', { firstName: 5 }), 'firstName', 'subscriberId');
  });

  it('422 for strings over their maximum length', async () => {
    expect422(await server.post('/v2/subscribers', { subscriberId: 'len', firstName: 'x'.repeat(256) }), 'firstName');
    expect422(await server.post('/v2/subscribers', { subscriberId: 'len', email: 'x'.repeat(321) }), 'email');
    expect422(await server.post('/v2/subscribers', { subscriberId: 'len', phone: '1'.repeat(65) }), 'phone');
    expect422(await server.post('/v2/subscribers', { subscriberId: 'len', avatar: 'h'.repeat(2049) }), 'avatar');
    expect422(await server.post('/v2/subscribers', { subscriberId: 'len', locale: 'l'.repeat(65), timezone: 't'.repeat(65) }), 'locale', 'timezone');
  });

  it('422 for a body that is not an object, 400 for bodies that are not JSON, 413 past the size limit', async () => {
    expect422(await server.post('/v2/subscribers', [{ subscriberId: 'arr' }]), 'body');
    expect422(await server.post('/v2/subscribers', 'just a string'), 'body');
    expect422(await server.request('POST', '/v2/subscribers', { raw: 'null' }), 'body');
    expect422(await server.request('POST', '/v2/subscribers', { raw: '42' }), 'body');
    const notJson = expectErrorBody(await server.request('POST', '/v2/subscribers', { raw: '{"subscriberId": "x",' }), 400);
    assert.equal(notJson.error, 'Bad Request');
    assert.equal(notJson.path, '/v2/subscribers');
    expectErrorBody(await server.request('POST', '/v2/subscribers', { raw: '' }), 400);
    const huge = await server.post('/v2/subscribers', { subscriberId: 'huge', data: { blob: 'x'.repeat(1024 * 1024 + 10) } });
    expectErrorBody(huge, 413);
    expectErrorBody(await server.get('/v2/subscribers/huge'), 404);
    expect422(await server.post('/v2/subscribers', { subscriberId: 'q' }, { query: { failIfExists: 'maybe' } }), 'failIfExists');
  });

  it('401 without a key', async () => {
    expectErrorBody(await server.post('/v2/subscribers', { subscriberId: 'nokey' }, { key: null }), 401);
  });
});

describe('GET /v2/subscribers/:subscriberId', () => {
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  it('200 with the Subscriber; subscriberIds with URL-special characters round-trip', async () => {
    const id = 'user/42 ünïcode?&#';
    const c = await server.post('/v2/subscribers', { subscriberId: id, firstName: 'U' });
    assert.equal(c.status, 201);
    const r = await server.get(`/v2/subscribers/${encodeURIComponent(id)}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.subscriberId, id);
    assert.equal(r.body._id, c.body._id);
  });

  it('404 for an unknown subscriber, and for one of another environment or organization', async () => {
    await server.post('/v2/subscribers', { subscriberId: 'only-in-a' });
    const unknown = expectErrorBody(await server.get('/v2/subscribers/nobody'), 404);
    assert.equal(unknown.error, 'Not Found');
    assert.match(unknown.message, /nobody/);
    expectErrorBody(await server.get('/v2/subscribers/only-in-a', { key: KEYS.b }), 404);
    expectErrorBody(await server.get('/v2/subscribers/only-in-a', { key: KEYS.other }), 404);
    assert.equal((await server.get('/v2/subscribers/only-in-a')).status, 200);
  });

  it('255-character subscriberIds work; longer ones are 422 (414 past the router\'s limit); bad %-escapes 400', async () => {
    const id = 'k'.repeat(255);
    assert.equal((await server.post('/v2/subscribers', { subscriberId: id })).status, 201);
    assert.equal((await server.get(`/v2/subscribers/${id}`)).body.subscriberId, id);
    expect422(await server.get(`/v2/subscribers/${'x'.repeat(256)}`), 'subscriberId');
    expect422(await server.patch(`/v1/subscribers/${'x'.repeat(256)}/credentials`, { providerId: 'fcm', credentials: {} }), 'subscriberId');
    expectErrorBody(await server.get(`/v2/subscribers/${'x'.repeat(2000)}`), 414);
    expectErrorBody(await server.get('/v2/subscribers/%E0%A4%A'), 400);
  });
});

// ---------------------------------------------------------------------------------------------

interface Person {
  subscriberId: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
}

const FIRST = ['Ada', 'Alan', 'Grace', 'Edsger', 'Barbara', 'Donald', 'ada', 'Katherine'];
const LAST = ['Lovelace', 'Turing', 'Hopper', 'Dijkstra', 'Liskov', 'Knuth', 'LOVELACE', 'Johnson'];

function people(): Person[] {
  const list: Person[] = [];
  for (let i = 0; i < 26; i++) {
    const p: Person = { subscriberId: `sub-${String(i).padStart(2, '0')}` };
    if (i % 5 !== 4) p.firstName = FIRST[i % FIRST.length];
    if (i % 7 !== 6) p.lastName = LAST[(i * 3) % LAST.length];
    if (i % 3 !== 2) p.email = i % 4 === 0 ? `User_${i}@Example.TEST` : `user${i}@mail.example`;
    if (i % 2 === 0) p.phone = `+1555${String(1000 + i)}`;
    list.push(p);
  }
  // wildcard characters must be taken literally
  list.push({ subscriberId: 'pct', firstName: '100%', lastName: 'Sure', email: 'percent%sign@x.test' });
  return list;
}

describe('GET /v2/subscribers (search)', () => {
  let server: TestServer;
  let all: any[] = [];

  before(async () => {
    server = await startServer();
    for (const p of people()) {
      const r = await server.post('/v2/subscribers', p);
      assert.equal(r.status, 201, JSON.stringify(r.body));
    }
    // Ties: createdAt in groups of three, updatedAt in groups of four (the API cannot make equal
    // timestamps on purpose, the database can).
    const rows = await sqlOn(server, 'SELECT id FROM subscribers ORDER BY subscriber_id');
    for (const [i, row] of rows.entries()) {
      const created = `2026-01-01T00:00:${String(Math.floor(i / 3)).padStart(2, '0')}.000Z`;
      const updated = `2026-02-01T00:00:${String(10 + ((Math.floor(i / 4) * 7) % 10)).padStart(2, '0')}.000Z`;
      await sqlOn(server, 'UPDATE subscribers SET created_at = ?, updated_at = ? WHERE id = ?', [created, updated, row.id]);
    }
    all = [];
    for (const p of people()) all.push((await server.get(`/v2/subscribers/${p.subscriberId}`)).body);
    // Look-alikes in the other environment and organization that no search of KEYS.a may return.
    for (const key of [KEYS.b, KEYS.other]) {
      for (const p of people().slice(0, 6)) assert.equal((await server.post('/v2/subscribers', p, { key })).status, 201);
    }
  });
  after(() => server.dispose());

  const FIELD = { _id: '_id', createdAt: 'createdAt', updatedAt: 'updatedAt' } as const;
  function expected(filter: Record<string, string>, orderBy: keyof typeof FIELD, dir: 'ASC' | 'DESC') {
    const has = (v: string | undefined, q: string) => (v ?? '').toLowerCase().includes(q.toLowerCase());
    const list = all.filter(
      (s) =>
        (filter.email === undefined || has(s.email, filter.email)) &&
        (filter.phone === undefined || has(s.phone, filter.phone)) &&
        (filter.name === undefined || has(`${s.firstName ?? ''} ${s.lastName ?? ''}`, filter.name)) &&
        (filter.subscriberId === undefined || s.subscriberId === filter.subscriberId),
    );
    const f = FIELD[orderBy];
    list.sort((x, y) => (x[f] < y[f] ? -1 : x[f] > y[f] ? 1 : x._id < y._id ? -1 : x._id > y._id ? 1 : 0));
    if (dir === 'DESC') list.reverse();
    return list.map((s) => s._id as string);
  }

  const FILTERS: Record<string, string>[] = [
    {},
    { email: 'EXAMPLE' },
    { email: 'user_' },
    { phone: '555100' },
    { name: 'Ada Lovelace' },
    { name: 'ada' },
    { name: 'love' },
    { subscriberId: 'sub-07' },
    { email: 'mail', name: 'a' },
  ];

  it('the filters match what they say (case-insensitive substrings; subscriberId exact; wildcards literal)', async () => {
    const ids = async (query: Record<string, string | number>) =>
      (await server.get('/v2/subscribers', { query: { limit: 100, ...query } })).body.data.map((s: any) => s.subscriberId).sort();
    const adaLovelace = await ids({ name: 'Ada Lovelace' });
    assert.ok(adaLovelace.length >= 2, JSON.stringify(adaLovelace));
    for (const id of adaLovelace) {
      const s = all.find((x) => x.subscriberId === id);
      assert.equal(`${s.firstName} ${s.lastName}`.toLowerCase(), 'ada lovelace');
    }
    assert.deepEqual(await ids({ name: 'aDA lOVELACE' }), adaLovelace);
    assert.deepEqual(await ids({ subscriberId: 'sub-07' }), ['sub-07']);
    assert.deepEqual(await ids({ subscriberId: 'sub-0' }), []);
    assert.deepEqual(await ids({ email: '%' }), ['pct']);
    assert.deepEqual(await ids({ name: '100%' }), ['pct']);
    const underscore = await ids({ email: '_' });
    assert.ok(underscore.length > 0);
    for (const id of underscore) assert.ok(all.find((x) => x.subscriberId === id).email.includes('_'));
    assert.deepEqual(await ids({ email: 'nothing-like-this' }), []);
  });

  for (const orderBy of ['_id', 'createdAt', 'updatedAt'] as const) {
    for (const dir of ['ASC', 'DESC'] as const) {
      it(`pages forward with next and back with previous, each subscriber once (orderBy ${orderBy} ${dir}, every filter)`, async () => {
        for (const filter of FILTERS) {
          for (const limit of [1, 4, 100]) {
            const want = expected(filter, orderBy, dir);
            const base = { ...filter, limit, orderBy, orderDirection: dir };
            const where = `${JSON.stringify(base)}`;

            // forward
            const seen: string[] = [];
            let page = await server.get('/v2/subscribers', { query: base });
            assert.equal(page.status, 200, where);
            assert.equal(page.body.previous, null, where);
            let pages = 0;
            for (;;) {
              pages++;
              assert.ok(pages <= 40, where);
              const b = page.body;
              assert.equal(b.totalCount, want.length, where);
              assert.equal(b.totalCountCapped, false);
              assert.ok(b.data.length <= limit, where);
              seen.push(...b.data.map((s: any) => s._id));
              if (pages > 1) assert.equal(b.previous, b.data[0]._id, where);
              if (b.next === null) break;
              assert.equal(b.next, b.data.at(-1)._id, where);
              page = await server.get('/v2/subscribers', { query: { ...base, after: b.next } });
              assert.equal(page.status, 200, where);
            }
            assert.deepEqual(seen, want, `forward ${where}`);

            // back from the last page
            const back: string[] = [...page.body.data.map((s: any) => s._id)];
            let steps = 0;
            while (page.body.previous !== null) {
              assert.ok(++steps <= 40, where);
              const previous = page.body.previous;
              page = await server.get('/v2/subscribers', { query: { ...base, before: previous } });
              assert.equal(page.status, 200, where);
              assert.ok(page.body.data.length > 0 && page.body.data.length <= limit, where);
              assert.equal(page.body.next, page.body.data.at(-1)._id, where);
              back.unshift(...page.body.data.map((s: any) => s._id));
            }
            assert.deepEqual(back, want, `backward ${where}`);
          }
        }
      });
    }
  }

  it('defaults: 10 per page, ordered by _id descending', async () => {
    const r = await server.get('/v2/subscribers');
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), ['data', 'next', 'previous', 'totalCount', 'totalCountCapped']);
    assert.equal(r.body.data.length, 10);
    assert.deepEqual(r.body.data.map((s: any) => s._id), expected({}, '_id', 'DESC').slice(0, 10));
    assert.equal(r.body.totalCount, all.length);
    assert.equal(r.body.previous, null);
    assert.equal(r.body.next, r.body.data[9]._id);
    // the Subscriber shape, from this environment only
    for (const s of r.body.data) assert.equal(s._environmentId, all[0]._environmentId);
  });

  it('before= a cursor ends right before it; includeCursor includes it, in both directions', async () => {
    const order = expected({}, '_id', 'ASC');
    const c = order[10]!;
    const q = { orderDirection: 'ASC', limit: 3 };
    const after = await server.get('/v2/subscribers', { query: { ...q, after: c } });
    assert.deepEqual(after.body.data.map((s: any) => s._id), order.slice(11, 14));
    const afterInc = await server.get('/v2/subscribers', { query: { ...q, after: c, includeCursor: true } });
    assert.deepEqual(afterInc.body.data.map((s: any) => s._id), order.slice(10, 13));
    const beforeC = await server.get('/v2/subscribers', { query: { ...q, before: c } });
    assert.deepEqual(beforeC.body.data.map((s: any) => s._id), order.slice(7, 10));
    assert.equal(beforeC.body.next, order[9]);
    assert.equal(beforeC.body.previous, order[7]);
    const beforeInc = await server.get('/v2/subscribers', { query: { ...q, before: c, includeCursor: true } });
    assert.deepEqual(beforeInc.body.data.map((s: any) => s._id), order.slice(8, 11));
    // the first item as `before` cursor: nothing before it
    const none = await server.get('/v2/subscribers', { query: { ...q, before: order[0]! } });
    assert.deepEqual(none.body, { data: [], next: null, previous: null, totalCount: order.length, totalCountCapped: false });
    // the last item as `after` cursor: nothing after it
    const end = await server.get('/v2/subscribers', { query: { ...q, after: order.at(-1)! } });
    assert.deepEqual(end.body.data, []);
    assert.equal(end.body.next, null);
  });

  it('a cursor that does not match the filters still marks a place in the order', async () => {
    const order = expected({}, '_id', 'ASC');
    const filtered = expected({ email: 'mail' }, '_id', 'ASC');
    const c = order.find((id) => !filtered.includes(id) && id > filtered[0]!)!;
    const r = await server.get('/v2/subscribers', { query: { email: 'mail', orderDirection: 'ASC', after: c, limit: 100 } });
    assert.deepEqual(r.body.data.map((s: any) => s._id), filtered.filter((id) => id > c));
  });

  it('400 for after and before together, and for a cursor that is not a subscriber of this environment', async () => {
    const [x, y] = expected({}, '_id', 'ASC');
    const both = expectErrorBody(await server.get('/v2/subscribers', { query: { after: x, before: y } }), 400);
    assert.equal(both.error, 'Bad Request');
    assert.match(both.message, /after.*before|before.*after/);
    expectErrorBody(await server.get('/v2/subscribers', { query: { after: 'ffffffffffffffffffffffff' } }), 400);
    expectErrorBody(await server.get('/v2/subscribers', { query: { before: 'not-an-id' } }), 400);
    // a real _id of another environment is no cursor here
    const inB = (await server.get('/v2/subscribers', { key: KEYS.b, query: { limit: 1 } })).body.data[0]._id;
    expectErrorBody(await server.get('/v2/subscribers', { query: { after: inB } }), 400);
    expectErrorBody(await server.get('/v2/subscribers', { key: KEYS.other, query: { before: x } }), 400);
  });

  it('422 for out-of-range or unknown query values', async () => {
    expect422(await server.get('/v2/subscribers', { query: { limit: 0 } }), 'limit');
    expect422(await server.get('/v2/subscribers', { query: { limit: 101 } }), 'limit');
    expect422(await server.get('/v2/subscribers', { query: { limit: 'ten' } }), 'limit');
    expect422(await server.get('/v2/subscribers', { query: { limit: 2.5 } }), 'limit');
    assert.equal((await server.get('/v2/subscribers', { query: { limit: 100 } })).body.data.length, all.length);
    const ob = expect422(await server.get('/v2/subscribers', { query: { orderBy: 'email' } }), 'orderBy');
    assert.deepEqual(ob.errors.orderBy.messages, ['must be one of: _id, updatedAt, createdAt']);
    expect422(await server.get('/v2/subscribers', { query: { orderDirection: 'asc' } }), 'orderDirection');
    expect422(await server.get('/v2/subscribers', { query: { orderDirection: 'UP' } }), 'orderDirection');
    expect422(await server.get('/v2/subscribers', { query: { includeCursor: 'perhaps' } }), 'includeCursor');
    expect422(await server.get('/v2/subscribers', { query: { email: ['a', 'b'] } }), 'email');
    expect422(await server.get('/v2/subscribers', { query: { after: '' } }), 'after');
    expect422(await server.get('/v2/subscribers', { query: { name: 'n'.repeat(513) } }), 'name');
    expect422(await server.get('/v2/subscribers', { query: { limit: 0, orderBy: 'x' } }), 'limit', 'orderBy');
    // unknown parameters are ignored
    assert.equal((await server.get('/v2/subscribers', { query: { color: 'blue' } })).status, 200);
  });

  it('sees only the key\'s environment', async () => {
    const b = await server.get('/v2/subscribers', { key: KEYS.b, query: { limit: 100 } });
    assert.equal(b.body.totalCount, 6);
    const other = await server.get('/v2/subscribers', { key: KEYS.other, query: { limit: 100, name: 'ada' } });
    for (const s of [...b.body.data, ...other.body.data]) assert.ok(!all.some((x) => x._id === s._id));
  });
});

describe('GET /v2/subscribers: totalCount cap', () => {
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  it('counts up to 50,000 matches, then says the count is capped', async (t) => {
    if (/^postgres/.test(server.dbPath)) return t.skip('bulk fixture written with SQLite');
    const made = await server.post('/v2/subscribers', { subscriberId: 'seed-row' });
    const { _environmentId: env, _organizationId: org } = made.body;
    const { default: SQLite } = await import('better-sqlite3');
    const db = new SQLite(server.dbPath);
    try {
      const insert = db.prepare(
        `INSERT INTO subscribers (id, environment_id, organization_id, subscriber_id, channels, topics, is_online, version, created_at, updated_at, email)
         VALUES (?, ?, ?, ?, '[]', '[]', 0, 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', ?)`,
      );
      db.transaction(() => {
        for (let i = 0; i < 50_000; i++) insert.run(i.toString(16).padStart(24, '0'), env, org, `bulk-${i}`, `bulk${i}@x.test`);
      })();
    } finally {
      db.close();
    }
    const capped = await server.get('/v2/subscribers', { query: { limit: 1 } });
    assert.equal(capped.status, 200);
    assert.equal(capped.body.totalCount, 50_000);
    assert.equal(capped.body.totalCountCapped, true);
    const exact = await server.get('/v2/subscribers', { query: { limit: 1, email: 'bulk4999' } });
    assert.equal(exact.body.totalCount, 11); // bulk4999 and bulk49990..bulk49999
    assert.equal(exact.body.totalCountCapped, false);
  });
});

// ---------------------------------------------------------------------------------------------

describe('PATCH / PUT /v1/subscribers/:subscriberId/credentials', () => {
  let server: TestServer;
  /** The _id of each active integration made below, by its identifier. */
  const integrations: Record<string, string> = {};
  /** An entry as stored: its credentials, and the integration it belongs to. */
  const entry = (providerId: string, credentials: Record<string, unknown>, identifier?: string) => ({
    providerId,
    ...(identifier ? { integrationIdentifier: identifier } : {}),
    credentials,
    _integrationId: integrations[identifier ?? providerId],
  });
  before(async () => {
    server = await startServer();
    for (const id of ['cred-1', 'cred-2', 'cred-3', 'cred-4', 'cred-5', 'cred-6', 'cred-big']) await server.post('/v2/subscribers', { subscriberId: id });
    // Every entry belongs to an active integration of its provider: one of each provider used here.
    const made: [providerId: string, channel: string, identifier: string, credentials: Record<string, string>][] = [
      ['fcm', 'push', 'fcm', { serviceAccount: '{"project_id":"demo"}' }],
      ['fcm', 'push', 'fcm-second', { serviceAccount: '{"project_id":"other"}' }],
      ['apns', 'push', 'apns', { secretKey: 'p8-key', apiKey: 'key-id', projectName: 'team', applicationId: 'app.bundle' }],
      ['expo', 'push', 'expo', { apiKey: 'expo-token' }],
      ['slack', 'chat', 'slack', {}],
      ['slack', 'chat', 'slack-team-b', {}],
      ['discord', 'chat', 'discord', {}],
    ];
    for (const [providerId, channel, identifier, credentials] of made) {
      const r = await server.post('/v1/integrations', { providerId, channel, identifier, credentials, active: true });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      integrations[identifier] = r.body._id;
    }
  });
  after(() => server.dispose());

  it('PATCH appends deviceTokens (set union, order kept) and merges the other fields; 200 with the Subscriber', async () => {
    const first = await server.patch('/v1/subscribers/cred-1/credentials', {
      providerId: 'fcm',
      credentials: { deviceTokens: ['t1', 't2', 't1'], title: 'Phone' },
    });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.subscriberId, 'cred-1');
    assert.deepEqual(first.body.channels, [entry('fcm', { deviceTokens: ['t1', 't2'], title: 'Phone' })]);
    const second = await server.patch('/v1/subscribers/cred-1/credentials', {
      providerId: 'fcm',
      credentials: { deviceTokens: ['t3', 't1'], state: 'on' },
    });
    assert.equal(second.status, 200);
    assert.deepEqual(second.body.channels, [entry('fcm', { deviceTokens: ['t1', 't2', 't3'], title: 'Phone', state: 'on' })]);
    assert.equal(second.body.__v, first.body.__v + 1);
    assert.deepEqual((await server.get('/v2/subscribers/cred-1')).body.channels, second.body.channels);
  });

  it('PUT replaces the entry\'s credentials', async () => {
    await server.patch('/v1/subscribers/cred-2/credentials', { providerId: 'apns', credentials: { deviceTokens: ['a', 'b'], title: 'Old' } });
    const r = await server.put('/v1/subscribers/cred-2/credentials', { providerId: 'apns', credentials: { deviceTokens: ['c', 'c'] } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.channels, [entry('apns', { deviceTokens: ['c'] })]);
    const empty = await server.put('/v1/subscribers/cred-2/credentials', { providerId: 'apns', credentials: {} });
    assert.deepEqual(empty.body.channels, [entry('apns', {})]);
  });

  it('keeps one entry per (providerId, integrationIdentifier)', async () => {
    await server.patch('/v1/subscribers/cred-3/credentials', { providerId: 'slack', credentials: { webhookUrl: 'https://hooks.example.test/1' } });
    await server.patch('/v1/subscribers/cred-3/credentials', {
      providerId: 'slack',
      integrationIdentifier: 'slack-team-b',
      credentials: { webhookUrl: 'https://hooks.example.test/2' },
    });
    await server.put('/v1/subscribers/cred-3/credentials', { providerId: 'discord', credentials: { webhookUrl: 'http://discord.example.test/x' } });
    const r = await server.patch('/v1/subscribers/cred-3/credentials', { providerId: 'slack', credentials: { channel: '#general' } });
    assert.deepEqual(r.body.channels, [
      entry('slack', { webhookUrl: 'https://hooks.example.test/1', channel: '#general' }),
      entry('slack', { webhookUrl: 'https://hooks.example.test/2' }, 'slack-team-b'),
      entry('discord', { webhookUrl: 'http://discord.example.test/x' }),
    ]);
    const put = await server.put('/v1/subscribers/cred-3/credentials', {
      providerId: 'slack',
      integrationIdentifier: 'slack-team-b',
      credentials: { webhookUrl: 'https://hooks.example.test/3' },
    });
    assert.equal(put.body.channels.length, 3);
    assert.deepEqual(put.body.channels[1].credentials, { webhookUrl: 'https://hooks.example.test/3' });
  });

  it('an entry belongs to the active integration its identifier (or else its provider) names; 400 naming the provider without one, nothing stored', async () => {
    const byIdentifier = await server.patch('/v1/subscribers/cred-4/credentials', {
      providerId: 'fcm',
      integrationIdentifier: 'fcm-second',
      credentials: { deviceTokens: ['x'] },
    });
    assert.equal(byIdentifier.status, 200, JSON.stringify(byIdentifier.body));
    assert.deepEqual(byIdentifier.body.channels, [entry('fcm', { deviceTokens: ['x'] }, 'fcm-second')]);
    const byProvider = await server.put('/v1/subscribers/cred-5/credentials', { providerId: 'fcm', credentials: { deviceTokens: ['y'] } });
    assert.equal(byProvider.body.channels[0]._integrationId, integrations.fcm);
    const inactive = await server.post('/v1/integrations', { providerId: 'one-signal', channel: 'push', identifier: 'one-signal-off', active: false });
    assert.equal(inactive.status, 201, JSON.stringify(inactive.body));
    const refused = [
      { providerId: 'fcm', integrationIdentifier: 'no-such-integration', credentials: {} },
      { providerId: 'pushpad', credentials: {} },
      { providerId: 'one-signal', credentials: { deviceTokens: ['z'] } },
    ];
    for (const body of refused) {
      const b = expectErrorBody(await server.put('/v1/subscribers/cred-5/credentials', body), 400);
      assert.match(b.message, new RegExp(`No active ${body.providerId} integration`));
    }
    assert.deepEqual((await server.get('/v2/subscribers/cred-5')).body.channels, byProvider.body.channels, 'nothing stored');
    // an integration of another environment is not used
    await server.post('/v2/subscribers', { subscriberId: 'cred-b' }, { key: KEYS.b });
    expectErrorBody(await server.put('/v1/subscribers/cred-b/credentials', { providerId: 'fcm', integrationIdentifier: 'fcm-second', credentials: {} }, { key: KEYS.b }), 400);
  });

  it('422 when a subscriber\'s credentials would pass 64 KB of JSON, however many requests built them; nothing stored', async () => {
    const tokens = (from: number) => Array.from({ length: 10 }, (_, i) => `${from + i}`.padEnd(4000, 'x'));
    const path = '/v1/subscribers/cred-big/credentials';
    assert.equal((await server.patch(path, { providerId: 'fcm', credentials: { deviceTokens: tokens(0) } })).status, 200);
    const before = (await server.get('/v2/subscribers/cred-big')).body;
    for (const body of [
      { providerId: 'fcm', credentials: { deviceTokens: tokens(100) } },
      { providerId: 'fcm', integrationIdentifier: 'fcm-second', credentials: { deviceTokens: tokens(200) } },
      { providerId: 'apns', credentials: { deviceTokens: tokens(300) } },
    ]) {
      const b = expectErrorBody(await server.patch(path, body), 422);
      assert.match(b.message, /65536 bytes/);
      assert.ok(b.errors.credentials, JSON.stringify(b.errors));
      assert.equal(b.errors.credentials.value, null, 'nothing echoed back');
    }
    assert.deepEqual((await server.get('/v2/subscribers/cred-big')).body, before, 'nothing stored');
    // Tokens it already holds add nothing; PUT replaces, and may shrink what it holds.
    assert.equal((await server.patch(path, { providerId: 'fcm', credentials: { deviceTokens: tokens(0).slice(0, 5) } })).status, 200);
    const replaced = await server.put(path, { providerId: 'fcm', credentials: { deviceTokens: tokens(100).slice(0, 2) } });
    assert.equal(replaced.status, 200);
    assert.deepEqual(replaced.body.channels[0].credentials.deviceTokens, tokens(100).slice(0, 2));
  });

  it('concurrent PATCHes lose nothing', async () => {
    // More than the update's attempts: each must wait its turn, not run out of tries.
    const tokens = Array.from({ length: 30 }, (_, i) => `tok-${i}`);
    const replies = await Promise.all(
      tokens.map((t) => server.patch('/v1/subscribers/cred-6/credentials', { providerId: 'expo', credentials: { deviceTokens: [t] } })),
    );
    for (const r of replies) assert.equal(r.status, 200, JSON.stringify(r.body));
    const s = (await server.get('/v2/subscribers/cred-6')).body;
    assert.equal(s.channels.length, 1);
    assert.deepEqual([...s.channels[0].credentials.deviceTokens].sort(), [...tokens].sort());
  });

  it('422 for a providerId outside the chat/push list, missing fields, wrong types', async () => {
    for (const method of ['patch', 'put'] as const) {
      const bad = expect422(await server[method]('/v1/subscribers/cred-1/credentials', { providerId: 'sendgrid', credentials: {} }), 'providerId');
      assert.match(bad.errors.providerId.messages[0], /^must be one of: slack, discord/);
      assert.equal(bad.errors.providerId.value, 'sendgrid');
      expect422(await server[method]('/v1/subscribers/cred-1/credentials', { credentials: {} }), 'providerId');
      expect422(await server[method]('/v1/subscribers/cred-1/credentials', { providerId: 'fcm' }), 'credentials');
      expect422(await server[method]('/v1/subscribers/cred-1/credentials', { providerId: 'fcm', credentials: [] }), 'credentials');
      expect422(await server[method]('/v1/subscribers/cred-1/credentials', { providerId: 'fcm', credentials: 'x' }), 'credentials');
      expect422(await server[method]('/v1/subscribers/cred-1/credentials', { providerId: 'fcm', credentials: { deviceTokens: 'abc' } }), 'credentials.deviceTokens');
      expect422(await server[method]('/v1/subscribers/cred-1/credentials', { providerId: 'fcm', credentials: { deviceTokens: [1] } }), 'credentials.deviceTokens.0');
      expect422(await server[method]('/v1/subscribers/cred-1/credentials', { providerId: 'fcm', credentials: { deviceTokens: [''] } }), 'credentials.deviceTokens.0');
      expect422(
        await server[method]('/v1/subscribers/cred-1/credentials', { providerId: 'fcm', credentials: { deviceTokens: Array.from({ length: 501 }, (_, i) => `d${i}`) } }),
        'credentials.deviceTokens',
      );
      expect422(await server[method]('/v1/subscribers/cred-1/credentials', { providerId: 'fcm', integrationIdentifier: 5, credentials: {} }), 'integrationIdentifier');
      expect422(await server[method]('/v1/subscribers/cred-1/credentials', { providerId: 'slack', credentials: { title: { a: 1 } } }), 'credentials.title');
      expect422(await server[method]('/v1/subscribers/cred-1/credentials', [1]), 'body');
    }
    // nothing was stored by the refused requests
    const s = (await server.get('/v2/subscribers/cred-1')).body;
    assert.deepEqual(s.channels.map((c: any) => c.providerId), ['fcm']);
  });

  it('422 unless webhookUrl, imageUrl and externalUrl are http(s) URLs', async () => {
    const bad = ['javascript:alert(1)', 'ftp://files.example.test/x', 'not a url', 'data:text/html,<b>x</b>', '//example.test/x', 'http://'];
    for (const field of ['webhookUrl', 'imageUrl', 'externalUrl']) {
      for (const value of bad) {
        const r = expect422(
          await server.patch('/v1/subscribers/cred-1/credentials', { providerId: 'slack', credentials: { [field]: value } }),
          `credentials.${field}`,
        );
        assert.equal(r.errors[`credentials.${field}`].value, value);
      }
      expect422(await server.put('/v1/subscribers/cred-1/credentials', { providerId: 'slack', credentials: { [field]: 'h'.repeat(2049) } }), `credentials.${field}`);
      const ok = await server.put('/v1/subscribers/cred-1/credentials', { providerId: 'slack', credentials: { [field]: 'HTTPS://Example.test/ok?x=1' } });
      assert.equal(ok.status, 200);
    }
    const two = expect422(
      await server.put('/v1/subscribers/cred-1/credentials', { providerId: 'slack', credentials: { webhookUrl: 'javascript:x', imageUrl: 'mailto:a@b' } }),
      'credentials.webhookUrl', 'credentials.imageUrl',
    );
    assert.equal(Object.keys(two.errors).length, 2);
  });

  it('404 for an unknown subscriber, and for one of another environment or organization', async () => {
    const body = { providerId: 'fcm', credentials: { deviceTokens: ['z'] } };
    expectErrorBody(await server.patch('/v1/subscribers/nobody/credentials', body), 404);
    expectErrorBody(await server.put('/v1/subscribers/nobody/credentials', body), 404);
    for (const key of [KEYS.b, KEYS.other]) {
      expectErrorBody(await server.patch('/v1/subscribers/cred-1/credentials', body, { key }), 404);
      expectErrorBody(await server.put('/v1/subscribers/cred-1/credentials', body, { key }), 404);
    }
    const s = (await server.get('/v2/subscribers/cred-1')).body;
    assert.ok(!JSON.stringify(s.channels).includes('"z"'));
  });
});

// ---------------------------------------------------------------------------------------------

describe('GET /v2/subscribers/:subscriberId/preferences', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    const a = (await server.post('/v2/subscribers', { subscriberId: 'pref-1' })).body;
    const b = (await server.post('/v2/subscribers', { subscriberId: 'pref-b' }, { key: KEYS.b })).body;
    // Workflows as POST /v2/workflows stores them.
    const add = (s: any, id: string, workflowId: string, name: string, types: string[], critical: number, created: string) =>
      sqlOn(
        server,
        `INSERT INTO workflows (id, environment_id, organization_id, workflow_id, name, description, steps, tags, active, critical, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, NULL, ?, '[]', 1, ?, ?, ?)`,
        [
          id, s._environmentId, s._organizationId, workflowId, name,
          JSON.stringify(types.map((type, i) => ({ _id: `${id.slice(0, 20)}${String(i).padStart(4, '0')}`, name: `step ${i}`, type, controlValues: {} }))),
          critical, created, created,
        ],
      );
    await add(a, 'aaaaaaaaaaaaaaaaaaaa0001', 'welcome', 'Welcome', ['in_app', 'email', 'in_app'], 0, '2026-01-01T00:00:01.000Z');
    await add(a, 'aaaaaaaaaaaaaaaaaaaa0002', 'security-alert', 'Security alert', ['sms', 'delay', 'push'], 1, '2026-01-01T00:00:02.000Z');
    await add(a, 'aaaaaaaaaaaaaaaaaaaa0003', 'digest-only', 'Digest only', ['digest', 'in_app'], 0, '2026-01-01T00:00:03.000Z');
    await add(b, 'bbbbbbbbbbbbbbbbbbbb0001', 'staging-only', 'Staging only', ['chat'], 0, '2026-01-01T00:00:01.000Z');
  });
  after(() => server.dispose());

  const slugs = (r: Reply) => r.body.workflows.map((w: any) => w.workflow.identifier);

  it('defaults to nonCritical workflows, each with its channel steps enabled', async () => {
    const r = await server.get('/v2/subscribers/pref-1/preferences');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      global: { enabled: true, channels: { in_app: true, email: true, sms: true, push: true } },
      workflows: [
        {
          enabled: true,
          channels: { in_app: true, email: true },
          overrides: [],
          workflow: { slug: 'welcome', identifier: 'welcome', name: 'Welcome' },
        },
        {
          enabled: true,
          channels: { in_app: true },
          overrides: [],
          workflow: { slug: 'digest-only', identifier: 'digest-only', name: 'Digest only' },
        },
      ],
    });
    assert.deepEqual(slugs(await server.get('/v2/subscribers/pref-1/preferences', { query: { criticality: 'nonCritical' } })), ['welcome', 'digest-only']);
  });

  it('criticality=critical and =all', async () => {
    const critical = await server.get('/v2/subscribers/pref-1/preferences', { query: { criticality: 'critical' } });
    assert.deepEqual(slugs(critical), ['security-alert']);
    assert.deepEqual(critical.body.workflows[0].channels, { sms: true, push: true });
    const all = await server.get('/v2/subscribers/pref-1/preferences', { query: { criticality: 'all' } });
    assert.deepEqual(slugs(all), ['welcome', 'security-alert', 'digest-only']);
  });

  it('shows only the key\'s environment\'s workflows', async () => {
    const b = await server.get('/v2/subscribers/pref-b/preferences', { key: KEYS.b, query: { criticality: 'all' } });
    assert.deepEqual(slugs(b), ['staging-only']);
    assert.deepEqual(b.body.global.channels, { chat: true });
  });

  it('422 for an unknown criticality; 404 for an unknown subscriber or one of another environment', async () => {
    const r = expect422(await server.get('/v2/subscribers/pref-1/preferences', { query: { criticality: 'urgent' } }), 'criticality');
    assert.deepEqual(r.errors.criticality.messages, ['must be one of: critical, nonCritical, all']);
    expectErrorBody(await server.get('/v2/subscribers/nobody/preferences'), 404);
    expectErrorBody(await server.get('/v2/subscribers/pref-1/preferences', { key: KEYS.b }), 404);
    expectErrorBody(await server.get('/v2/subscribers/pref-1/preferences', { key: KEYS.other }), 404);
  });
});

// ---------------------------------------------------------------------------------------------

describe('PATCH / DELETE /v2/subscribers/:subscriberId, POST /v1/subscribers/bulk, PATCH /v2/.../preferences (Novu\'s paths)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createWorkflow(server, { workflowId: 'again', name: 'Again', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hello {{payload.n}}' } }] });
    await createWorkflow(server, { workflowId: 'must', name: 'Must', critical: true, steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'x' } }] });
  });
  after(() => server.dispose());

  it('a subscriber removed and made again has only its new messages, in its feed and its unseen count', async () => {
    await triggerEvent(server, { name: 'again', to: 'phoenix', payload: { n: 1 } });
    assert.equal(await unseenCount(server, 'phoenix'), 1);
    const removed = await server.delete('/v2/subscribers/phoenix');
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.deepEqual(removed.body, { acknowledged: true, status: 'deleted' });
    expectErrorBody(await server.get('/v1/subscribers/phoenix/notifications/unseen'), 404);
    const t = await triggerEvent(server, { name: 'again', to: 'phoenix', payload: { n: 2 } });
    assert.deepEqual((await getFeed(server, 'phoenix')).data.map((m) => [m.transactionId, m.content]), [[t.transactionId, 'Hello 2']]);
    assert.equal(await unseenCount(server, 'phoenix'), 1);
  });

  it('404 for an unknown subscriber or one of another environment; 422 for bad bodies; nothing changed', async () => {
    await server.post('/v2/subscribers', { subscriberId: 'kept', firstName: 'Kept' });
    for (const key of [KEYS.a, KEYS.b, KEYS.other]) {
      const id = key === KEYS.a ? 'nobody' : 'kept';
      expectErrorBody(await server.patch(`/v2/subscribers/${id}`, { firstName: 'X' }, { key }), 404);
      expectErrorBody(await server.delete(`/v2/subscribers/${id}`, { key }), 404);
    }
    expect422(await server.patch('/v2/subscribers/kept', { firstName: 5 }), 'firstName');
    // (A subscriberId in the body is not a field PATCH changes: it is dropped, as unknown keys are.)
    assert.equal((await server.patch('/v2/subscribers/kept', { subscriberId: 'renamed' })).body.subscriberId, 'kept');
    const tooMany = Array.from({ length: 501 }, (_, i) => ({ subscriberId: `many-${i}` }));
    expect422(await server.post('/v1/subscribers/bulk', { subscribers: tooMany }), 'subscribers');
    expect422(await server.post('/v1/subscribers/bulk', { subscribers: [{ firstName: 'no id' }] }), 'subscribers.0.subscriberId');
    expectErrorBody(await server.get('/v2/subscribers/many-0'), 404);
    assert.equal((await server.get('/v2/subscribers/kept')).body.firstName, 'Kept');
  });

  it('preferences at /v2: 404 for an unknown workflow, 422 for a critical one or a bad body; a workflow named by its _id', async () => {
    await server.post('/v2/subscribers', { subscriberId: 'choosy' });
    expectErrorBody(await server.patch('/v2/subscribers/choosy/preferences', { workflowId: 'no-such', channels: { in_app: false } }), 404);
    expectErrorBody(await server.patch('/v2/subscribers/choosy/preferences', { workflowId: 'must', channels: { in_app: false } }), 422);
    expect422(await server.patch('/v2/subscribers/choosy/preferences', { channels: { in_app: 'no' } }), 'channels.in_app');
    expectErrorBody(await server.patch('/v2/subscribers/choosy/preferences/bulk', { preferences: [{ workflowId: 'again', channels: { in_app: false } }, { workflowId: 'must', channels: { in_app: false } }] }), 422);
    const untouched = (await server.get('/v2/subscribers/choosy/preferences')).body;
    assert.equal(untouched.workflows.find((w: any) => w.workflow.identifier === 'again').channels.in_app, true, 'a refused bulk change changes nothing');
    const workflowRowId = (await server.get('/v2/workflows/again')).body._id;
    const byId = await server.patch('/v2/subscribers/choosy/preferences', { workflowId: workflowRowId, channels: { in_app: false } });
    assert.equal(byId.status, 200, JSON.stringify(byId.body));
    assert.equal(byId.body.workflows.find((w: any) => w.workflow.identifier === 'again').channels.in_app, false);
  });
});
