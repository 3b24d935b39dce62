import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openTestDatabase } from './helpers.ts';
import { registerKey } from '../../server/src/db/keys.ts';
import { saveWorkflow } from '../../server/src/workflows/workflows.ts';
import { trigger } from '../../server/src/engine/trigger.ts';

// A trigger to many subscribers writes its messages in transactions of a bounded number of runs
// (server/src/engine/fan-out.ts), the event loop free between two. On SQLite a transaction holds
// the one connection to its commit, so there a read made while the fan-out runs must be answered
// between its transactions, not after the whole step (before, a step's 100 runs were one
// transaction: a reader saw 0, then 100). Each run's message is still written once, and numbered
// in the order the transactions committed. Both databases (TEST_DATABASE_URL), in this process
// against the engine, with no HTTP between: the reader's queries are the other requests.

const RECIPIENTS = 100;
const STEPS = 3;
/** The most runs one SQLite transaction may write: a reader is answered at least this often within a step. */
const SQLITE_RUNS_PER_TRANSACTION = 25;
/** A large trigger of many SQLite transactions (12 of 25 runs). */
const LARGE_RECIPIENTS = 300;

describe('the fan-out of a large trigger', () => {
  it('writes each run once, in transactions another read gets in between (SQLite: at most 25 runs each)', async () => {
    const { db, done } = await openTestDatabase();
    try {
      const tenant = await registerKey(db, 'fan-out-turns-key', 'fan-out', 'production');
      const steps = Array.from({ length: STEPS }, (_, step) => ({ name: `step ${step}`, type: 'in_app' as const, controlValues: { body: `step ${step} for {{subscriber.subscriberId}}` } }));
      await saveWorkflow(db, tenant, { workflowId: 'wide', name: 'Wide', steps });
      const recipients = Array.from({ length: RECIPIENTS }, (_, i) => `wide-${i}`);

      // Another request's reads, one after another for as long as the trigger runs.
      let running = true;
      const seen: number[] = [];
      const reader = (async () => {
        while (running) {
          const row = await db.kysely.selectFrom('messages').select((eb) => eb.fn.countAll<number | string>().as('n')).where('channel', '=', 'in_app').executeTakeFirstOrThrow();
          seen.push(Number(row.n));
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const result = await trigger(db, tenant, { name: 'wide', to: recipients });
      // A trigger to this many answers once its runs are recorded, and writes them after.
      await result.background;
      running = false;
      await reader;
      assert.equal(result.status, 'processed');

      // Exactly once: a message per run and step, none twice, each numbered once.
      const rows = await db.kysely.selectFrom('messages').select(['subscriber_id', 'job_key', 'seq', 'content']).where('channel', '=', 'in_app').execute();
      assert.equal(rows.length, RECIPIENTS * STEPS);
      assert.equal(new Set(rows.map((row) => row.job_key)).size, RECIPIENTS * STEPS, 'one message per job');
      assert.equal(new Set(rows.map((row) => row.subscriber_id)).size, RECIPIENTS);
      const numbers = rows.map((row) => Number(row.seq));
      assert.ok(numbers.every((n) => Number.isInteger(n) && n > 0), 'every message numbered');
      assert.equal(new Set(numbers).size, numbers.length, 'no number twice');
      // A step's messages are numbered after the step before it (its transactions committed first).
      const stepOf = (content: string) => Number(/step (\d+)/.exec(content)![1]);
      for (let step = 1; step < STEPS; step++) {
        const before = Math.max(...rows.filter((row) => stepOf(row.content!) === step - 1).map((row) => Number(row.seq)));
        const after = Math.min(...rows.filter((row) => stepOf(row.content!) === step).map((row) => Number(row.seq)));
        assert.ok(after > before, `step ${step} numbered after step ${step - 1}`);
      }

      // The reader never saw a transaction half done, and was answered while the fan-out ran.
      const total = RECIPIENTS * STEPS;
      assert.ok(seen.every((n, i) => i === 0 || n >= seen[i - 1]!), 'counts only grow');
      const during = new Set(seen.filter((n) => n > 0 && n < total));
      assert.ok(during.size > 0, `a read answered while the messages were written (counts seen: ${[...new Set(seen)].join(', ')})`);
      if (db.dialect === 'sqlite') {
        // Between every two transactions of a step: every multiple of the transaction's runs.
        for (let written = SQLITE_RUNS_PER_TRANSACTION; written < total; written += SQLITE_RUNS_PER_TRANSACTION) {
          assert.ok(seen.includes(written), `a read answered after ${written} messages (counts seen: ${[...new Set(seen)].join(', ')})`);
        }
        assert.ok(seen.every((n) => n % SQLITE_RUNS_PER_TRANSACTION === 0), 'each transaction commits whole');
      }
    } finally {
      await done();
    }
  });

  it('lets a trigger to one subscriber take its turn: it waits for a transaction of a large trigger, not for all of them (SQLite)', async (t) => {
    if (process.env.TEST_DATABASE_URL) return t.skip('SQLite only: PostgreSQL writes a trigger of this size in one transaction');
    const { db, done } = await openTestDatabase();
    try {
      const tenant = await registerKey(db, 'fan-out-turns-key', 'fan-out', 'production');
      await saveWorkflow(db, tenant, { workflowId: 'large', name: 'Large', steps: [{ name: 'in-app', type: 'in_app' as const, controlValues: { body: 'to many' } }] });
      await saveWorkflow(db, tenant, { workflowId: 'single', name: 'Single', steps: [{ name: 'in-app', type: 'in_app' as const, controlValues: { body: 'to one' } }] });
      const many = Array.from({ length: LARGE_RECIPIENTS }, (_, i) => `many-${i}`);
      const written = async (workflowId: string) => {
        const row = await db.kysely.selectFrom('messages').select((eb) => eb.fn.countAll<number | string>().as('n')).where('template_identifier', '=', workflowId).executeTakeFirstOrThrow();
        return Number(row.n);
      };

      const largeTrigger = trigger(db, tenant, { name: 'large', to: many });
      // Once the large trigger's first transaction of messages has committed, a trigger to one subscriber.
      while ((await written('large')) === 0) await new Promise((resolve) => setImmediate(resolve));
      await trigger(db, tenant, { name: 'single', to: 'one' });
      const largeWhenSingleAnswered = await written('large');
      await (await largeTrigger).background;

      assert.equal(await written('single'), 1);
      assert.equal(await written('large'), LARGE_RECIPIENTS);
      assert.ok(
        largeWhenSingleAnswered < LARGE_RECIPIENTS,
        `the trigger to one was answered before the large one's last transaction (${largeWhenSingleAnswered} of ${LARGE_RECIPIENTS} messages written then)`,
      );
    } finally {
      await done();
    }
  });
});
