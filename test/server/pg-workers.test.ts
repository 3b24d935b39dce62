import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, TestServer } from './helpers.ts';
import { delayedInAppWorkflow, triggerEvent } from './fixtures.ts';
import { dbQuery, sleep, waitFor } from './engine-fixtures.ts';

// Two server processes on one PostgreSQL database share 1,000 due jobs: each runs once, both take
// part. They share snoozed messages' wake-ups alike: each message wakes once. Only with TEST_DATABASE_URL=postgres://... (scripts/ci-postgres.sh).

const PG = /^postgres(ql)?:\/\//.test(process.env.TEST_DATABASE_URL ?? '');
const SUBSCRIBERS = 1000;
const BATCH = 100;

describe('two processes on one PostgreSQL database', { skip: !PG && 'needs TEST_DATABASE_URL=postgres://...' }, () => {
  let a: TestServer;
  let b: TestServer;
  /** Takes the triggers; its scheduler is off, so a and b race for every job by polling alone. */
  let front: TestServer;
  before(async () => {
    const env = { NOTIF_SCHEDULER_POLL_MS: '100' };
    a = await startServer(env);
    [b, front] = await Promise.all([new TestServer(env, a.dbPath).start(), new TestServer(env, a.dbPath).start(['--no-seed', '--no-scheduler'])]);
  });
  after(async () => {
    await front?.dispose();
    await b?.dispose();
    await a?.dispose();
  });

  it('share 1,000 due delayed jobs: exactly one message per notification, and both processes claimed some', async (t) => {
    await delayedInAppWorkflow(a, 'pg-later', 2, 'Hello {{subscriber.subscriberId}}', 'Later');
    for (let i = 0; i < SUBSCRIBERS; i += BATCH) {
      const to = Array.from({ length: BATCH }, (_, j) => `pg-sub-${i + j}`);
      await triggerEvent(front, { name: 'pg-later', to, payload: { i } });
    }
    // A trigger to this many answers before its runs reach their delay: every delay, once they have.
    const delays = await waitFor('every run at its delay', async () => {
      const [{ n }] = await dbQuery(a, "SELECT count(*)::int AS n FROM jobs WHERE type = 'delay' AND status IN ('delayed', 'completed')");
      return n >= SUBSCRIBERS ? n : undefined;
    });
    assert.equal(delays, SUBSCRIBERS);

    await waitFor(
      `${SUBSCRIBERS} messages`,
      async () => {
        const [{ n }] = await dbQuery(a, "SELECT count(*)::int AS n FROM messages WHERE channel = 'in_app'");
        return n >= SUBSCRIBERS ? n : undefined;
      },
      30_000,
      200,
    );
    await sleep(1000);

    const [{ total, runs }] = await dbQuery(
      a,
      "SELECT count(*)::int AS total, count(DISTINCT notification_id)::int AS runs FROM messages WHERE channel = 'in_app'",
    );
    assert.equal(total, SUBSCRIBERS, 'exactly 1,000 in-app messages');
    assert.equal(runs, SUBSCRIBERS, 'one per notification');
    const twice = await dbQuery(a, "SELECT notification_id FROM messages WHERE channel = 'in_app' GROUP BY notification_id HAVING count(*) > 1");
    assert.deepEqual(twice, []);
    const statuses = await dbQuery(a, 'SELECT type, status, count(*)::int AS n FROM jobs GROUP BY type, status ORDER BY type');
    assert.deepEqual(statuses, [
      { type: 'delay', status: 'completed', n: SUBSCRIBERS },
      { type: 'in_app', status: 'completed', n: SUBSCRIBERS },
    ]);

    // Who woke each delay: the worker id each process wrote in the execution detail.
    const details = await dbQuery(a, "SELECT execution_details FROM jobs WHERE type = 'delay'");
    const workers = new Map<string, number>();
    for (const row of details) {
      const ended = JSON.parse(row.execution_details).filter((d: any) => d.status === 'Success');
      assert.equal(ended.length, 1, 'each delay ended once');
      const worker = JSON.parse(ended[0].raw).worker;
      workers.set(worker, (workers.get(worker) ?? 0) + 1);
    }
    assert.equal(workers.size, 2, `both processes claimed jobs: ${JSON.stringify([...workers])}`);
    for (const [, count] of workers) assert.ok(count > 0);
    t.diagnostic(`delays woken per process: ${[...workers.values()].join(' + ')}`);
  });

  it('share the wake-ups of 200 messages snoozed until the same moment: each wakes exactly once', async (t) => {
    const WAKES = 200;
    await a.post('/v2/workflows', { workflowId: 'pg-snooze', name: 'Snooze', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Later' } }] });
    for (let i = 0; i < WAKES; i += BATCH) {
      await triggerEvent(front, { name: 'pg-snooze', to: Array.from({ length: BATCH }, (_, j) => `pg-snoozer-${i + j}`) });
    }
    const messages = await waitFor(
      `${WAKES} messages`,
      async () => {
        const rows = await dbQuery(a, "SELECT m.id, s.subscriber_id FROM messages m JOIN subscribers s ON s.id = m.subscriber_id WHERE s.subscriber_id LIKE 'pg-snoozer-%' AND m.channel = 'in_app'");
        return rows.length >= WAKES ? rows : undefined;
      },
      30_000,
      200,
    );
    // Snoozed through the API for an hour, then all made due at one moment in the database: how long
    // 200 snoozes take to answer on a loaded machine (over 20 s at a load of 20 on two cores) must not
    // decide whether they share a moment. Both processes then race for the same wake-ups.
    const started = Date.now();
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const snoozed = await Promise.all(messages.map((message) => front.patch(`/v2/subscribers/${message.subscriber_id}/notifications/${message.id}/snooze`, { snoozeUntil: later })));
    for (const r of snoozed) assert.equal(r.status, 200, JSON.stringify(r.body));
    t.diagnostic(`${WAKES} snoozes answered in ${Date.now() - started} ms`);
    const due = Date.now() + 1000;
    await dbQuery(
      a,
      `WITH moved AS (UPDATE message_wakes SET run_at = ? RETURNING message_id) UPDATE messages SET snoozed_until = ? WHERE id IN (SELECT message_id FROM moved)`,
      [due, new Date(due).toISOString()],
    );
    await waitFor(
      'every message to wake',
      async () => {
        const [{ n }] = await dbQuery(a, "SELECT count(*)::int AS n FROM messages WHERE snoozed_until IS NOT NULL");
        const [{ w }] = await dbQuery(a, 'SELECT count(*)::int AS w FROM message_wakes');
        return n === 0 && w === 0 ? true : undefined;
      },
      30_000,
      200,
    );
    await sleep(1000);
    const woken = await dbQuery(a, "SELECT m.redelivered_at FROM messages m JOIN subscribers s ON s.id = m.subscriber_id WHERE s.subscriber_id LIKE 'pg-snoozer-%'");
    assert.equal(woken.length, WAKES);
    assert.deepEqual(
      woken.map((row) => JSON.parse(row.redelivered_at).length),
      woken.map(() => 1),
      'each woke once',
    );
    const [{ distinct }] = await dbQuery(a, "SELECT count(DISTINCT seq)::int AS distinct FROM messages m JOIN subscribers s ON s.id = m.subscriber_id WHERE s.subscriber_id LIKE 'pg-snoozer-%'");
    assert.equal(distinct, WAKES, 'each numbered again once, for the streams');
  });
});
