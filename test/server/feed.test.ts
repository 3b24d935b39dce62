import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, KEYS, startServer, type TestServer } from './helpers.ts';
import { allMessages, b64, getFeed, inAppWorkflow, sendMessages, triggerEvent, unseenCount } from './fixtures.ts';

const feedPath = (s: string) => `/v1/subscribers/${s}/notifications/feed`;
const unseenPath = (s: string) => `/v1/subscribers/${s}/notifications/unseen`;

describe('GET /v1/subscribers/:subscriberId/notifications/feed', () => {
  let server: TestServer;
  /** The 30 transactionIds sent to 'pager', oldest first. */
  let sent: string[];
  before(async () => {
    server = await startServer();
    await inAppWorkflow(server, 'note', { subject: 'Note {{payload.i}}', body: 'Body {{payload.i}}' });
    await inAppWorkflow(server, 'billing', { body: 'Bill {{payload.i}}', feedIdentifier: 'billing' });
    await inAppWorkflow(server, 'social', { body: 'Social {{payload.i}}', feedIdentifier: 'social' });
    sent = await sendMessages(server, { workflowId: 'note', subscriberId: 'pager', count: 30 });
  });
  after(() => server.dispose());

  it('pages of 7 over 30 messages reach the last page with no duplicates, newest first', async () => {
    const seen: string[] = [];
    const transactions: string[] = [];
    for (let page = 0; page < 5; page++) {
      const body = await getFeed(server, 'pager', { page, limit: 7 });
      assert.equal(body.totalCount, 30);
      assert.equal(body.pageSize, 7);
      assert.equal(body.page, page);
      assert.equal(body.data.length, page < 4 ? 7 : 2);
      assert.equal(body.hasMore, page < 4);
      seen.push(...body.data.map((m) => m._id));
      transactions.push(...body.data.map((m) => m.transactionId));
    }
    assert.equal(new Set(seen).size, 30);
    assert.deepEqual(transactions, [...sent].reverse());
    const past = await getFeed(server, 'pager', { page: 5, limit: 7 });
    assert.deepEqual(past.data, []);
    assert.equal(past.totalCount, 30);
    assert.equal(past.hasMore, false);
  });

  it('orders by createdAt desc, then _id desc', async () => {
    const { data } = await getFeed(server, 'pager', { limit: 100 });
    for (let i = 1; i < data.length; i++) {
      const [a, b] = [data[i - 1], data[i]];
      assert.ok(a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a._id > b._id), `${i}: ${a.createdAt}/${a._id} before ${b.createdAt}/${b._id}`);
    }
    assert.equal(data[0].subject, 'Note 29');
  });

  it('defaults to page 0 and limit 10, and embeds subscriber and template in every message', async () => {
    const body = await getFeed(server, 'pager');
    assert.equal(body.page, 0);
    assert.equal(body.pageSize, 10);
    assert.equal(body.data.length, 10);
    assert.equal(body.hasMore, true);
    for (const m of body.data) {
      assert.equal(m.subscriber.subscriberId, 'pager');
      assert.equal(m.template._id, m._templateId);
      assert.equal(m.template.triggers[0].identifier, 'note');
      assert.equal(m.channel, 'in_app');
    }
  });

  it('filters by read and seen', async () => {
    await sendMessages(server, { workflowId: 'note', subscriberId: 'flags', count: 6 });
    const all = await allMessages(server, 'flags');
    // Oldest two read (and so seen), the next two only seen, the newest two untouched.
    const [n5, n4, n3, n2, n1, n0] = all.map((m) => m._id);
    void n5;
    void n4;
    await server.post('/v1/subscribers/flags/messages/mark-as', { messageId: [n0, n1], markAs: 'read' });
    await server.post('/v1/subscribers/flags/messages/mark-as', { messageId: [n2, n3], markAs: 'seen' });
    const ids = async (query: Record<string, unknown>) => (await getFeed(server, 'flags', query)).data.map((m) => m._id);
    assert.deepEqual(await ids({ read: true }), [n1, n0]);
    assert.deepEqual(await ids({ read: false }), [all[0]._id, all[1]._id, n3, n2]);
    assert.deepEqual(await ids({ seen: true }), [n3, n2, n1, n0]);
    assert.deepEqual(await ids({ seen: false }), [all[0]._id, all[1]._id]);
    assert.deepEqual(await ids({ seen: true, read: false }), [n3, n2]);
    const counted = await getFeed(server, 'flags', { seen: true, limit: 3 });
    assert.equal(counted.totalCount, 4);
    assert.equal(counted.hasMore, true);
  });

  it('filters by a base64 JSON payload: partial, nested, typed', async () => {
    const payloads = [
      { kind: 'a', post: { id: 1, tags: ['x', 'y'], meta: { lang: 'en' } }, flag: true, n: 5 },
      { kind: 'a', post: { id: 2, tags: ['x'], meta: { lang: 'fr' } }, flag: false, n: '5' },
      { kind: 'b', post: { id: 1 }, other: null, n: 5.5 },
    ];
    await sendMessages(server, { workflowId: 'note', subscriberId: 'payloads', count: 3, payload: (i) => payloads[i]! });
    const kinds = async (filter: unknown) =>
      (await getFeed(server, 'payloads', { payload: b64(filter) })).data.map((m) => payloads.findIndex((p) => JSON.stringify(p) === JSON.stringify(m.payload)));
    assert.deepEqual(await kinds({ kind: 'a' }), [1, 0]);
    assert.deepEqual(await kinds({ post: { id: 1 } }), [2, 0]);
    assert.deepEqual(await kinds({ kind: 'a', post: { meta: { lang: 'en' } } }), [0]);
    assert.deepEqual(await kinds({ post: { tags: ['x', 'y'] } }), [0]);
    assert.deepEqual(await kinds({ flag: true }), [0]);
    assert.deepEqual(await kinds({ flag: false }), [1]);
    assert.deepEqual(await kinds({ n: 5 }), [0]);
    assert.deepEqual(await kinds({ n: '5' }), [1]);
    assert.deepEqual(await kinds({ n: 5.5 }), [2]);
    assert.deepEqual(await kinds({ other: null }), [2]);
    assert.deepEqual(await kinds({ post: {} }), [2, 1, 0]);
    assert.deepEqual(await kinds({}), [2, 1, 0]);
    assert.deepEqual(await kinds({ kind: 'c' }), []);
    assert.deepEqual(await kinds({ 'dotted.key': 1 }), []);
    const body = await getFeed(server, 'payloads', { payload: b64({ kind: 'a' }), limit: 1 });
    assert.equal(body.totalCount, 2);
    assert.equal(body.hasMore, true);
    // URL-safe base64 works as well.
    const urlSafe = b64({ kind: 'b' }).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    assert.equal((await getFeed(server, 'payloads', { payload: urlSafe })).totalCount, 1);
  });

  it('answers 400 for a payload that is not base64 of a JSON object', async () => {
    for (const payload of ['%%%not-base64%%%', 'a', b64('not json'), b64('[1,2]'), b64('"text"'), b64('42'), b64('null')]) {
      const r = await server.get(feedPath('payloads'), { query: { payload } });
      const b = expectErrorBody(r, 400);
      assert.match(b.message, /payload/, payload);
    }
  });

  it('limits to the given feed identifiers: string, comma-separated, repeated, unknown', async () => {
    await sendMessages(server, { workflowId: 'billing', subscriberId: 'feeds', count: 2 });
    await sendMessages(server, { workflowId: 'social', subscriberId: 'feeds', count: 3 });
    await sendMessages(server, { workflowId: 'note', subscriberId: 'feeds', count: 1 });
    const count = async (feedIdentifier: unknown) => (await getFeed(server, 'feeds', { feedIdentifier })).totalCount;
    assert.equal(await count(undefined), 6);
    assert.equal(await count('billing'), 2);
    assert.equal(await count('social'), 3);
    assert.equal(await count('billing,social'), 5);
    assert.equal(await count(['billing', 'social']), 5);
    assert.equal(await count('nope'), 0);
    assert.equal(await count(['nope', 'billing']), 2);
    const billing = await getFeed(server, 'feeds', { feedIdentifier: 'billing' });
    assert.ok(billing.data.every((m) => m.content.startsWith('Bill')));
  });

  const invalid: [string, Record<string, string | number>, string][] = [
    ['limit 0', { limit: 0 }, 'limit'],
    ['limit 101', { limit: 101 }, 'limit'],
    ['limit not a number', { limit: 'ten' }, 'limit'],
    ['limit fractional', { limit: 1.5 }, 'limit'],
    ['page -1', { page: -1 }, 'page'],
    ['page not a number', { page: 'first' }, 'page'],
    ['read not a boolean', { read: 'maybe' }, 'read'],
    ['seen not a boolean', { seen: 'sometimes' }, 'seen'],
  ];
  for (const [title, query, field] of invalid) {
    it(`answers 422 for ${title}`, async () => {
      const b = expectErrorBody(await server.get(feedPath('pager'), { query }), 422);
      assert.ok(b.errors[field], JSON.stringify(b.errors));
    });
  }

  it('accepts limit 100 and 1', async () => {
    assert.equal((await getFeed(server, 'pager', { limit: 100 })).data.length, 30);
    assert.equal((await getFeed(server, 'pager', { limit: 1 })).data.length, 1);
  });

  it('answers 404 for an unknown subscriber and for another environment\'s', async () => {
    expectErrorBody(await server.get(feedPath('nobody')), 404);
    expectErrorBody(await server.get(feedPath('pager'), { key: KEYS.b }), 404);
    expectErrorBody(await server.get(feedPath('pager'), { key: KEYS.other }), 404);
  });

  it('keeps environments apart for subscribers with the same subscriberId', async () => {
    await inAppWorkflow(server, 'note', { body: 'Staging {{payload.i}}' }, KEYS.b);
    await triggerEvent(server, { name: 'note', to: 'pager', payload: { i: 1 } }, KEYS.b);
    const staging = await getFeed(server, 'pager', {}, KEYS.b);
    assert.equal(staging.totalCount, 1);
    assert.equal(staging.data[0].content, 'Staging 1');
    assert.equal((await getFeed(server, 'pager')).totalCount, 30);
  });
});

