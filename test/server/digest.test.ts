import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KEYS, ON_TIME_MS, startServer, type TestServer } from './helpers.ts';
import { allMessages, createWorkflow, triggerEvent } from './fixtures.ts';
import { dueAt, getNotification, messagesOfNotification, notificationOf, sleep, waitFor } from './engine-fixtures.ts';

// Digest steps: triggers of one workflow for one subscriber with the same payload[digestKey] inside
// the window merge into the first trigger's run, which goes on once with every event.

// The window must outlast the triggers a test sends into it: three in turn take about 50 ms on a
// quiet machine and took more than the 2 s window on a loaded one (the third then started a digest
// of its own). So the window is at least MIN_WINDOW_S, and four times what three triggers just took.
const MIN_WINDOW_S = 2;
let windowSeconds = MIN_WINDOW_S;

async function messagesAfterWindow(server: TestServer, subscriberId: string, due: number, expected: number) {
  await sleep(Math.max(0, due - Date.now()));
  await waitFor(`${expected} message(s) for ${subscriberId}`, async () => {
    const all = await allMessages(server, subscriberId);
    return all.length >= expected ? all : undefined;
  });
  // A margin of a few scheduler rounds: nothing more comes.
  await sleep(600);
  const all = await allMessages(server, subscriberId);
  assert.equal(all.length, expected, JSON.stringify(all.map((m: any) => m.content)));
  return all;
}

