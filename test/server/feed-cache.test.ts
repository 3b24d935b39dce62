import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { expectErrorBody, KEYS, ON_TIME_MS, sqlOn, TestServer } from './helpers.ts';
import { createWorkflow, delayedInAppWorkflow, getFeed, inAppWorkflow, triggerEvent } from './fixtures.ts';
import { makeAnswer } from '../../server/src/inbox/answer-cache.ts';

// The feed's answer cache (server/src/inbox/answer-cache.ts): every write a feed answer shows makes the
// next answer fresh, whoever wrote it; environments never share answers; ETag and 304; the byte
// bound, and each environment's share of it; off. Each freshness test first makes sure the page
// is kept (on SQLite it checks that the second read was served from the cache), so a cache that
// missed a change would fail it. Both databases; across two processes on one database too.

const feedPath = (s: string) => `/v1/subscribers/${s}/notifications/feed`;

interface CacheStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
  /** Embedded objects held once for the uncompressed answers (of one environment) that embed them. */
  shared: number;
  /** Environments holding answers. */
  environments: number;
}

/** The cache's figures (null when it is off). */
const stats = async (server: TestServer): Promise<CacheStats | null> => (await server.get('/__feed-cache', { key: null })).body;

/** A feed page as sent, with the encoding asked for (identity: uncompressed); `query` with its `?`. */
const sentFeed = (server: TestServer, subscriberId: string, query = '', encoding?: string, key: string = KEYS.a) =>
  fetch(`${server.url}${feedPath(subscriberId)}${query}`, { headers: { authorization: `ApiKey ${key}`, ...(encoding && { 'accept-encoding': encoding }) } });

/** Reads a feed page twice; on a server with a cache, asserts the second read was served from it. */
async function keptFeed(server: TestServer, subscriberId: string, query: Record<string, any> = {}, key: string = KEYS.a) {
  const first = await getFeed(server, subscriberId, query, key);
  const before = await stats(server);
  const again = await getFeed(server, subscriberId, query, key);
  const now = await stats(server);
  if (before && now) assert.equal(now.hits, before.hits + 1, 'the second read is served from the cache');
  assert.deepEqual(again, first);
  return first;
}

const start = (env: Record<string, string> = {}, dbPath?: string, args: string[] = []) =>
  new TestServer({ NOTIF_SCHEDULER_POLL_MS: '100', ...env }, dbPath).start(['--no-seed', '--faults', ...args]);

describe('the feed answer cache: every writer makes the next answer fresh', () => {
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

  it('PostgreSQL: change rows piling up are folded into one, the version (their sum) unchanged', async (t) => {
    if (!server.postgres) return t.skip('PostgreSQL only (SQLite keeps one version row)');
    await inbox('w-fold', 1);
    const [{ _id: id }] = (await getFeed(server, 'w-fold')).data;
    for (let i = 0; i < 40; i++) {
      const r = await server.post('/v1/subscribers/w-fold/messages/mark-as', { messageId: id, markAs: i % 2 ? 'unread' : 'read' });
      assert.equal(r.status, 201);
    }
    const rows = async () =>
      Number((await sqlOn(server, 'select count(*) as n from inbox_changes c join subscribers s on s.id = c.subscriber_id where s.subscriber_id = ?', ['w-fold']))[0].n);
    assert.ok((await rows()) > 40);
    const before = await getFeed(server, 'w-fold');
    assert.equal(before.data[0].read, false);
    for (let i = 0; i < 50 && (await rows()) > 1; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await rows(), 1);
    // The answer kept before the fold is still current, and still served.
    const hits = (await stats(server))!.hits;
    assert.deepEqual(await getFeed(server, 'w-fold'), before);
    assert.equal((await stats(server))!.hits, hits + 1);
    await server.post('/v1/subscribers/w-fold/messages/mark-as', { messageId: id, markAs: 'read' });
    assert.equal((await getFeed(server, 'w-fold')).data[0].read, true);
  });

  it('PostgreSQL: the scheduler folds the change rows of a subscriber whose feed nobody reads', async (t) => {
    if (!server.postgres) return t.skip('PostgreSQL only (SQLite keeps one version row)');
    await inbox('w-unread', 1);
    const [{ _id: id }] = (await getFeed(server, 'w-unread')).data;
    const rows = async () =>
      (await sqlOn(server, 'select count(*) as n, sum(weight) as w from inbox_changes c join subscribers s on s.id = c.subscriber_id where s.subscriber_id = ?', ['w-unread']))[0];
    for (let i = 0; i < 40; i++) {
      const r = await server.post('/v1/subscribers/w-unread/messages/mark-as', { messageId: id, markAs: i % 2 ? 'unread' : 'read' });
      assert.equal(r.status, 201);
    }
    const piled = await rows();
    assert.ok(Number(piled.n) > 32, `${piled.n} rows`);
    // A second process on the database sweeps every 200 ms; nobody reads this subscriber's feed.
    const sweeper = await start({ NOTIF_CHANGE_SWEEP_MS: '200' }, server.dbPath);
    try {
      for (let i = 0; i < 60 && Number((await rows()).n) > 1; i++) await new Promise((r) => setTimeout(r, 100));
      const folded = await rows();
      assert.equal(Number(folded.n), 1, 'folded by the sweep');
      assert.equal(Number(folded.w), Number(piled.w), 'the version (their sum) unchanged');
    } finally {
      await sweeper.stop();
    }
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
    const before = await stats(server);
    for (let i = 0; i < 2; i++) {
      expectErrorBody(await server.get(feedPath('w-bad'), { query: { payload: '%%%' } }), 400);
      expectErrorBody(await server.get(feedPath('w-bad'), { query: { limit: 1000 } }), 422);
      expectErrorBody(await server.get(feedPath('nobody-here'), {}), 404);
    }
    const now = await stats(server);
    if (before && now) assert.equal(now.entries, before.entries);
  });
});