describe('GET /v1/subscribers/:subscriberId/notifications/unseen', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await inAppWorkflow(server, 'note', { body: 'Body {{payload.i}}' });
    await sendMessages(server, { workflowId: 'note', subscriberId: 'counter', count: 12 });
  });
  after(() => server.dispose());

  it('counts unseen in-app messages (seen=false by default)', async () => {
    assert.equal(await unseenCount(server, 'counter'), 12);
    assert.equal(await unseenCount(server, 'counter', { seen: false }), 12);
    assert.equal(await unseenCount(server, 'counter', { seen: true }), 0);
    const [a, b, c] = (await getFeed(server, 'counter')).data.map((m) => m._id);
    await server.post('/v1/subscribers/counter/messages/mark-as', { messageId: [a, b, c], markAs: 'seen' });
    assert.equal(await unseenCount(server, 'counter'), 9);
    assert.equal(await unseenCount(server, 'counter', { seen: true }), 3);
  });

  it('caps the count at limit', async () => {
    assert.equal(await unseenCount(server, 'counter', { limit: 5 }), 5);
    assert.equal(await unseenCount(server, 'counter', { limit: 1 }), 1);
    assert.equal(await unseenCount(server, 'counter', { limit: 1000 }), 9);
  });

  it('answers 422 for a bad limit or seen', async () => {
    for (const query of [{ limit: 0 }, { limit: 1001 }, { limit: 'x' }, { seen: 'perhaps' }]) {
      const b = expectErrorBody(await server.get(unseenPath('counter'), { query }), 422);
      assert.ok(Object.keys(b.errors).length > 0);
    }
  });

  it('answers 404 for an unknown subscriber and for another environment\'s', async () => {
    expectErrorBody(await server.get(unseenPath('nobody')), 404);
    expectErrorBody(await server.get(unseenPath('counter'), { key: KEYS.b }), 404);
  });
});
