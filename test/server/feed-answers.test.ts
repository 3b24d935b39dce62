import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { expectErrorBody, KEYS, ON_TIME_MS, sqlOn, TestServer } from './helpers.ts';
import { createWorkflow, delayedInAppWorkflow, getFeed, inAppWorkflow, triggerEvent } from './fixtures.ts';

// The feed's answers (server/src/inbox/answer.ts): every write a feed answer shows makes the next
// answer fresh, whoever wrote it (another process on the database too); environments never share
// answers; ETag and 304 (the tag a hash of the answer); a projection's made-up names change
// nothing. Both databases.

const feedPath = (s: string) => `/v1/subscribers/${s}/notifications/feed`;

/** Reads a feed page twice: nothing changed between, so the same answer and the same tag. */
async function keptFeed(server: TestServer, subscriberId: string, query: Record<string, any> = {}, key: string = KEYS.a) {
  const first = await getFeed(server, subscriberId, query, key);
  const again = await getFeed(server, subscriberId, query, key);
  assert.deepEqual(again, first);
  return first;
}

const start = (env: Record<string, string> = {}, dbPath?: string, args: string[] = []) =>
  new TestServer({ NOTIF_SCHEDULER_POLL_MS: '100', ...env }, dbPath).start(['--no-seed', ...args]);

