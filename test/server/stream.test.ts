import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, KEYS, TestServer } from './helpers.ts';
import { createWorkflow, delayedInAppWorkflow, ensureSubscriber, inAppWorkflow, triggerEvent } from './fixtures.ts';
import { runsWritten, sleep, waitFor } from './engine-fixtures.ts';
import { openStream } from './stream-fixtures.ts';

// The stream (GET /v1/subscribers/{id}/notifications/stream): scoped like the other subscriber
// endpoints; the count at once and on every change from every write path; an event per new message;
// Last-Event-ID replay; a closed connection freed. On PostgreSQL (TEST_DATABASE_URL) the same
// tests run there, and two processes on one database tell each other's streams.

const path = (s: string) => `/v1/subscribers/${encodeURIComponent(s)}`;
const openStreams = async (server: TestServer) => (await server.get('/__streams')).body.open as number;

describe('notification stream', () => {
  let server: TestServer;
  before(async () => {
    server = await new TestServer().start(['--no-seed', '--faults']);
    await inAppWorkflow(server, 'live', { subject: '{{payload.title}}', body: 'b', primaryAction: { label: 'Go' } });
  });
  // A graceful stop: the connections undici leaves after the streams it aborted (opened, no request
  // sent) are closed at once (plugins/connections.ts), so it takes no longer than with none.
  after(async () => {
    const t0 = Date.now();
    await server?.stop();
    assert.ok(Date.now() - t0 < 5000, `stopped in ${Date.now() - t0} ms`);
    assert.doesNotMatch(server.output(), /shutdown took over/);
    await server?.dispose();
  });

  it('is scoped like the subscriber endpoints: 401 without a key, 404 for an unknown or another environment\'s subscriber', async () => {
    await ensureSubscriber(server, 'st-scope');
    const none = await openStream(server, 'st-scope', { headers: {} });
    assert.equal(none.status, 401);
    const unknown = await openStream(server, 'st-nobody');
    assert.equal(unknown.status, 404);
    expectErrorBody({ status: unknown.status, headers: unknown.headers, body: unknown.events[0]!.data }, 404);
    assert.equal((await openStream(server, 'st-scope', { key: KEYS.b })).status, 404);
    assert.equal((await openStream(server, 'st-scope', { key: KEYS.other })).status, 404);
  });

  it('sends refetch and the count at once, a message event per new message, and the count after every write path', async () => {
    await ensureSubscriber(server, 'st-a');
    await triggerEvent(server, { name: 'live', to: 'st-a', payload: { title: 'before' } });
    const s = await openStream(server, 'st-a');
    try {
      assert.equal(s.status, 200);
      assert.match(s.headers.get('content-type') ?? '', /^text\/event-stream/);
      const first = await s.next((e) => e.event === 'unseen', 'the first count');
      assert.equal(first.data.count, 1);
      assert.match(first.id ?? '', /^[\w-]{22}$/, 'the commit number of the newest message, sealed for the subscriber');
      assert.match(s.text, /^retry: \d+\n\n/);
      // One kind of event: no `event:` line, one `data:` line of JSON carrying the event's id.
      assert.doesNotMatch(s.text, /^event:/m);
      assert.deepEqual(first.wire, { id: first.id, count: 1 });
      // Opened without Last-Event-ID: what the client read before may predate a message, so refetch comes first.
      assert.deepEqual(s.events.slice(0, 2).map((e) => e.wire), [{ id: first.id, refetch: true }, first.wire]);

      await triggerEvent(server, { name: 'live', to: 'st-a', payload: { title: 'new one' } });
      const m = await s.next((e) => e.event === 'message', 'a message event');
      assert.equal(m.data.subject, 'new one');
      assert.deepEqual(Object.keys(m.wire), ['id', 'message']);
      assert.equal(m.wire.id, m.id);
      assert.match(s.text, new RegExp(`^id: ${m.id}\ndata: \\{"id":"${m.id}","message":\\{.*\\}\\}\n\n`, 'm'), 'an id line and one data line');
      assert.notEqual(m.id, first.id, 'the new message has an id of its own');
      await s.next((e) => e.event === 'unseen' && e.data.count === 2, 'count 2');

      let at = s.events.length;
      const markAs = await server.post(`${path('st-a')}/messages/mark-as`, { messageId: m.data._id, markAs: 'seen' });
      assert.equal(markAs.status, 201);
      await s.next((e) => e.event === 'unseen' && e.data.count === 1, 'count 1 after mark-as', 5000, at);

      at = s.events.length;
      assert.equal((await server.post(`${path('st-a')}/messages/mark-all`, { markAs: 'seen' })).status, 201);
      await s.next((e) => e.event === 'unseen' && e.data.count === 0, 'count 0 after mark-all', 5000, at);

      at = s.events.length;
      assert.equal((await server.post(`${path('st-a')}/messages/mark-as`, { messageId: m.data._id, markAs: 'unseen' })).status, 201);
      await s.next((e) => e.event === 'unseen' && e.data.count === 1, 'count 1 after mark-as unseen', 5000, at);

      // An action changes no count: nothing is sent.
      at = s.events.length;
      assert.equal((await server.post(`${path('st-a')}/messages/${m.data._id}/actions/primary`, { status: 'done' })).status, 201);
      assert.equal((await server.delete(`/v1/messages/${m.data._id}`)).status, 200);
      await s.next((e) => e.event === 'unseen' && e.data.count === 0, 'count 0 after the delete', 5000, at);
      assert.deepEqual(s.events.slice(at).map((e) => e.event), ['unseen'], 'the action sent nothing');
    } finally {
      s.close();
    }
  });

  it('replays what a reconnect missed after Last-Event-ID, oldest first, or asks for a refetch', async () => {
    await ensureSubscriber(server, 'st-r');
    const s = await openStream(server, 'st-r');
    await triggerEvent(server, { name: 'live', to: 'st-r', payload: { title: 'm0' } });
    const m0 = await s.next((e) => e.event === 'message');
    s.close();
    for (const title of ['m1', 'm2']) await triggerEvent(server, { name: 'live', to: 'st-r', payload: { title } });

    const again = await openStream(server, 'st-r', { lastEventId: m0.id });
    try {
      await again.next((e) => e.event === 'unseen' && e.data.count === 3);
      assert.deepEqual(again.events.map((e) => [e.event, e.data?.subject]), [['message', 'm1'], ['message', 'm2'], ['unseen', undefined]]);
      assert.equal(again.events.at(-1)!.id, again.events[1]!.id, 'the count carries the newest id');
    } finally {
      again.close();
    }
    const lost = await openStream(server, 'st-r', { lastEventId: 'ffffffffffffffffffffffff' });
    try {
      await lost.next((e) => e.event === 'unseen');
      assert.deepEqual(lost.events.map((e) => e.event), ['refetch', 'unseen']);
      assert.deepEqual(lost.events[0]!.wire, { id: lost.events[0]!.id, refetch: true });
    } finally {
      lost.close();
    }
  });

  it("ids are sealed for their subscriber: one of another subscriber's, or a plain number, asks for a refetch", async () => {
    // (Commit numbers are shared by every environment: in clear, a subscriber could read how many
    // messages everyone else was sent between two of its own.)
    for (const s of ['st-own-a', 'st-own-b']) {
      await ensureSubscriber(server, s);
      await triggerEvent(server, { name: 'live', to: s, payload: { title: s } });
    }
    const a = await openStream(server, 'st-own-a');
    let idOfA: string;
    try {
      idOfA = (await a.next((e) => e.event === 'unseen', 'the count of a')).id!;
    } finally {
      a.close();
    }
    const b0 = await openStream(server, 'st-own-b');
    try {
      assert.notEqual((await b0.next((e) => e.event === 'unseen', 'the count of b')).id, idOfA);
    } finally {
      b0.close();
    }
    for (const lastEventId of [idOfA, '1', String(Number.MAX_SAFE_INTEGER)]) {
      const b = await openStream(server, 'st-own-b', { lastEventId });
      try {
        await b.next((e) => e.event === 'unseen', `the count after ${lastEventId}`);
        assert.deepEqual(b.events.map((e) => e.event), ['refetch', 'unseen'], lastEventId);
      } finally {
        b.close();
      }
    }
  });

  it('replays up to 50 missed messages after Last-Event-ID; one more asks for a refetch', async () => {
    const steps = Array.from({ length: 10 }, (_, i) => ({ name: `s${i}`, type: 'in_app', controlValues: { subject: `{{payload.title}} ${i}`, body: 'b' } }));
    await createWorkflow(server, { workflowId: 'ten', name: 'Ten', steps });
    // Another subscriber's messages, numbered in between, are never replayed to this one.
    await ensureSubscriber(server, 'st-other');
    await ensureSubscriber(server, 'st-many');
    const s = await openStream(server, 'st-many');
    const first = await s.next((e) => e.event === 'unseen');
    s.close();
    for (let t = 0; t < 5; t++) await triggerEvent(server, { name: 'ten', to: ['st-many', 'st-other'], payload: { title: `t${t}` } });
    const fifty = await openStream(server, 'st-many', { lastEventId: first.id });
    try {
      await fifty.next((e) => e.event === 'unseen' && e.data.count === 50);
      const told = fifty.events.filter((e) => e.event === 'message').map((e) => e.data.subject);
      assert.deepEqual(told, Array.from({ length: 50 }, (_, i) => `t${Math.floor(i / 10)} ${i % 10}`), 'all 50, oldest first');
    } finally {
      fifty.close();
    }
    await triggerEvent(server, { name: 'live', to: 'st-many', payload: { title: 'one more' } });
    const over = await openStream(server, 'st-many', { lastEventId: first.id });
    try {
      await over.next((e) => e.event === 'unseen');
      assert.deepEqual(over.events.map((e) => e.event), ['refetch', 'unseen']);
      assert.equal(over.events[1]!.data.count, 51);
    } finally {
      over.close();
    }
  });

  it('one trigger to 100 subscribers (the largest `to`) tells every stream its one message, once, each numbered', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `st-fan-${i}`);
    const first = await triggerEvent(server, { name: 'live', to: ids, payload: { title: 'first' } });
    // A trigger to 100 answers before its messages are written: the streams open once they are.
    await runsWritten(server, first.transactionId);
    const streams = await Promise.all(ids.map((id) => openStream(server, id)));
    try {
      await Promise.all(streams.map((s) => s.next((e) => e.event === 'unseen' && e.data.count === 1)));
      await triggerEvent(server, { name: 'live', to: ids, payload: { title: 'fan' } });
      const told = await Promise.all(streams.map((s) => s.next((e) => e.event === 'message', 'the fan-out message', 10_000)));
      await Promise.all(streams.map((s) => s.next((e) => e.event === 'unseen' && e.data.count === 2)));
      await sleep(200);
      for (const [i, s] of streams.entries()) {
        assert.deepEqual(s.events.filter((e) => e.event === 'message').map((e) => e.data.subject), ['fan'], ids[i]);
      }
      assert.equal(new Set(told.map((e) => e.id)).size, ids.length, 'every message has its own number');
    } finally {
      for (const s of streams) s.close();
    }
  });

  it('a delayed step run by the scheduler reaches the stream', async () => {
    await delayedInAppWorkflow(server, 'live-later', 1, 'later', 'later');
    await ensureSubscriber(server, 'st-d');
    const s = await openStream(server, 'st-d');
    try {
      await s.next((e) => e.event === 'unseen');
      await triggerEvent(server, { name: 'live-later', to: 'st-d' });
      const m = await s.next((e) => e.event === 'message', 'the delayed message', 8000);
      assert.equal(m.data.content[0].content, 'later');
    } finally {
      s.close();
    }
  });

  it('a closed connection frees what it held; other subscribers hear nothing', async () => {
    await ensureSubscriber(server, 'st-f');
    await ensureSubscriber(server, 'st-g');
    const before = await openStreams(server);
    const f = await openStream(server, 'st-f');
    const g = await openStream(server, 'st-g');
    await f.next((e) => e.event === 'unseen');
    await g.next((e) => e.event === 'unseen');
    assert.equal(await openStreams(server), before + 2);
    await triggerEvent(server, { name: 'live', to: 'st-f' });
    await f.next((e) => e.event === 'message');
    await sleep(200);
    assert.deepEqual(g.events.map((e) => e.event), ['refetch', 'unseen']);
    f.close();
    g.close();
    await waitFor('streams freed', async () => ((await openStreams(server)) === before ? true : undefined), 5000);
  });

  it('a graceful stop ends open streams', async () => {
    const other = await new TestServer().start(['--no-seed']);
    try {
      await ensureSubscriber(other, 'st-stop');
      const s = await openStream(other, 'st-stop');
      await s.next((e) => e.event === 'unseen');
      const stopped = other.stop();
      await Promise.race([s.ended, sleep(5000).then(() => assert.fail('the stream did not end'))]);
      await stopped;
    } finally {
      await other.dispose();
    }
  });
});

