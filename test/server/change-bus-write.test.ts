import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestDatabase } from './helpers.ts';
import { registerKey } from '../../server/src/db/keys.ts';
import type { Change } from '../../server/src/db/changes.ts';

// ChangeBus.writeAndPublish (PostgreSQL): a single write and the NOTIFY of its changes in one
// statement, so they commit together: the changes are sent when the write returned a row, never
// when it returned none or failed. (SQLite: undefined, the caller writes and publishes in a
// transaction.)

const HEARD_WAIT_MS = 10_000;
const POLL_MS = 20;

describe('a write and its changes in one statement', () => {
  it('sends the changes only when the write returned a row, and resolves to how many it returned', async () => {
    const { db, done } = await openTestDatabase();
    try {
      const tenant = await registerKey(db, 'change-bus-write-key', 'change-bus', 'production');
      const touch = (organizationId: string) => sql`update organizations set name = name where id = ${organizationId} returning id`;
      if (db.dialect !== 'postgres') {
        assert.equal(db.changes.writeAndPublish(db.kysely, touch(tenant.organizationId), [{ subscriberId: 'sub-sqlite' }]), undefined);
        return;
      }
      const heard: Change[] = [];
      const off = await db.changes.subscribe('sub-1', (change) => heard.push(change));
      try {
        assert.equal(await db.changes.writeAndPublish(db.kysely, touch('no-such-organization'), [{ subscriberId: 'sub-1', what: 'read' }]), 0);
        await assert.rejects(async () => db.changes.writeAndPublish(db.kysely, sql`update organizations set name = null where id = ${tenant.organizationId} returning id`, [{ subscriberId: 'sub-1', what: 'unread' }]));
        assert.equal(await db.changes.writeAndPublish(db.kysely, touch(tenant.organizationId), [{ subscriberId: 'sub-1', what: 'seen' }]), 1);
        // Changes arrive in commit order: once the last write's is heard, an earlier one sent would have been too.
        const deadline = Date.now() + HEARD_WAIT_MS;
        while (heard.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        assert.deepEqual(
          heard.map((change) => change.what),
          ['seen'],
          'only the write that returned a row was told',
        );
      } finally {
        off();
      }
    } finally {
      await done();
    }
  });
});
