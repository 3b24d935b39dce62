import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../server/src/db/index.ts';

// db.readNow (SQLite): the hot paths' reads without Kysely's machinery, and never inside another
// caller's open transaction (Kysely holds its other queries until it ends; a read then would see
// rows that may yet be rolled back).

describe('db.readNow', () => {
  it('reads at once outside a transaction, and steps aside (undefined) while one is open, its rows unseen', async (t) => {
    if (process.env.TEST_DATABASE_URL) return t.skip('SQLite only');
    const dir = mkdtempSync(join(tmpdir(), 'notif-read-now-'));
    const db = await openDatabase({ location: join(dir, 'notif.db') });
    try {
      const count = () => db.readNow!<{ n: number }>('select count(*) as n from organizations where name = ?', ['read-now']);
      assert.deepEqual(count(), [{ n: 0 }]);
      let inside: unknown = 'not run';
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const trx = db.kysely.transaction().execute(async (trx) => {
        await trx.insertInto('organizations').values({ id: 'org-read-now', name: 'read-now', created_at: new Date().toISOString() }).execute();
        await held; // another request's transaction, waiting on something
      });
      // The transaction has begun and inserted; it waits.
      for (let i = 0; i < 100 && inside === 'not run'; i++) {
        await new Promise((r) => setTimeout(r, 5));
        if (db.readNow!('select 1', []) === undefined) inside = count();
      }
      assert.equal(inside, undefined, 'no read inside the open transaction');
      // Through Kysely the read waits for it (here: it is committed).
      release();
      await trx;
      assert.deepEqual(count(), [{ n: 1 }]);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
