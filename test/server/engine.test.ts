import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ON_TIME_MS, startServer, type TestServer } from './helpers.ts';
import { allMessages, createWorkflow, getFeed, triggerEvent } from './fixtures.ts';
import { dueAt, getNotification, messagesOfNotification, notificationOf, sleep, waitFor } from './engine-fixtures.ts';

// Runs that wait: delay steps fire on time through the scheduler, resume the run, and stay canceled
// when endpoint 18 cancels them first.

const inbox = (body: string) => ({ name: `inbox-${body}`, type: 'in_app', controlValues: { body } });
/**
 * The second wait of 'twice': long enough to read the run between its two waits (a loaded machine
 * took more than a second from the first message to that read, and found the second wait over).
 */
const MIDDLE_WAIT_S = 5;
/** The second wait of 'twice-slowly': the test cancels within it. */
const SECOND_WAIT_S = 60;
const delay = (amount: number, unit = 'seconds', name = 'wait') => ({ name, type: 'delay', controlValues: { amount, unit } });

async function firstMessage(server: TestServer, subscriberId: string, timeoutMs = 8000) {
  return waitFor(`a message for ${subscriberId}`, async () => (await getFeed(server, subscriberId)).data[0], timeoutMs);
}

describe('delay steps', { concurrency: true }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createWorkflow(server, { workflowId: 'later', name: 'Later', steps: [delay(1), inbox('Hello {{payload.name}}')] });
    await createWorkflow(server, { workflowId: 'minute', name: 'Minute', steps: [delay(1, 'minutes'), inbox('late')] });
    await createWorkflow(server, {
      workflowId: 'twice',
      name: 'Twice',
      steps: [delay(1, 'seconds', 'w1'), inbox('first'), delay(MIDDLE_WAIT_S, 'seconds', 'w2'), { name: 'mail', type: 'email', controlValues: { body: 'x' } }, inbox('second')],
    });
    // As 'twice', with a second wait long enough to cancel in, however busy the machine (on a loaded
    // one, a second passed between the first message and the cancel, and the second step had run).
    await createWorkflow(server, {
      workflowId: 'twice-slowly',
      name: 'Twice slowly',
      steps: [delay(1, 'seconds', 'w1'), inbox('first'), delay(SECOND_WAIT_S, 'seconds', 'w2'), { name: 'mail', type: 'email', controlValues: { body: 'x' } }, inbox('second')],
    });
  });
  after(() => server.dispose());

  it('waits in the scheduler, then runs the next step when it is due', async () => {
    const t = await triggerEvent(server, { name: 'later', to: 'd-1', payload: { name: 'Ada' } });
    const n = await notificationOf(server, t.transactionId);
    assert.deepEqual(n.jobs.map((j: any) => j.status), ['delayed', 'pending']);
    const due = dueAt(n.jobs[0]);
    assert.ok(Math.abs(due - Date.parse(n.createdAt) - 1000) < 50, 'due one second after the trigger');
    assert.equal((await getFeed(server, 'd-1')).data.length, 0, 'nothing before the delay ends');

    const m = await firstMessage(server, 'd-1');
    assert.equal(m.content, 'Hello Ada');
    const late = Date.parse(m.createdAt) - due;
    assert.ok(late >= 0 && late < ON_TIME_MS, `fired ${late} ms after its due time`);

    const done = await getNotification(server, n._id);
    assert.deepEqual(done.jobs.map((j: any) => j.status), ['completed', 'completed']);
    assert.deepEqual(done.jobs[0].executionDetails.map((d: any) => d.status), ['Pending', 'Success']);
    assert.match(done.jobs[0].executionDetails[1].detail, /Delay ended/);
  });

  it('computes the due time from amount and unit', async () => {
    const t = await triggerEvent(server, { name: 'minute', to: 'd-2' });
    const n = await notificationOf(server, t.transactionId);
    assert.ok(Math.abs(dueAt(n.jobs[0]) - Date.parse(n.createdAt) - 60_000) < 50);
    assert.equal(n.jobs[0].step.metadata.unit, 'minutes');
  });

  it('runs a workflow with two delays step by step; a failed delivery after a wait does not stop it', async () => {
    const t = await triggerEvent(server, { name: 'twice', to: 'd-3' });
    const n = await notificationOf(server, t.transactionId);
    const first = await firstMessage(server, 'd-3');
    assert.equal(first.content, 'first');
    const mid = await getNotification(server, n._id);
    assert.deepEqual(mid.jobs.slice(0, 3).map((j: any) => j.status), ['completed', 'completed', 'delayed']);
    const secondDue = dueAt(mid.jobs[2]);
    const messages = await waitFor('the second message', async () => {
      const all = await allMessages(server, 'd-3');
      return all.length === 2 ? all : undefined;
    });
    assert.equal(messages[0].content, 'second');
    const late = Date.parse(messages[0].createdAt) - secondDue;
    assert.ok(late >= 0 && late < ON_TIME_MS, `second delay fired ${late} ms late`);
    const done = await getNotification(server, n._id);
    assert.deepEqual(done.jobs.map((j: any) => j.status), ['completed', 'completed', 'completed', 'failed', 'completed']);
    const email = (await messagesOfNotification(server, n._id)).find((m: any) => m.channel === 'email');
    assert.equal(email.status, 'error');
  });

  it('a delay canceled before it fires never fires: no message, ever', async () => {
    const t = await triggerEvent(server, { name: 'later', to: 'd-cancel', payload: { name: 'Never' } });
    const n = await notificationOf(server, t.transactionId);
    const due = dueAt(n.jobs[0]);
    const canceled = await server.delete(`/v1/events/trigger/${t.transactionId}`);
    assert.equal(canceled.status, 200);
    assert.equal(canceled.body, true);
    // Past the due time, with a margin of several scheduler rounds.
    await sleep(Math.max(0, due - Date.now()) + 1500);
    assert.equal((await getFeed(server, 'd-cancel')).data.length, 0);
    assert.equal((await messagesOfNotification(server, n._id)).length, 0);
    const after = await getNotification(server, n._id);
    assert.deepEqual(after.jobs.map((j: any) => j.status), ['canceled', 'canceled']);
    assert.equal(after.jobs[0].executionDetails.at(-1).status, 'Warning');
    assert.match(after.jobs[0].executionDetails.at(-1).detail, /^Canceled/);
    const again = await server.delete(`/v1/events/trigger/${t.transactionId}`);
    assert.equal(again.body, false, 'nothing left to cancel');
  });

  it('cancels the rest of a run after some steps ran: the second step never comes', async () => {
    const t = await triggerEvent(server, { name: 'twice-slowly', to: 'd-half' });
    const n = await notificationOf(server, t.transactionId);
    await firstMessage(server, 'd-half');
    const mid = await getNotification(server, n._id);
    assert.equal(mid.jobs[2].status, 'delayed');
    assert.equal((await server.delete(`/v1/events/trigger/${t.transactionId}`)).body, true);
    // Canceled jobs are never claimed again (the cancel clears their due time).
    const done = await getNotification(server, n._id);
    assert.deepEqual(done.jobs.map((j: any) => j.status), ['completed', 'completed', 'canceled', 'canceled', 'canceled']);
    await sleep(1500);
    const messages = await messagesOfNotification(server, n._id);
    assert.deepEqual(messages.map((m: any) => m.channel), ['in_app']);
  });
});
