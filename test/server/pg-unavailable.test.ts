import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer } from './helpers.ts';
import { ensureSubscriber } from './fixtures.ts';
import pg from 'pg';
import { startPgProxy } from './pg-proxy.ts';
import { waitFor } from './engine-fixtures.ts';

// The pool's connections to PostgreSQL going away under the service: silent (a host that died hard,
// a partition, a NAT or firewall dropping their state: no error, no end) or reset (a failover, a
// restart). A query on either must fail in bounded time with a 503 the client may retry, the process
// must live on, and the next requests must find new connections. A TCP proxy between service A and
// PostgreSQL silences or resets A's pool connections. Only with TEST_DATABASE_URL=postgres://...

const PG = /^postgres(ql)?:\/\//.test(process.env.TEST_DATABASE_URL ?? '');
const QUERY_TIMEOUT_MS = 1000;
const POOL = 2;

describe('the database going away under the service', { skip: !PG && 'needs TEST_DATABASE_URL=postgres://...' }, () => {
  let b: TestServer;
  let a: TestServer;
  let proxy: Awaited<ReturnType<typeof startPgProxy>>;
  const pool = (c: { app: string }) => c.app == 'notif-inbox';
  const unseen = () => a.get('/v1/subscribers/pg-sub/notifications/unseen');

  before(async () => {
    // (No scheduler on B either: its backends would wait for the locks below too.)
    b = await new TestServer().start(['--no-seed', '--no-scheduler']);
    await ensureSubscriber(b, 'pg-sub');
    proxy = await startPgProxy(new URL(b.dbPath));
    a = await new TestServer({ NOTIF_PG_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS), NOTIF_PG_POOL_SIZE: String(POOL) }, proxy.through(b.dbPath)).start([
      '--no-seed',
      '--no-scheduler',
    ]);
  });
  after(async () => {
    await a?.stop(true);
    await proxy?.close();
    await a?.dispose();
    await b?.dispose();
  });

  /** Every pool connection open (requests at once until the pool holds POOL) and idle again. */
  async function warm() {
    await waitFor(
      'the pool full',
      async () => {
        const replies = await Promise.all([unseen(), a.get('/v2/subscribers/pg-sub'), a.get('/v2/subscribers/pg-sub')]);
        assert.deepEqual(
          replies.map((r) => r.status),
          [200, 200, 200],
        );
        return proxy.piped.filter((c) => pool(c) && c.open && !c.blackholed).length >= POOL || undefined;
      },
      5000,
      0,
    );
  }

  /** Requests until one is answered 200; each other answer must be the 503 of an unavailable database. */
  async function recovers(within: number) {
    const until = Date.now() + within;
    for (;;) {
      const r = await unseen();
      if (r.status === 200) return;
      assert.equal(r.status, 503, JSON.stringify(r.body));
      assert.ok(Date.now() < until, `still ${r.status} after ${within} ms`);
    }
  }

  it('a silent connection: the query fails with a 503 after the timeout, and the next requests use new connections', { timeout: 20_000 }, async (t) => {
    await warm();
    const silenced = proxy.blackhole(pool);
    const t0 = Date.now();
    const r = await unseen();
    const took = Date.now() - t0;
    t.diagnostic(`answered ${r.status} after ${took} ms (query timeout ${QUERY_TIMEOUT_MS} ms)`);
    assert.equal(r.status, 503);
    assert.equal(r.headers.get('retry-after'), '1');
    assert.equal(r.body.statusCode, 503);
    assert.equal(r.body.error, 'Service Unavailable');
    assert.match(r.body.message, /database is unavailable or busy/);
    assert.equal(r.body.path, '/v1/subscribers/pg-sub/notifications/unseen');
    assert.ok(took >= QUERY_TIMEOUT_MS - 50 && took < QUERY_TIMEOUT_MS + 2000, `${took} ms`);
    await recovers(POOL * QUERY_TIMEOUT_MS + 3000);
    // The silenced connections were let go (their sockets closed), not kept half-open.
    await waitFor('the silenced connections let go', async () => silenced.every((c) => c.released) || undefined, 3000);
  });

  it('connections reset while their queries run: 503s at once, the process lives on, and the next requests succeed', { timeout: 20_000 }, async (t) => {
    await warm();
    // Silenced first, so that the queries are on the wire when the reset comes: one through pool.query
    // (the unseen count's named statement), one on a connection Kysely holds (a subscriber's read).
    const silenced = proxy.blackhole(pool);
    const t0 = Date.now();
    const pending = Promise.all([unseen(), a.get('/v2/subscribers/pg-sub')]);
    await new Promise((r) => setTimeout(r, 200));
    for (const c of silenced) c.reset();
    const replies = await pending;
    const took = Date.now() - t0;
    t.diagnostic(`answered ${replies.map((r) => r.status)} after ${took} ms`);
    assert.deepEqual(
      replies.map((r) => r.status),
      [503, 503],
      JSON.stringify(replies.map((r) => r.body)),
    );
    assert.ok(took < QUERY_TIMEOUT_MS, `${took} ms: the reset, not the timeout`);
    await recovers(POOL * QUERY_TIMEOUT_MS + 3000);
    assert.doesNotMatch(a.output(), /ECONNRESET|uncaught|Unhandled/i);
  });

  /** Runs `fn` while another session holds `table` (as another version's migration may); returns how many of A's backends were left waiting for it. */
  async function whileLocked(table: string, fn: () => Promise<void>): Promise<void> {
    const locker = new pg.Client({ connectionString: b.dbPath });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query(`lock table ${table} in access exclusive mode`);
      await fn();
      const waiting = async () =>
        (
          await locker.query(
            "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'notif-inbox' and wait_event_type = 'Lock'",
          )
        ).rows[0].n as number;
      await waitFor('no backend of A left waiting for the lock', async () => (await waiting()) === 0 || undefined, 3000);
    } finally {
      await locker.query('rollback').catch(() => {});
      await locker.end();
    }
  }

  it('a query waiting for a lock: a 503 after the timeout, and the database cancels the query (no backend left waiting)', { timeout: 20_000 }, async (t) => {
    await warm();
    await whileLocked('messages', async () => {
      const t0 = Date.now();
      const r = await unseen();
      t.diagnostic(`answered ${r.status} after ${Date.now() - t0} ms`);
      assert.equal(r.status, 503, JSON.stringify(r.body));
    });
    await recovers(POOL * QUERY_TIMEOUT_MS + 3000);
  });

  it("a transaction's query waiting for a lock: a 503 too, not the 500 of the rollback that meets the lost connection", { timeout: 20_000 }, async () => {
    await warm();
    // Cancelling a trigger (endpoint 18) selects its jobs FOR UPDATE in a transaction.
    await whileLocked('jobs', async () => {
      const r = await a.request('DELETE', '/v1/events/trigger/pg-locked');
      assert.equal(r.status, 503, JSON.stringify(r.body));
    });
    await recovers(POOL * QUERY_TIMEOUT_MS + 3000);
  });
});
