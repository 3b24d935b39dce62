import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ON_TIME_MS, startServer, TestServer } from './helpers.ts';
import { delayedInAppWorkflow, getFeed, triggerEvent } from './fixtures.ts';
import { dueAt, getNotification, notificationOf, sleep, waitFor } from './engine-fixtures.ts';

// The scheduler is persistent: a restart in the middle of a wait (graceful, or kill -9) loses
// nothing, and the step still fires on time; a process started after the due time runs what is overdue.

// The delay must outlast a restart: a server process takes 1.5-2.5 s to stop and start on a quiet
// machine, and a busy one (a CI machine running other suites) took more than 8 s. So the test
// restarts the server once first, and waits three times that long, and at least MIN_DELAY_S.
const MIN_DELAY_S = 8;

async function deliveredOnTime(server: TestServer, subscriberId: string, notificationId: string, due: number) {
  const untilDue = Math.max(0, due - Date.now());
  const m = await waitFor(`the message for ${subscriberId}`, async () => (await getFeed(server, subscriberId)).data[0], untilDue + 10_000);
  const late = Date.parse(m.createdAt) - due;
  assert.ok(late >= 0 && late < ON_TIME_MS, `fired ${late} ms after its due time`);
  await sleep(400);
  assert.equal((await getFeed(server, subscriberId)).data.length, 1, 'exactly once');
  const n = await getNotification(server, notificationId);
  assert.deepEqual(n.jobs.map((j: any) => j.status), ['completed', 'completed']);
}

describe('scheduler across restarts', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    const restartStarted = Date.now();
    await server.restart();
    const restartSeconds = (Date.now() - restartStarted) / 1000;
    const delaySeconds = Math.max(MIN_DELAY_S, Math.ceil(3 * restartSeconds));
    await delayedInAppWorkflow(server, 'later', delaySeconds, 'Hello {{payload.n}}', 'Later');
    await delayedInAppWorkflow(server, 'soon', 1, 'Hello {{payload.n}}', 'Soon');
  });
  after(() => server.dispose());

  for (const hard of [false, true]) {
    it(`a ${hard ? 'kill -9' : 'graceful'} restart in the middle of a delay: the message still arrives on time`, async () => {
      const subscriberId = hard ? 'rs-hard' : 'rs-soft';
      const t = await triggerEvent(server, { name: 'later', to: subscriberId, payload: { n: 1 } });
      const n = await notificationOf(server, t.transactionId);
      const due = dueAt(n.jobs[0]);
      await server.restart(hard);
      assert.ok(Date.now() < due - 200, 'the server was back before the due time');
      assert.equal((await getFeed(server, subscriberId)).data.length, 0);
      await deliveredOnTime(server, subscriberId, n._id, due);
    });
  }

  it('a process started with --no-scheduler runs no waits; one started later on the same database runs the overdue ones', async () => {
    // A second process on the same SQLite file (or PostgreSQL database), with its scheduler off.
    const quiet = await new TestServer({}, server.dbPath).start(['--no-seed', '--no-scheduler']);
    try {
      await server.stop();
      const t = await triggerEvent(quiet, { name: 'soon', to: 'rs-overdue', payload: { n: 2 } });
      const n = await notificationOf(quiet, t.transactionId);
      const due = dueAt(n.jobs[0]);
      await sleep(Math.max(0, due - Date.now()) + 800);
      assert.equal((await getFeed(quiet, 'rs-overdue')).data.length, 0, 'nothing ran without a scheduler');
      assert.equal((await getNotification(quiet, n._id)).jobs[0].status, 'delayed');

      await server.start();
      const up = Date.now();
      const m = await waitFor('the overdue message', async () => (await getFeed(server, 'rs-overdue')).data[0], 10_000);
      assert.ok(Date.parse(m.createdAt) - up < ON_TIME_MS, 'overdue jobs run as the scheduler starts');
      assert.ok(Date.parse(m.createdAt) > due);
      await sleep(400);
      assert.equal((await getFeed(quiet, 'rs-overdue')).data.length, 1);
    } finally {
      await quiet.dispose();
    }
  });
});
