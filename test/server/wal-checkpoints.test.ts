import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../../server/src/db/index.ts';

// SQLite: the write-ahead log is checkpointed (copied into the database file) by a worker thread
// (server/src/db/wal-checkpoints.ts), never by the service's own connection inside a commit on the
// event loop. Seen from outside: the service's connection checkpoints nothing by itself, and what
// its commits wrote reaches the database file all the same.

/** What the writes add to the database: well past SQLite's own 1,000-page (4 MB) threshold. */
const WRITTEN_BYTES = 8 * 1024 * 1024;
const ROW_BYTES = 64 * 1024;
const ROWS_PER_TRANSACTION = 8;
/** How long the worker may take to copy it all on a busy machine. */
const WAIT_MS = 30_000;
const POLL_MS = 50;

describe('the write-ahead log of SQLite', () => {
  it("is checkpointed by a worker thread, not by the service's connection", async (t) => {
    if (process.env.TEST_DATABASE_URL) return t.skip('SQLite only');
    const dir = mkdtempSync(join(tmpdir(), 'notif-wal-'));
    const file = join(dir, 'notif.db');
    const db = await openDatabase({ location: file });
    try {
      const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db.kysely);
      assert.equal(rows[0]?.wal_autocheckpoint, 0, "the service's connection never checkpoints in a commit");

      await sql`create table scratch (text text not null)`.execute(db.kysely);
      const before = statSync(file).size;
      const row = 'x'.repeat(ROW_BYTES);
      for (let written = 0; written < WRITTEN_BYTES; written += ROW_BYTES * ROWS_PER_TRANSACTION) {
        await db.kysely.transaction().execute(async (trx) => {
          for (let i = 0; i < ROWS_PER_TRANSACTION; i++) await sql`insert into scratch (text) values (${row})`.execute(trx);
        });
      }
      // The file grows only as checkpoints copy the log's pages into it.
      const deadline = Date.now() + WAIT_MS;
      while (statSync(file).size - before < WRITTEN_BYTES && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      assert.ok(statSync(file).size - before >= WRITTEN_BYTES, `the database file grew by ${statSync(file).size - before} bytes of the ${WRITTEN_BYTES} written`);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