describe('the feed answer cache: ETag and 304', () => {
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

describe('the feed answer cache: size', () => {
  const servers: TestServer[] = [];
  after(() => Promise.all(servers.map((s) => s.dispose())));

  it('the byte bound evicts the least recently used answers', async () => {
    // About 10 KB: a one-message page of two fields costs under a kilobyte with its key.
    const server = await start({ NOTIF_FEED_CACHE_MB: '0.01' });
    servers.push(server);
    await inAppWorkflow(server, 'size-note', { body: 'n {{payload.i}}' });
    for (let i = 0; i < 30; i++) await triggerEvent(server, { name: 'size-note', to: 'sizer', payload: { i } });
    for (let page = 0; page < 30; page++) await getFeed(server, 'sizer', { page, limit: 1, fields: '_id,content' });
    const full = (await stats(server))!;
    assert.ok(full.bytes <= full.maxBytes, `${full.bytes} <= ${full.maxBytes}`);
    assert.ok(full.entries > 3 && full.entries < 30, `${full.entries} entries`);
    // The newest is kept; the first ones were evicted.
    await getFeed(server, 'sizer', { page: 29, limit: 1, fields: '_id,content' });
    assert.equal((await stats(server))!.hits, full.hits + 1);
    await getFeed(server, 'sizer', { page: 0, limit: 1, fields: '_id,content' });
    assert.equal((await stats(server))!.misses, full.misses + 1);
  });

  it('uncompressed full pages hold their subscriber and template once, and answer the same bytes', async () => {
    const server = await start();
    servers.push(server);
    await inAppWorkflow(server, 'shared-note', { subject: 'Shared {{payload.i}}', body: 'Body {{payload.i}}', primaryAction: { label: 'Open' } });
    const people = Array.from({ length: 6 }, (_, i) => `sharer-${i}`);
    for (let i = 0; i < 8; i++) await triggerEvent(server, { name: 'shared-note', to: people, payload: { i } });
    const read = async (subscriberId: string, encoding = 'identity') => {
      const res = await sentFeed(server, subscriberId, '?limit=8', encoding);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-encoding'), encoding == 'identity' ? null : encoding);
      return res.text();
    };
    let sent = 0;
    const first = new Map<string, string>();
    for (const person of people) first.set(person, await read(person)), (sent += Buffer.byteLength(first.get(person)!));
    const kept = (await stats(server))!;
    // Six subscribers' objects and one template, each once, where every page embeds them 8 times.
    assert.equal(kept.shared, people.length + 1);
    assert.ok(kept.bytes < sent * 0.75, `${kept.bytes} B kept for ${sent} B of answers`);
    for (const person of people) {
      const again = await read(person);
      assert.equal(again, first.get(person), 'a kept answer is the bytes of the first');
      assert.deepEqual(JSON.parse(await read(person, 'br')), JSON.parse(again));
      const body = JSON.parse(again);
      assert.equal(body.data.length, 8);
      assert.ok(body.data.every((m: any) => m.subscriber.subscriberId == person && m.template.name == 'shared-note'));
    }
    assert.equal((await stats(server))!.hits, kept.hits + people.length);
  });

  it('an evicted answer releases the embedded objects no other answer holds', async () => {
    // About 80 KB: each full page (about 4 KB with its subscriber, the first 6 KB with the template) is under a tenth.
    const server = await start({ NOTIF_FEED_CACHE_MB: '0.08' });
    servers.push(server);
    await inAppWorkflow(server, 'release-note', { body: 'Body {{payload.i}}' });
    const people = Array.from({ length: 30 }, (_, i) => `releaser-${i}`);
    for (let i = 0; i < 3; i++) await triggerEvent(server, { name: 'release-note', to: people, payload: { i } });
    for (const person of people) {
      const res = await sentFeed(server, person, '', 'identity');
      assert.equal(JSON.parse(await res.text()).data.length, 3);
    }
    const kept = (await stats(server))!;
    assert.ok(kept.bytes <= kept.maxBytes, `${kept.bytes} <= ${kept.maxBytes}`);
    assert.ok(kept.entries > 1 && kept.entries < people.length, `${kept.entries} entries`);
    // Each kept answer holds its subscriber and the one template: nothing else stays.
    assert.ok(kept.shared <= kept.entries + 1, `${kept.shared} shared for ${kept.entries} entries`);
  });

  it('a busy environment walking many pages cannot evict the answers a quiet environment keeps', async () => {
    // About 80 KB; full uncompressed pages (about 4 KB, their subscriber and template held once):
    // the busy environment (acme/production) reads 30 subscribers' pages, several times the cache,
    // after the quiet one (acme/staging, another environment of the same organization) kept two.
    const server = await start({ NOTIF_FEED_CACHE_MB: '0.08' });
    servers.push(server);
    const quiet = ['quiet-0', 'quiet-1'];
    const busy = Array.from({ length: 30 }, (_, i) => `busy-${i}`);
    await inAppWorkflow(server, 'share-note', { body: 'Body {{payload.i}}' }, KEYS.b);
    await inAppWorkflow(server, 'share-note', { body: 'Body {{payload.i}}' }, KEYS.a);
    for (let i = 0; i < 3; i++) await triggerEvent(server, { name: 'share-note', to: quiet, payload: { i } }, KEYS.b);
    for (let i = 0; i < 3; i++) await triggerEvent(server, { name: 'share-note', to: busy, payload: { i } }, KEYS.a);
    const read = (subscriberId: string, key: string) => sentFeed(server, subscriberId, '', 'identity', key).then((r) => r.text());
    const kept = new Map<string, string>();
    for (const person of quiet) kept.set(person, await read(person, KEYS.b));
    for (let round = 0; round < 2; round++) for (const person of busy) await read(person, KEYS.a);
    const full = (await stats(server))!;
    assert.ok(full.bytes <= full.maxBytes, `${full.bytes} <= ${full.maxBytes}`);
    assert.ok(full.bytes > full.maxBytes * 0.8, `${full.bytes} B: the busy environment has the rest`);
    // Each kept answer holds its subscriber; each environment its template.
    assert.ok(full.shared <= full.entries + 2, `${full.shared} shared for ${full.entries} entries`);
    for (const person of quiet) assert.equal(await read(person, KEYS.b), kept.get(person));
    assert.equal((await stats(server))!.hits, full.hits + quiet.length, "the quiet environment's answers were kept");
    // The busy environment's latest answer is kept too: it evicted its own oldest.
    await read(busy.at(-1)!, KEYS.a);
    assert.equal((await stats(server))!.hits, full.hits + quiet.length + 1);
    assert.equal(full.environments, 2);
  });

  it('a lone environment fills the cache; one arriving later takes room from it and keeps it', async () => {
    // About 20 KB: a one-message page of two fields costs under a kilobyte with its key.
    const server = await start({ NOTIF_FEED_CACHE_MB: '0.02' });
    servers.push(server);
    await inAppWorkflow(server, 'lone-note', { body: 'n {{payload.i}}' }, KEYS.a);
    await inAppWorkflow(server, 'lone-note', { body: 'n {{payload.i}}' }, KEYS.b);
    for (let i = 0; i < 60; i++) await triggerEvent(server, { name: 'lone-note', to: 'walker', payload: { i } }, KEYS.a);
    for (let i = 0; i < 3; i++) await triggerEvent(server, { name: 'lone-note', to: 'late', payload: { i } }, KEYS.b);
    const page = (subscriberId: string, page: number, key: string) => getFeed(server, subscriberId, { page, limit: 1, fields: '_id,content' }, key);
    for (let i = 0; i < 60; i++) await page('walker', i, KEYS.a);
    const alone = (await stats(server))!;
    assert.ok(alone.bytes <= alone.maxBytes, `${alone.bytes} <= ${alone.maxBytes}`);
    assert.ok(alone.bytes > alone.maxBytes * 0.9, `${alone.bytes} B of ${alone.maxBytes}: a lone environment uses the whole cache`);
    assert.ok(alone.entries > 10 && alone.entries < 60, `${alone.entries} entries`);
    // The other environment arrives in a full cache: its answers take room from the first one's.
    for (let i = 0; i < 3; i++) await keptFeed(server, 'late', { page: i, limit: 1, fields: '_id,content' }, KEYS.b);
    for (let round = 0; round < 2; round++) for (let i = 0; i < 60; i++) await page('walker', i, KEYS.a);
    const shared = (await stats(server))!;
    assert.ok(shared.bytes <= shared.maxBytes && shared.bytes > shared.maxBytes * 0.9, `${shared.bytes} B of ${shared.maxBytes}`);
    assert.ok(shared.entries >= alone.entries - 1, `${shared.entries} entries, ${alone.entries} before`);
    for (let i = 0; i < 3; i++) await page('late', i, KEYS.b);
    assert.equal((await stats(server))!.hits, shared.hits + 3, "the later environment's answers were kept");
  });

  it('an answer whose embedded objects alone pass a tenth of the cache is not kept, and evicts nothing', async () => {
    // About 50 KB, so at most 5 KB an answer: a page of one message whose subscriber carries 60 KB
    // of data is small in its own bytes, but not with the subscriber it would add.
    const server = await start({ NOTIF_FEED_CACHE_MB: '0.05' });
    servers.push(server);
    await inAppWorkflow(server, 'heavy-note', { body: 'Body {{payload.i}}' });
    for (let i = 0; i < 5; i++) await triggerEvent(server, { name: 'heavy-note', to: 'light', payload: { i } });
    await triggerEvent(server, { name: 'heavy-note', to: { subscriberId: 'heavy', data: { notes: 'n'.repeat(60_000) } }, payload: { i: 0 } });
    const read = (subscriberId: string, page = 0) =>
      sentFeed(server, subscriberId, `?limit=1&page=${page}&fields=_id,content`).then((r) => r.text());
    for (let page = 0; page < 5; page++) await read('light', page);
    const before = (await stats(server))!;
    assert.equal(before.entries, 5);
    const res = await sentFeed(server, 'heavy', '', 'identity');
    assert.equal(JSON.parse(await res.text()).data[0].subscriber.data.notes.length, 60_000);
    const after = (await stats(server))!;
    assert.deepEqual({ entries: after.entries, shared: after.shared, bytes: after.bytes }, { entries: 5, shared: 0, bytes: before.bytes }, 'the heavy answer was not kept, the others stay');
    for (let page = 0; page < 5; page++) await read('light', page);
    assert.equal((await stats(server))!.hits, after.hits + 5);
  });

  it('a kept answer holds memory of its own size, not a view of a larger buffer (the cache counts what it keeps)', () => {
    const page = (n: number) => [`{"data":[${Array.from({ length: n }, (_, i) => `{"_id":"m${i}","subject":"Note ${i}"}`).join(',')}],"subscriber":`, '{"subscriberId":"s"}', '}'];
    const answers = [makeAnswer(page(2), undefined), makeAnswer(page(40), 'br'), makeAnswer(page(40), 'gzip'), makeAnswer(page(40), undefined)];
    const kept = answers.flatMap((a) => [a.body, a.own, ...(a.layout ?? []).map((p) => (typeof p == 'number' ? undefined : p.bytes))]).filter((b) => b !== undefined);
    assert.equal(kept.length, 5);
    for (const bytes of kept) assert.equal(bytes.buffer.byteLength, bytes.length, `${bytes.length} B kept in ${bytes.buffer.byteLength} B`);
  });

  it('answers put together in reused buffers: an answer waiting to be written keeps its bytes while others are answered', async () => {
    // Two requests on one connection whose reader stops reading: the first answer, 10 MB (each
    // message carries its payload), waits on the socket, and the second waits behind it in the
    // process, in its buffer. A buffer used again before its answer was written would send this
    // reader another subscriber's page.
    const server = await start({ NOTIF_FEED_CACHE_MB: '200' });
    servers.push(server);
    await inAppWorkflow(server, 'pooled-note', { body: 'Body {{payload.i}}' });
    for (let i = 0; i < 12; i++) await triggerEvent(server, { name: 'pooled-note', to: 'stalled', payload: { i, blob: 'abcdefghij'[i % 10]!.repeat(900_000) } });
    const others = Array.from({ length: 8 }, (_, i) => `pooled-${i}`);
    for (let i = 0; i < 6; i++) await triggerEvent(server, { name: 'pooled-note', to: others, payload: { i, pad: 'p'.repeat(3_000 * i) } });
    const text = (subscriberId: string) => sentFeed(server, subscriberId, '?limit=20', 'identity').then((r) => r.text());
    const expected = new Map<string, string>();
    for (const id of ['stalled', ...others]) expected.set(id, await text(id));
    assert.ok(expected.get('stalled')!.length > 10_000_000);

    const before = (await stats(server))!;
    const { hostname, port } = new URL(server.url);
    const socket = connect(Number(port), hostname).pause();
    const get = (id: string, last = false) =>
      `GET ${feedPath(id)}?limit=20 HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: ApiKey ${KEYS.a}\r\n${last ? 'connection: close\r\n' : ''}\r\n`;
    socket.write(get('stalled') + get('pooled-0', true));
    // Both served from the cache: both written to the connection (the second queued) once counted.
    for (let now = before; now.hits < before.hits + 2; now = (await stats(server))!) await new Promise((r) => setTimeout(r, 20));
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(others.map(text));
      answers.forEach((answer, i) => assert.equal(answer, expected.get(others[i]!), `${others[i]}, round ${round}`));
    }
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk)).resume();
    await new Promise((r) => socket.once('end', r));
    let raw = Buffer.concat(chunks).toString('latin1');
    for (const id of ['stalled', 'pooled-0']) {
      assert.match(raw, /^HTTP\/1\.1 200/);
      const head = raw.slice(0, raw.indexOf('\r\n\r\n') + 4);
      const length = Number(/content-length: (\d+)/i.exec(head)![1]);
      const body = Buffer.from(raw.slice(head.length, head.length + length), 'latin1').toString();
      assert.ok(body == expected.get(id), `${id}: its own page, byte for byte`);
      raw = raw.slice(head.length + length);
    }
    assert.equal(raw, '');
  });

  it('NOTIF_FEED_CACHE_MB=0 turns it off: answers stay right, with ETag and 304', async () => {
    const server = await start({ NOTIF_FEED_CACHE_MB: '0' });
    servers.push(server);
    assert.equal(await stats(server), null);
    await inAppWorkflow(server, 'off-note', { body: 'off' });
    await triggerEvent(server, { name: 'off-note', to: 'off' });
    const first = await server.get(feedPath('off'));
    assert.equal(first.body.totalCount, 1);
    assert.equal((await server.get(feedPath('off'), { headers: { 'if-none-match': first.headers.get('etag')! } })).status, 304);
    await triggerEvent(server, { name: 'off-note', to: 'off' });
    assert.equal((await getFeed(server, 'off')).totalCount, 2);
  });
});

describe('the feed answer cache: two processes on one database', () => {
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
    await b?.stop();
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