const PG = /^postgres(ql)?:\/\//.test(process.env.TEST_DATABASE_URL ?? '');

describe('streams across two processes on one PostgreSQL database', { skip: !PG && 'needs TEST_DATABASE_URL=postgres://...' }, () => {
  let a: TestServer;
  let b: TestServer;
  before(async () => {
    const env = { NOTIF_SCHEDULER_POLL_MS: '100' };
    // A runs no scheduler: a delayed step can only be run by B's.
    a = await new TestServer(env).start(['--no-seed', '--no-scheduler']);
    b = await new TestServer(env, a.dbPath).start();
    await inAppWorkflow(a, 'live2', { body: 'two' });
    await delayedInAppWorkflow(a, 'live2-later', 1, 'later', 'later');
  });
  after(async () => {
    await b?.stop(true);
    await a?.stop(true);
    await b?.dispose();
    await a?.dispose();
  });

  it('a trigger on A reaches a stream held on B', async () => {
    await ensureSubscriber(a, 'pg-x');
    const s = await openStream(b, 'pg-x');
    try {
      await s.next((e) => e.event === 'unseen');
      await triggerEvent(a, { name: 'live2', to: 'pg-x' });
      await s.next((e) => e.event === 'message' && e.data.content[0].content === 'two', 'the message on B');
      await s.next((e) => e.event === 'unseen' && e.data.count === 1);
    } finally {
      s.close();
    }
  });

  it('a mark-all on B updates the count on a stream held on A', async () => {
    await ensureSubscriber(a, 'pg-y');
    await triggerEvent(a, { name: 'live2', to: 'pg-y' });
    const s = await openStream(a, 'pg-y');
    try {
      await s.next((e) => e.event === 'unseen' && e.data.count === 1);
      assert.equal((await b.post(`${path('pg-y')}/messages/mark-all`, { markAs: 'read' })).status, 201);
      await s.next((e) => e.event === 'unseen' && e.data.count === 0, 'count 0 on A');
    } finally {
      s.close();
    }
  });

  it('a message committed late by B, though made before one already told, is replayed after Last-Event-ID (and only it)', async () => {
    await ensureSubscriber(a, 'pg-late');
    await createWorkflow(a, {
      workflowId: 'live2-feed',
      name: 'feed',
      steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'late', feedIdentifier: 'slow' } }],
    });
    const s = await openStream(a, 'pg-late');
    const { default: pg } = await import('pg');
    const locker = new pg.Client({ connectionString: a.dbPath });
    await locker.connect();
    try {
      await s.next((e) => e.event === 'unseen');
      // B's in-app step waits on the feeds table, its message made (its clock read) but not committed.
      await locker.query('begin');
      await locker.query('lock table feeds in access exclusive mode');
      const late = triggerEvent(b, { name: 'live2-feed', to: 'pg-late' });
      await sleep(500);
      await triggerEvent(a, { name: 'live2', to: 'pg-late' });
      const told = await s.next((e) => e.event === 'message', 'the message made second, committed first');
      assert.equal(told.data.content[0].content, 'two');
      s.close();
      await locker.query('commit');
      await late;
      const feed = await a.get(`${path('pg-late')}/notifications/feed`);
      const byBody = Object.fromEntries(feed.body.data.map((m: any) => [m.content, m.createdAt]));
      assert.ok(byBody.late < byBody.two, `'late' was made first (${byBody.late} < ${byBody.two}): creation order would miss it`);

      const again = await openStream(a, 'pg-late', { lastEventId: told.id });
      try {
        await again.next((e) => e.event === 'unseen' && e.data.count === 2);
        assert.deepEqual(again.events.map((e) => [e.event, e.data?.content?.[0].content]), [['message', 'late'], ['unseen', undefined]]);
      } finally {
        again.close();
      }
    } finally {
      s.close();
      await locker.end();
    }
  });

  it("a delayed step run by B's scheduler reaches a stream on A", async () => {
    await ensureSubscriber(a, 'pg-z');
    const s = await openStream(a, 'pg-z');
    try {
      await s.next((e) => e.event === 'unseen');
      await triggerEvent(a, { name: 'live2-later', to: 'pg-z' });
      await s.next((e) => e.event === 'message' && e.data.content[0].content === 'later', 'the delayed message on A', 10_000);
    } finally {
      s.close();
    }
  });
});
