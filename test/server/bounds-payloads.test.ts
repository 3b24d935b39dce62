import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sqlOn, startServer, type TestServer } from './helpers.ts';
import { createWorkflow, getFeed, triggerEvent } from './fixtures.ts';
import { getNotification, notificationOf, sleep, waitFor } from './engine-fixtures.ts';
import { incompressible } from './bounds-fixtures.ts';

// A trigger's payload is stored once (the payloads table), and what collects it refers to it:
// a digest keeps the payloads of the triggers it merged by reference, not as copies (three 200 KB
// payloads were 600 KB more in the digest's job); and the scheduler's sweep deletes the stored
// payloads nothing refers to any more, once they are a day old (before: none ever was). Both
// databases (TEST_DATABASE_URL).

const WINDOW_S = 2;
const PAYLOAD_BYTES = 200_000;
const EVENTS = 3;
/** Bytes a digest job's column may hold for three events kept by reference: ids and a little JSON. */
const DIGEST_BYTES_BY_REFERENCE = 2_000;

describe('payloads referred to, not copied, and swept once nothing refers to them', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ NOTIF_PAYLOAD_SWEEP_MS: '200', NOTIF_SCHEDULER_POLL_MS: '100' });
    await createWorkflow(server, {
      workflowId: 'large-digest',
      name: 'Large digest',
      steps: [
        { name: 'collect', type: 'digest', controlValues: { amount: WINDOW_S, unit: 'seconds' } },
        { name: 'inbox', type: 'in_app', controlValues: { body: '{{step.events.length}} events: {{step.events.0.n}}, {{step.events.1.n}}, {{step.events.2.n}}' } },
      ],
    });
    await createWorkflow(server, { workflowId: 'note', name: 'Note', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'note {{payload.n}}' } }] });
  });
  after(() => server.dispose());

  it("a digest keeps its events' payloads by reference, and renders and shows them whole", async () => {
    const triggers = [];
    for (let n = 0; n < EVENTS; n++) triggers.push(await triggerEvent(server, { name: 'large-digest', to: 'digest-reader', payload: { n, blob: incompressible(PAYLOAD_BYTES) } }));
    const first = await notificationOf(server, triggers[0]!.transactionId);
    const [{ bytes }] = await sqlOn(server, `select length(digest) as bytes from jobs where notification_id = ? and type = 'digest'`, [first._id]);
    assert.ok(Number(bytes) <= DIGEST_BYTES_BY_REFERENCE, `the digest job holds ${bytes} bytes for ${EVENTS} events of ${PAYLOAD_BYTES} bytes`);
    // The API shows the events whole.
    const events = first.jobs[0].digest.events;
    assert.deepEqual(events.map((event: any) => event.n), [0, 1, 2]);
    assert.ok(events.every((event: any) => event.blob.length === PAYLOAD_BYTES), 'each event its whole payload');
    assert.equal(first.jobs[0].digest.payloadIds, undefined, 'the references are not shown');

    // The window ends: one message rendered from every event.
    const message = await waitFor('the digest message', async () => (await getFeed(server, 'digest-reader')).data[0], (WINDOW_S + 10) * 1000, 100);
    assert.equal(message.content, '3 events: 0, 1, 2');
    const done = await getNotification(server, first._id);
    assert.deepEqual(done.jobs.map((job: any) => job.status), ['completed', 'completed']);
    assert.deepEqual(done.jobs[0].digest.events.map((event: any) => event.n), [0, 1, 2]);
  });

  it('the sweep deletes stored payloads nothing refers to once a day old, and keeps the others', async () => {
    const referred = await triggerEvent(server, { name: 'note', to: 'sweep-reader', payload: { n: 1 } });
    const longAgo = '2000-01-01T00:00:00.000Z';
    // The trigger's payload, a day old and more: still referred to by its notification, job and message.
    await sqlOn(server, 'update payloads set created_at = ? where transaction_id = ?', [longAgo, referred.transactionId]);
    const orphan = (id: string, createdAt: string) =>
      sqlOn(
        server,
        `insert into payloads (id, environment_id, organization_id, transaction_id, payload, overrides, bytes, created_at)
          select ?, environment_id, organization_id, null, '{"orphan":true}', '{}', 17, ? from payloads where transaction_id = ?`,
        [id, createdAt, referred.transactionId],
      );
    // Nothing refers to these two: one old, one young (a trigger to topics whose pages are being written looks so).
    await orphan('orphan-old', longAgo);
    await orphan('orphan-young', new Date().toISOString());
    // (The sweep may take the old one at once: that both were written shows in the young one, below.)
    const exists = async (where: string, param: string) => Number((await sqlOn(server, `select count(*) as n from payloads where ${where} = ?`, [param]))[0].n) > 0;

    await waitFor('the old unreferenced payload deleted', async () => ((await exists('id', 'orphan-old')) ? undefined : true), 15_000, 100);
    // A few more sweeps: the others stay.
    await sleep(1000);
    assert.ok(await exists('id', 'orphan-young'), 'a young unreferenced payload stays');
    assert.ok(await exists('transaction_id', referred.transactionId), 'an old payload still referred to stays');
    const feed = await getFeed(server, 'sweep-reader');
    assert.equal(feed.data[0].content, 'note 1');
    assert.deepEqual(feed.data[0].payload, { n: 1 });
  });
});
