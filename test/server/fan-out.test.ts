import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type Reply, type TestServer } from './helpers.ts';
import { createWorkflow, ensureSubscriber, triggerEvent } from './fixtures.ts';
import { dbQuery, runsWritten } from './engine-fixtures.ts';

// The fan-out (server/src/engine/fan-out.ts): the leading in-app steps of triggers made at the same
// time are written together, in one transaction for many runs. Each run must still get exactly what
// it would get alone: its own message per step (rendered for its subscriber), or the step skipped
// with the reason its subscriber's preferences give; new and existing subscribers alike.

function ok(r: Reply) {
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

const SKIPS = {
  all: 'Step skipped: the subscriber turned every notification off (global preference)',
  channel: 'Step skipped: the subscriber turned in_app off for every workflow (global preference)',
  workflow: "Step skipped: the subscriber turned workflow 'fan' off (workflow preference)",
  workflowChannel: "Step skipped: the subscriber turned in_app off for workflow 'fan' (workflow preference)",
} as const;

describe('fan-out of concurrent triggers', () => {
  let server: TestServer;
  /** The 100 recipients: 40 existing (30 of them with a preference that blocks), 60 new (20 given as objects). */
  const recipients: (string | { subscriberId: string; firstName: string })[] = [];
  const blocked = new Map<string, string>();
  before(async () => {
    server = await startServer();
    const steps = ['one', 'two'].map((name) => ({ name, type: 'in_app', controlValues: { subject: `${name} {{payload.n}} for {{subscriber.firstName}}`, body: 'b' } }));
    await createWorkflow(server, { workflowId: 'fan', name: 'Fan', steps });
    const kinds = Object.keys(SKIPS) as (keyof typeof SKIPS)[];
    for (let i = 0; i < 40; i++) {
      const id = `fo-old-${i}`;
      await ensureSubscriber(server, id, { firstName: `Old${i}` });
      const kind = i < 30 ? kinds[i % kinds.length]! : undefined;
      if (kind === 'all') ok(await server.patch(`/v1/subscribers/${id}/preferences`, { enabled: false }));
      if (kind === 'channel') ok(await server.patch(`/v1/subscribers/${id}/preferences`, { channels: { in_app: false } }));
      if (kind === 'workflow') ok(await server.patch(`/v1/subscribers/${id}/preferences/fan`, { enabled: false }));
      if (kind === 'workflowChannel') ok(await server.patch(`/v1/subscribers/${id}/preferences/fan`, { channels: { in_app: false } }));
      if (kind) blocked.set(id, SKIPS[kind]);
      recipients.push(id);
    }
    for (let i = 0; i < 60; i++) recipients.push(i < 20 ? { subscriberId: `fo-new-${i}`, firstName: `New${i}` } : `fo-new-${i}`);
  });
  after(() => server?.dispose());

  it('two triggers to 100 subscribers at once: a message per step for each allowed run, the exact skip detail for each other', async () => {
    const [a, b] = await Promise.all(['A', 'B'].map((n) => triggerEvent(server, { name: 'fan', to: recipients, payload: { n } })));
    // A trigger to this many answers before it writes its runs.
    await runsWritten(server, a!.transactionId);
    await runsWritten(server, b!.transactionId);
    const ids = recipients.map((r) => (typeof r === 'string' ? r : r.subscriberId));
    const firstName = (id: string) => (/^fo-old-(\d+)$/.exec(id) ? `Old${id.slice(7)}` : Number(id.slice(7)) < 20 ? `New${id.slice(7)}` : '');
    for (const [n, t] of [['A', a], ['B', b]] as const) {
      const jobs = await dbQuery<{ subscriber: string; step_index: number | string; status: string; execution_details: string }>(
        server,
        `SELECT s.subscriber_id AS subscriber, j.step_index, j.status, j.execution_details FROM jobs j JOIN subscribers s ON s.id = j.subscriber_id
          WHERE j.transaction_id = ?`,
        [t.transactionId],
      );
      assert.equal(jobs.length, 200, `trigger ${n}: two jobs per run`);
      for (const job of jobs) {
        const last = JSON.parse(job.execution_details).at(-1);
        const why = blocked.get(job.subscriber);
        if (why) {
          assert.equal(job.status, 'skipped', `${job.subscriber} step ${job.step_index}`);
          assert.deepEqual([last.status, last.detail], ['Skipped', why], `${job.subscriber} step ${job.step_index}`);
        } else {
          assert.equal(job.status, 'completed', `${job.subscriber} step ${job.step_index}`);
          assert.deepEqual([last.status, last.detail], ['Success', 'Message created'], `${job.subscriber} step ${job.step_index}`);
        }
      }
      const messages = await dbQuery<{ subscriber: string; subject: string; seq: number | string | null }>(
        server,
        `SELECT s.subscriber_id AS subscriber, m.subject, m.seq FROM messages m JOIN subscribers s ON s.id = m.subscriber_id WHERE m.transaction_id = ?`,
        [t.transactionId],
      );
      const expected = ids
        .filter((id) => !blocked.has(id))
        .flatMap((id) => ['one', 'two'].map((step) => `${id}: ${step} ${n} for ${firstName(id)}`.trimEnd()))
        .sort();
      assert.deepEqual(messages.map((m) => `${m.subscriber}: ${m.subject}`.trimEnd()).sort(), expected, `trigger ${n}: exactly the allowed messages, each rendered for its subscriber`);
      assert.ok(messages.every((m) => Number(m.seq) > 0), 'every message numbered');
    }
    const seqs = await dbQuery<{ n: number | string; d: number | string }>(server, `SELECT COUNT(*) AS n, COUNT(DISTINCT seq) AS d FROM messages`);
    assert.equal(Number(seqs[0]!.n), Number(seqs[0]!.d), 'no number given twice');
    // The 60 new subscribers exist once each, those given as objects with their fields.
    const created = await dbQuery<{ subscriber_id: string; first_name: string | null }>(server, `SELECT subscriber_id, first_name FROM subscribers WHERE subscriber_id LIKE 'fo-new-%'`);
    assert.equal(created.length, 60);
    for (const s of created) assert.equal(s.first_name ?? '', firstName(s.subscriber_id), s.subscriber_id);
  });
});