describe('feed answers: every writer makes the next answer fresh', () => {
  let server: TestServer;
  before(async () => {
    server = await start();
    await inAppWorkflow(server, 'cache-note', { subject: 'Note {{payload.i}}', body: 'Body {{payload.i}}', primaryAction: { label: 'Open' } });
    await delayedInAppWorkflow(server, 'cache-later', 1, 'later', 'later');
  });
  after(() => server.dispose());

  /** A subscriber of its own with `count` messages (oldest first: i = 0..count-1). */
  const inbox = async (subscriberId: string, count = 3) => {
    const transactions = [];
    for (let i = 0; i < count; i++) transactions.push((await triggerEvent(server, { name: 'cache-note', to: subscriberId, payload: { i } })).transactionId);
    return transactions;
  };

  /** The feed once a step due in a second has run (it holds more than `before`), or as it is once that is past due. */
  const afterScheduled = async (subscriberId: string, before: Awaited<ReturnType<typeof getFeed>>) => {
    const deadline = Date.now() + 1000 + ON_TIME_MS;
    let body = before;
    while (body.totalCount === before.totalCount && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      body = await getFeed(server, subscriberId);
    }
    return body;
  };

  it('a trigger (one subscriber, and several at once)', async () => {
    await inbox('w-trigger', 2);
    await triggerEvent(server, { name: 'cache-note', to: 'w-trigger-2', payload: { i: 0 } });
    const before = await keptFeed(server, 'w-trigger');
    const other = await keptFeed(server, 'w-trigger-2');
    await triggerEvent(server, { name: 'cache-note', to: 'w-trigger', payload: { i: 2 } });
    const after = await getFeed(server, 'w-trigger');
    assert.equal(after.totalCount, before.totalCount + 1);
    assert.equal(after.data[0].subject, 'Note 2');
    await triggerEvent(server, { name: 'cache-note', to: ['w-trigger', 'w-trigger-2'], payload: { i: 3 } });
    assert.equal((await getFeed(server, 'w-trigger')).data[0].subject, 'Note 3');
    const both = await getFeed(server, 'w-trigger-2');
    assert.equal(both.totalCount, other.totalCount + 1);
    assert.equal(both.data[0].subject, 'Note 3');
  });

  it('a delayed step run by the scheduler', async () => {
    await inbox('w-delay', 1);
    await triggerEvent(server, { name: 'cache-later', to: 'w-delay' });
    const before = await keptFeed(server, 'w-delay');
    assert.equal(before.totalCount, 1);
    const body = await afterScheduled('w-delay', before);
    assert.equal(body.totalCount, 2, 'the delayed message shows in the feed');
    assert.equal(body.data[0].content, 'later');
  });

  it('a digest step run by the scheduler', async () => {
    await createWorkflow(server, {
      workflowId: 'cache-digest',
      name: 'digest',
      steps: [
        { name: 'collect', type: 'digest', controlValues: { amount: 1, unit: 'seconds' } },
        { name: 'inbox', type: 'in_app', controlValues: { body: '{{step.events.length}} events' } },
      ],
    });
    await inbox('w-digest', 1);
    for (let i = 0; i < 2; i++) await triggerEvent(server, { name: 'cache-digest', to: 'w-digest', payload: { i } });
    const before = await keptFeed(server, 'w-digest');
    assert.equal(before.totalCount, 1);
    const body = await afterScheduled('w-digest', before);
    assert.equal(body.totalCount, 2, 'the digest shows in the feed');
    assert.equal(body.data[0].content, '2 events');
  });

  it('mark-as, mark-all and the unread tab', async () => {
    await inbox('w-mark', 3);
    const all = await keptFeed(server, 'w-mark');
    await keptFeed(server, 'w-mark', { read: false });
    const r = await server.post('/v1/subscribers/w-mark/messages/mark-as', { messageId: all.data[0]._id, markAs: 'read' });
    assert.equal(r.status, 201);
    assert.equal((await getFeed(server, 'w-mark')).data[0].read, true);
    assert.equal((await getFeed(server, 'w-mark', { read: false })).totalCount, 2);
    await keptFeed(server, 'w-mark');
    const m = await server.post('/v1/subscribers/w-mark/messages/mark-all', { markAs: 'seen' });
    assert.equal(m.status, 201);
    assert.ok((await getFeed(server, 'w-mark')).data.every((msg) => msg.seen));
  });

  it('an action', async () => {
    await inbox('w-action', 1);
    const before = await keptFeed(server, 'w-action');
    assert.equal(before.data[0].cta.action.status, 'pending');
    const r = await server.post(`/v1/subscribers/w-action/messages/${before.data[0]._id}/actions/primary`, { status: 'done' });
    assert.equal(r.status, 201);
    assert.equal((await getFeed(server, 'w-action')).data[0].cta.action.status, 'done');
  });

  it('a delete, by id and by transaction', async () => {
    const transactions = await inbox('w-delete', 3);
    const before = await keptFeed(server, 'w-delete');
    assert.equal((await server.delete(`/v1/messages/${before.data[0]._id}`)).status, 200);
    const after = await getFeed(server, 'w-delete');
    assert.equal(after.totalCount, 2);
    assert.ok(!after.data.some((m) => m._id === before.data[0]._id));
    await keptFeed(server, 'w-delete');
    assert.equal((await server.delete(`/v1/messages/transaction/${transactions[0]}`)).status, 204);
    assert.equal((await getFeed(server, 'w-delete')).totalCount, 1);
  });

  it('the subscriber embedded in every message: its update, by the API and by a trigger', async () => {
    await inbox('w-profile', 1);
    assert.equal((await keptFeed(server, 'w-profile')).data[0].subscriber.firstName, undefined);
    const r = await server.post('/v2/subscribers', { subscriberId: 'w-profile', firstName: 'Ada' });
    assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
    assert.equal((await keptFeed(server, 'w-profile')).data[0].subscriber.firstName, 'Ada');
    // A trigger whose `to` carries new fields updates the subscriber, with no new message for it.
    await createWorkflow(server, { workflowId: 'cache-noop', name: 'none', steps: [] });
    await triggerEvent(server, { name: 'cache-noop', to: { subscriberId: 'w-profile', lastName: 'Lovelace' } });
    assert.equal((await getFeed(server, 'w-profile')).data[0].subscriber.lastName, 'Lovelace');
  });

  it('the template embedded in every message: its workflow updated', async () => {
    await inAppWorkflow(server, 'cache-template', { body: 'hello' });
    await triggerEvent(server, { name: 'cache-template', to: 'w-template' });
    assert.equal((await keptFeed(server, 'w-template')).data[0].template.name, 'cache-template');
    await createWorkflow(server, { workflowId: 'cache-template', name: 'Renamed', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'hello' } }] });
    assert.equal((await getFeed(server, 'w-template')).data[0].template.name, 'Renamed');
  });

  it('a write the service did not make (the database changed under it)', async () => {
    await inbox('w-sql', 1);
    const before = await keptFeed(server, 'w-sql');
    await sqlOn(server, 'update messages set subject = ? where id = ?', ['Edited', before.data[0]._id]);
    assert.equal((await getFeed(server, 'w-sql')).data[0].subject, 'Edited');
  });

  it('payload filters that decode alike are kept apart: a number past a double\'s range is not null', async () => {
    await triggerEvent(server, { name: 'cache-note', to: 'w-filter', payload: { i: null } });
    const filter = (json: string) => ({ payload: Buffer.from(json).toString('base64') });
    const huge = (await getFeed(server, 'w-filter', filter('{"i":1e999}'))).totalCount;
    assert.equal((await getFeed(server, 'w-filter', filter('{"i":null}'))).totalCount, 1, 'the null filter finds the message');
    assert.equal((await getFeed(server, 'w-filter', filter('{"i":1e999}'))).totalCount, huge, 'and the other answer is its own');
  });

  it('environments and organizations never share answers', async () => {
    for (const key of [KEYS.a, KEYS.b, KEYS.other]) {
      await inAppWorkflow(server, 'cache-env', { body: `from ${key}` }, key);
      await triggerEvent(server, { name: 'cache-env', to: 'twin' }, key);
    }
    for (let round = 0; round < 2; round++) {
      for (const key of [KEYS.a, KEYS.b, KEYS.other]) {
        const body = await getFeed(server, 'twin', {}, key);
        assert.equal(body.totalCount, 1);
        assert.equal(body.data[0].content, `from ${key}`);
      }
    }
  });

  it('errors never enter: bad input is answered 4xx every time', async () => {
    await inbox('w-bad', 1);
    for (let i = 0; i < 2; i++) {
      expectErrorBody(await server.get(feedPath('w-bad'), { query: { payload: '%%%' } }), 400);
      expectErrorBody(await server.get(feedPath('w-bad'), { query: { limit: 1000 } }), 422);
      expectErrorBody(await server.get(feedPath('nobody-here'), {}), 404);
    }
    assert.equal((await getFeed(server, 'w-bad')).totalCount, 1);
  });

  it("a projection's made-up names change nothing in the answer, its tag included", async () => {
    await inbox('w-fields', 2);
    const fields = '_id,subject,content,read,seen';
    const ask = (names: string) => server.get(feedPath('w-fields'), { query: { fields: names }, headers: { 'accept-encoding': 'identity' } });
    const known = await ask(fields);
    for (const names of [`${fields},madeUp1`, `madeUp2,${fields}`, `${fields},toString,__proto__`]) {
      const answer = await ask(names);
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body, known.body, names);
      assert.equal(answer.headers.get('etag'), known.headers.get('etag'), names);
    }
  });
});