describe('digest steps', { concurrency: true }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createWorkflow(server, { workflowId: 'warm-up', name: 'Warm-up', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'x' } }] });
    const started = Date.now();
    for (let i = 0; i < 3; i++) await triggerEvent(server, { name: 'warm-up', to: 'dg-warm-up' });
    windowSeconds = Math.max(MIN_WINDOW_S, Math.ceil((4 * (Date.now() - started)) / 1000));
    await createWorkflow(server, {
      workflowId: 'comments',
      name: 'Comments',
      steps: [
        { name: 'collect', type: 'digest', controlValues: { amount: windowSeconds, unit: 'seconds', digestKey: 'postId' } },
        {
          name: 'inbox',
          type: 'in_app',
          controlValues: {
            subject: '{{step.total_count}} new comments on {{payload.postId}}',
            body: '{{step.events.length}} comments: {{step.events.0.author}}, {{step.events.1.author}}, {{step.events.2.author}} ({{step.digest.total_count}})',
          },
        },
      ],
    });
    await createWorkflow(server, {
      workflowId: 'activity',
      name: 'Activity (no digestKey)',
      steps: [
        { name: 'collect', type: 'digest', controlValues: { amount: windowSeconds, unit: 'seconds' } },
        { name: 'inbox', type: 'in_app', controlValues: { body: '{{step.total_count}} events' } },
      ],
    });
  });
  after(() => server.dispose());

  it('merges 3 triggers into one run: one in-app message listing the 3 events', async () => {
    const ts = [];
    for (const author of ['Ada', 'Grace', 'Alan']) {
      ts.push(await triggerEvent(server, { name: 'comments', to: 'dg-1', payload: { postId: 'p1', author } }));
    }
    const [first, ...rest] = await Promise.all(ts.map((t) => notificationOf(server, t.transactionId)));
    assert.equal(first.jobs[0].status, 'delayed');
    assert.equal(first._digestedNotificationId, undefined);
    assert.deepEqual(first.jobs[0].digest.events, [
      { postId: 'p1', author: 'Ada' },
      { postId: 'p1', author: 'Grace' },
      { postId: 'p1', author: 'Alan' },
    ]);
    assert.equal(first.jobs[0].digest.digestKey, 'postId');
    for (const n of rest) {
      assert.equal(n._digestedNotificationId, first._id);
      assert.deepEqual(n.jobs.map((j: any) => j.status), ['merged', 'skipped']);
      assert.equal(n.jobs[0].executionDetails.at(-1).status, 'Warning');
      assert.match(n.jobs[0].executionDetails.at(-1).detail, /^Digested into/);
    }

    const due = dueAt(first.jobs[0]);
    assert.ok(Math.abs(due - Date.parse(first.createdAt) - windowSeconds * 1000) < 50, 'the window runs from the first trigger');
    const [m] = await messagesAfterWindow(server, 'dg-1', due, 1);
    assert.equal(m.subject, '3 new comments on p1');
    assert.equal(m.content, '3 comments: Ada, Grace, Alan (3)');
    assert.equal(m._notificationId, first._id);
    assert.ok(Date.parse(m.createdAt) - due < ON_TIME_MS, 'on time');
    const done = await getNotification(server, first._id);
    assert.deepEqual(done.jobs.map((j: any) => j.status), ['completed', 'completed']);
    assert.match(done.jobs[0].executionDetails.at(-1).detail, /3 event/);
    for (const n of rest) assert.equal((await messagesOfNotification(server, n._id)).length, 0);
  });

  it('keeps groups apart: another digestKey value, another subscriber, another environment', async () => {
    const a1 = await triggerEvent(server, { name: 'comments', to: ['dg-2', 'dg-2b'], payload: { postId: 'p1', author: 'A' } });
    await triggerEvent(server, { name: 'comments', to: 'dg-2', payload: { postId: 'p2', author: 'B' } });
    await triggerEvent(server, { name: 'comments', to: 'dg-2', payload: { postId: 'p1', author: 'C' } });
    await createWorkflow(server, { workflowId: 'comments', name: 'Comments', steps: [{ name: 'collect', type: 'digest', controlValues: { amount: 1, unit: 'seconds', digestKey: 'postId' } }, { name: 'inbox', type: 'in_app', controlValues: { body: '{{step.total_count}}' } }] }, KEYS.b);
    await triggerEvent(server, { name: 'comments', to: 'dg-2', payload: { postId: 'p1', author: 'D' } }, KEYS.b);
    const first = (await server.get('/v1/notifications', { query: { transactionId: a1.transactionId } })).body.data;
    const due = Math.max(...first.map((n: any) => dueAt(n.jobs[0])));
    const messages = await messagesAfterWindow(server, 'dg-2', due + 50, 2);
    assert.deepEqual(messages.map((m: any) => m.subject).sort(), ['1 new comments on p2', '2 new comments on p1']);
    assert.equal((await allMessages(server, 'dg-2b')).length, 1);
    const other = await allMessages(server, 'dg-2', {}, KEYS.b);
    assert.deepEqual(other.map((m: any) => m.content), ['1']);
  });

  it('a trigger after the window starts a new digest', async () => {
    const t1 = await triggerEvent(server, { name: 'activity', to: 'dg-3', payload: { n: 1 } });
    const n1 = await notificationOf(server, t1.transactionId);
    await messagesAfterWindow(server, 'dg-3', dueAt(n1.jobs[0]), 1);
    const t2 = await triggerEvent(server, { name: 'activity', to: 'dg-3', payload: { n: 2 } });
    const n2 = await notificationOf(server, t2.transactionId);
    assert.equal(n2._digestedNotificationId, undefined);
    assert.equal(n2.jobs[0].status, 'delayed');
  });

  it('concurrent triggers of one group never open two digests', async () => {
    const ts = await Promise.all(Array.from({ length: 8 }, (_, i) => triggerEvent(server, { name: 'activity', to: 'dg-4', payload: { i } })));
    const ns = await Promise.all(ts.map((t) => notificationOf(server, t.transactionId)));
    const open = ns.filter((n) => n.jobs[0].status === 'delayed');
    assert.equal(open.length, 1, JSON.stringify(ns.map((n) => n.jobs[0].status)));
    assert.equal(open[0].jobs[0].digest.events.length, 8);
    assert.ok(ns.filter((n) => n !== open[0]).every((n) => n._digestedNotificationId === open[0]._id));
    const [m] = await messagesAfterWindow(server, 'dg-4', dueAt(open[0].jobs[0]), 1);
    assert.equal(m.content, '8 events');
  });

  it('canceling the first trigger cancels the digest: no message', async () => {
    const t1 = await triggerEvent(server, { name: 'activity', to: 'dg-5', payload: { n: 1 } });
    await triggerEvent(server, { name: 'activity', to: 'dg-5', payload: { n: 2 } });
    const n1 = await notificationOf(server, t1.transactionId);
    assert.equal((await server.delete(`/v1/events/trigger/${t1.transactionId}`)).body, true);
    await sleep(Math.max(0, dueAt(n1.jobs[0]) - Date.now()) + 1500);
    assert.equal((await allMessages(server, 'dg-5')).length, 0);
  });
});
