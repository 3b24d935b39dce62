import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery } from 'kysely';
import { openDatabase, type Db } from '../../server/src/db/index.ts';
import { answersKept, claimKey, oldestAnswers } from '../../server/src/plugins/idempotency.ts';

// The idempotency keys' statements read only the rows they need, in the order of an index, however
// many keys an organization keeps (100,000 at its default cap): SQLite's query plans, as its
// planner makes them for the service (no ANALYZE). Read against every key of the organization, a
// claim took 15 ms on average in the capacity bench and grew with each key stored until the service
// fell behind; counting and evicting took 40 and 220 ms at the cap. On PostgreSQL the planner goes
// by its statistics: for an organization's oldest answers it may take idempotency_keys_created and
// skip other organizations' keys (34 ms past 200,000 of them), in PostgreSQL's own process and only
// when the organization is past a cap.

describe("idempotency keys' statements on SQLite: each reads through its index", () => {
  let dir: string;
  let db: Db;
  /** SQLite's plan of `query`, one line per step. */
  const planOf = async (query: { compile(): CompiledQuery }): Promise<string[]> => {
    const compiled = query.compile();
    const rows = await db.kysely.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
    return rows.rows.map((row) => row.detail);
  };

  before(async () => {
    if (process.env.TEST_DATABASE_URL) return;
    dir = mkdtempSync(join(tmpdir(), 'notif-idempotency-plans-'));
    db = await openDatabase({ location: join(dir, 'notif.db') });
    // An organization keeping answers of many subscribers, as the capacity bench leaves it.
    await db.kysely.transaction().execute(async (trx) => {
      for (let i = 0; i < 2000; i++) {
        await trx
          .insertInto('idempotency_keys')
          .values({ organization_id: 'org', key: `key-${i}`, request_hash: 'h', state: 'done', status_code: 201, body: '1', created_at: i, subscriber_key: `env subscriber-${i % 200}`, bytes: 1 })
          .execute();
      }
    });
  });
  after(async () => {
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a claim counts the subscriber's answers through idempotency_keys_subscriber", async (t) => {
    if (process.env.TEST_DATABASE_URL) return t.skip('SQLite only');
    const plan = await planOf(claimKey(db.kysely, { organizationId: 'org', key: 'new', requestHash: 'h', now: 1, subscriberKey: 'env subscriber-1' }));
    const reads = plan.filter((step) => step.includes('SEARCH kept') || step.includes('SCAN kept'));
    assert.equal(reads.length, 2, plan.join('\n'));
    for (const step of reads) assert.match(step, /USING INDEX idempotency_keys_subscriber \(organization_id=\? AND subscriber_key=\?\)/, plan.join('\n'));
  });

  it("an organization's answers are counted from idempotency_keys_organization_oldest alone, a subscriber's through its own index", async (t) => {
    if (process.env.TEST_DATABASE_URL) return t.skip('SQLite only');
    const ofOrganization = await planOf(answersKept(db.kysely, 'org', null));
    assert.equal(ofOrganization.length, 1, ofOrganization.join('\n'));
    assert.match(ofOrganization[0], /USING COVERING INDEX idempotency_keys_organization_oldest/);
    const ofSubscriber = await planOf(answersKept(db.kysely, 'org', 'env subscriber-1'));
    assert.equal(ofSubscriber.length, 1, ofSubscriber.join('\n'));
    assert.match(ofSubscriber[0], /USING INDEX idempotency_keys_subscriber \(organization_id=\? AND subscriber_key=\?\)/);
    // And what they count.
    assert.deepEqual(await answersKept(db.kysely, 'org', 'env subscriber-1').executeTakeFirst(), { keys: 10, bytes: 10 });
  });

  it('the oldest answers are read in the order of an index, no sort of all of them', async (t) => {
    if (process.env.TEST_DATABASE_URL) return t.skip('SQLite only');
    const ofOrganization = await planOf(oldestAnswers(db.kysely, 'org', null, 100));
    assert.match(ofOrganization.join('\n'), /USING INDEX idempotency_keys_organization_oldest/);
    assert.doesNotMatch(ofOrganization.join('\n'), /TEMP B-TREE/);
    const ofSubscriber = await planOf(oldestAnswers(db.kysely, 'org', 'env subscriber-1', 100));
    assert.match(ofSubscriber.join('\n'), /USING INDEX idempotency_keys_subscriber/);
    assert.doesNotMatch(ofSubscriber.join('\n'), /TEMP B-TREE/);
    // And they are the oldest.
    const oldest = await oldestAnswers(db.kysely, 'org', 'env subscriber-1', 3).execute();
    assert.deepEqual(oldest.map((row) => row.key), ['key-1', 'key-201', 'key-401']);
  });
});