describe('feed answers: ETag and 304', () => {
  let server: TestServer;
  before(async () => {
    server = await start();
    await inAppWorkflow(server, 'etag-note', { body: 'A rather long body so that the page is over a kilobyte and gets compressed: {{payload.i}}' });
    for (let i = 0; i < 5; i++) await triggerEvent(server, { name: 'etag-note', to: 'etag', payload: { i } });
  });
  after(() => server.dispose());

  it('answers carry a strong ETag and ask the browser to revalidate; a matching If-None-Match gets 304 with no body', async () => {
    const first = await server.get(feedPath('etag'));
    assert.equal(first.status, 200);
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^"[\w-]+"$/);
    assert.equal(first.headers.get('cache-control'), 'private, no-cache');
    assert.match(first.headers.get('vary') ?? '', /accept-encoding/i);
    // A browser on another origin may read it (CORS).
    assert.equal((await server.get(feedPath('etag'), { headers: { origin: 'https://app.example' } })).headers.get('access-control-expose-headers')?.toLowerCase().includes('etag'), true);
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const again = await server.get(feedPath('etag'), { headers: { 'if-none-match': tag } });
      assert.equal(again.status, 304, tag);
      assert.equal(again.body, '');
      assert.equal(again.headers.get('etag'), etag);
    }
    assert.equal((await server.get(feedPath('etag'), { headers: { 'if-none-match': '"other"' } })).status, 200);
    // A page on another origin gets the 304 too (its browser revalidates with the tag it kept).
    const cross = await server.get(feedPath('etag'), { headers: { origin: 'https://app.example', 'if-none-match': etag } });
    assert.equal(cross.status, 304);
    assert.equal(cross.headers.get('access-control-allow-origin'), '*');
  });

  it('each encoding has its own tag; the same text in another encoding is still current', async () => {
    const res = await fetch(new URL(`${feedPath('etag')}?limit=5`, server.url), { headers: { authorization: `ApiKey ${KEYS.a}`, 'accept-encoding': 'br' } });
    assert.equal(res.headers.get('content-encoding'), 'br');
    const brTag = res.headers.get('etag')!;
    assert.match(brTag, /-br"$/);
    assert.equal(((await res.json()) as { data: unknown[] }).data.length, 5);
    const plain = await server.get(`${feedPath('etag')}?limit=5`, { headers: { 'accept-encoding': 'identity' } });
    assert.notEqual(plain.headers.get('etag'), brTag);
    assert.equal((await server.get(`${feedPath('etag')}?limit=5`, { headers: { 'if-none-match': brTag, 'accept-encoding': 'identity' } })).status, 304);
  });

  it('after a change the same tag gets 200 and a new tag', async () => {
    const first = await server.get(feedPath('etag'));
    const etag = first.headers.get('etag')!;
    assert.equal((await server.get(feedPath('etag'), { headers: { 'if-none-match': etag } })).status, 304);
    const r = await server.post('/v1/subscribers/etag/messages/mark-as', { messageId: first.body.data[0]._id, markAs: 'read' });
    assert.equal(r.status, 201);
    const changed = await server.get(feedPath('etag'), { headers: { 'if-none-match': etag } });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.get('etag'), etag);
    assert.equal(changed.body.data[0].read, true);
  });

  it('a HEAD answers the headers the same GET would, its tag and encoding included, and 304 on a match', async () => {
    const path = `${feedPath('etag')}?limit=5`;
    // With exactly these headers (fetch would add its own accept-encoding).
    const raw = (method: string, headers: Record<string, string>) =>
      new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
        const req = httpRequest(server.url + path, { method, headers: { authorization: `ApiKey ${KEYS.a}`, ...headers } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
        });
        req.on('error', reject);
        req.end();
      });
    const same = ['etag', 'content-encoding', 'content-type', 'content-length', 'vary', 'cache-control'];
    for (const encoding of ['br', 'gzip', 'identity']) {
      const get = await raw('GET', { 'accept-encoding': encoding });
      const head = await raw('HEAD', { 'accept-encoding': encoding });
      assert.equal(head.status, 200);
      for (const name of same) assert.equal(head.headers[name], get.headers[name], `${encoding}: ${name}`);
      const match = await raw('HEAD', { 'accept-encoding': encoding, 'if-none-match': String(get.headers.etag) });
      assert.equal(match.status, 304, encoding);
      assert.equal(match.headers.etag, get.headers.etag);
    }
  });
});

