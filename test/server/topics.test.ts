import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, KEYS, startServer, type TestServer } from './helpers.ts';
import { getFeed, inAppWorkflow, triggerEvent } from './fixtures.ts';
import { dbQuery, waitFor } from './engine-fixtures.ts';

// Topics over plain HTTP: what they refuse, what a trigger to one reaches, and a topic of 10,000
// subscribers fanned out in the background while the service goes on answering.

/** Subscribers in the large topic. */
const LARGE_TOPIC = 10_000;
/** What one bulk create and one subscribe request hold at most. */
const BULK_CREATE = 500;
const SUBSCRIBE_BATCH = 100;
/** A generous bound for each /health answer during the fan-out (the machine may be busy with other work). */
const HEALTH_BOUND_MS = 1000;
/** How long the whole fan-out may take here. */
const FAN_OUT_TIMEOUT_MS = 240_000;

/** How often a fixture request the service refused as under pressure (503) is sent again, after the wait it asks for. */
const PRESSURE_RETRIES = 20;

async function ok(server: TestServer, method: 'post' | 'patch', path: string, body?: unknown, key: string = KEYS.a) {
  let r = await server[method](path, body, { key });
  // A busy machine may put the service under pressure while the fixtures are made: wait as it says, and send again.
  for (let retry = 0; r.status === 503 && retry < PRESSURE_RETRIES; retry++) {
    await new Promise((resolve) => setTimeout(resolve, Number(r.headers.get('retry-after') ?? 1) * 1000));
    r = await server[method](path, body, { key });
  }
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

describe('topics', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await inAppWorkflow(server, 'topical', { body: 'News {{payload.n}}' });
  });
  after(() => server.dispose());

  it('refuses bad keys and bodies with 422, unknown topics with 404; another environment sees none', async () => {
    expectErrorBody(await server.post('/v2/topics', { key: 'has space' }), 422);
    expectErrorBody(await server.post('/v2/topics', { name: 'no key' }), 422);
    expectErrorBody(await server.post('/v2/topics', { key: 'k', data: 'text' }), 422);
    expectErrorBody(await server.get('/v2/topics/nope'), 404);
    expectErrorBody(await server.patch('/v2/topics/nope', { name: 'x' }), 404);
    expectErrorBody(await server.delete('/v2/topics/nope'), 404);
    expectErrorBody(await server.get('/v2/topics/nope/subscriptions'), 404);
    await ok(server, 'post', '/v2/topics', { key: 'private', name: 'Private' });
    expectErrorBody(await server.get('/v2/topics/private', { key: KEYS.b }), 404);
    expectErrorBody(await server.get('/v2/topics/private', { key: KEYS.other }), 404);
    const tooMany = Array.from({ length: SUBSCRIBE_BATCH + 1 }, (_, i) => `s${i}`);
    expectErrorBody(await server.post('/v2/topics/private/subscriptions', { subscriptions: tooMany }), 422);
  });

  it('subscribing only unknown subscribers is a 400 listing each; an unknown topic in a trigger is a 422 and delivers nothing', async () => {
    const r = await server.post('/v2/topics/ghosts/subscriptions', { subscriberIds: ['ghost-1', 'ghost-2'] });
    const body = expectErrorBody(r, 400);
    assert.deepEqual(body.errors.map((e: { subscriberId: string; code: string }) => [e.subscriberId, e.code]), [
      ['ghost-1', 'SUBSCRIBER_NOT_FOUND'],
      ['ghost-2', 'SUBSCRIBER_NOT_FOUND'],
    ]);
    assert.deepEqual(body.meta, { totalCount: 2, successful: 0, failed: 2 });
    const refused = expectErrorBody(await server.post('/v1/events/trigger', { name: 'topical', to: [{ type: 'Topic', topicKey: 'no-such-topic' }, 'direct-1'] }), 422);
    assert.ok(refused.errors.to, JSON.stringify(refused.errors));
    expectErrorBody(await server.get('/v1/subscribers/direct-1/notifications/feed'), 404);
  });

  it('a trigger to a topic: each subscriber once, across topics and direct recipients, but for the excluded and the actor', async () => {
    const members = ['t-ann', 't-bob', 't-cy', 't-dee', 't-eve'];
    for (const subscriberId of members) await ok(server, 'post', '/v2/subscribers', { subscriberId });
    await ok(server, 'post', '/v2/topics/red/subscriptions', { subscriptions: members.slice(0, 3) });
    await ok(server, 'post', '/v2/topics/blue/subscriptions', { subscriptions: members.slice(2) });
    const t = await triggerEvent(server, {
      name: 'topical',
      to: [{ type: 'Topic', topicKey: 'red' }, { type: 'Topic', topicKey: 'blue', exclude: ['t-dee'] }, 't-bob', 't-new'],
      actor: 't-eve',
      payload: { n: 1 },
    });
    for (const subscriberId of ['t-ann', 't-bob', 't-cy', 't-new']) {
      const feed = await waitFor(`${subscriberId}'s message`, async () => {
        const page = await getFeed(server, subscriberId);
        return page.data.length > 0 ? page : undefined;
      });
      assert.deepEqual(feed.data.map((m) => [m.transactionId, m.content]), [[t.transactionId, 'News 1']], subscriberId);
    }
    // Everything the trigger makes is made once the runs of the topics are: two of each would show by now.
    await waitFor('the runs of the topics', async () => {
      const runs = await dbQuery(server, 'select count(*) as n from notifications where transaction_id = ?', [t.transactionId]);
      return Number(runs[0].n) >= 4 ? true : undefined;
    });
    for (const subscriberId of ['t-dee', 't-eve']) assert.deepEqual((await getFeed(server, subscriberId)).data, [], subscriberId);
    const listed = await server.get('/v1/notifications', { query: { transactionId: t.transactionId, limit: 50 } });
    assert.equal(listed.body.data.length, 4);
    const viaTopic = listed.body.data.find((n: { subscriber: { subscriberId: string } }) => n.subscriber.subscriberId === 't-ann');
    assert.deepEqual(viaTopic.topics.map((topic: { topicKey: string }) => topic.topicKey).sort(), ['blue', 'red']);
  });

  it(`a topic of ${LARGE_TOPIC.toLocaleString('en')} subscribers: the trigger answers at once, /health keeps answering, and everyone gets the message once`, { timeout: FAN_OUT_TIMEOUT_MS + 120_000 }, async () => {
    const ids = Array.from({ length: LARGE_TOPIC }, (_, i) => `crowd-${String(i).padStart(5, '0')}`);
    for (let start = 0; start < ids.length; start += BULK_CREATE) {
      const made = await ok(server, 'post', '/v1/subscribers/bulk', { subscribers: ids.slice(start, start + BULK_CREATE).map((subscriberId) => ({ subscriberId })) });
      assert.equal(made.created.length, Math.min(BULK_CREATE, ids.length - start));
    }
    for (let start = 0; start < ids.length; start += SUBSCRIBE_BATCH) {
      await ok(server, 'post', '/v2/topics/crowd/subscriptions', { subscriptions: ids.slice(start, start + SUBSCRIBE_BATCH) });
    }
    assert.equal((await server.get('/v2/topics/crowd/subscriptions', { query: { limit: 1 } })).body.totalCount, LARGE_TOPIC);

    const started = Date.now();
    const t = await triggerEvent(server, { name: 'topical', to: { type: 'Topic', topicKey: 'crowd' }, payload: { n: 2 } });
    const answeredMs = Date.now() - started;
    const healthMs: number[] = [];
    const delivered = async () => Number((await dbQuery(server, `select count(*) as n from messages where transaction_id = ? and channel = 'in_app'`, [t.transactionId]))[0].n);
    let count = 0;
    while (count < LARGE_TOPIC) {
      assert.ok(Date.now() - started < FAN_OUT_TIMEOUT_MS, `only ${count} of ${LARGE_TOPIC} delivered after ${FAN_OUT_TIMEOUT_MS} ms`);
      const asked = Date.now();
      const health = await server.get('/health', { key: null });
      healthMs.push(Date.now() - asked);
      assert.equal(health.status, 200);
      count = await delivered();
    }
    const sorted = [...healthMs].sort((a, b) => a - b);
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;
    console.log(`fan-out of ${LARGE_TOPIC}: trigger answered in ${answeredMs} ms, all delivered in ${Date.now() - started} ms; /health answered ${healthMs.length} times during it, p99 ${p99} ms, max ${sorted.at(-1)} ms`);
    assert.ok(healthMs.length > 1, 'the fan-out ran while /health was asked');
    assert.ok(sorted.at(-1)! < HEALTH_BOUND_MS, `every /health answer under ${HEALTH_BOUND_MS} ms: ${sorted.slice(-5).join(', ')}`);
    assert.equal(await delivered(), LARGE_TOPIC, 'each subscriber once');
    const [first] = (await getFeed(server, ids[0]!)).data;
    assert.equal(first.content, 'News 2');
  });
});