describe('feed answers: two processes on one database', () => {
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    // A runs no scheduler; on SQLite both share one file (WAL).
    a = await start({}, undefined, ['--no-scheduler']);
    b = await start({}, a.dbPath, ['--no-scheduler']);
    await inAppWorkflow(a, 'two-note', { body: 'n {{payload.i}}' });
    for (let i = 0; i < 3; i++) await triggerEvent(a, { name: 'two-note', to: 'two', payload: { i } });
  });
  after(async () => {
    // B first (it uses A's database); each removes its own temporary folder.
    await b?.dispose();
    await a?.dispose();
  });

  it('a write on A, the next read on B is fresh (mark-as, trigger, delete, subscriber update)', async () => {
    const before = await keptFeed(b, 'two');
    await keptFeed(a, 'two');
    assert.equal((await a.post('/v1/subscribers/two/messages/mark-as', { messageId: before.data[0]._id, markAs: 'read' })).status, 201);
    assert.equal((await getFeed(b, 'two')).data[0].read, true);
    await keptFeed(b, 'two');
    await triggerEvent(a, { name: 'two-note', to: 'two', payload: { i: 3 } });
    assert.equal((await getFeed(b, 'two')).totalCount, 4);
    await keptFeed(b, 'two');
    assert.equal((await a.delete(`/v1/messages/${before.data[1]._id}`)).status, 200);
    assert.equal((await getFeed(b, 'two')).totalCount, 3);
    await keptFeed(b, 'two');
    assert.equal((await a.post('/v2/subscribers', { subscriberId: 'two', firstName: 'Bea' })).status < 300, true);
    assert.equal((await getFeed(b, 'two')).data[0].subscriber.firstName, 'Bea');
    // And back: B's write, A's read.
    await keptFeed(a, 'two');
    assert.equal((await b.post('/v1/subscribers/two/messages/mark-all', { markAs: 'read' })).status, 201);
    assert.ok((await getFeed(a, 'two')).data.every((m) => m.read));
  });
});
