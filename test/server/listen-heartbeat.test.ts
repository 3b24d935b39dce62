import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer } from './helpers.ts';
import { ensureSubscriber, inAppWorkflow, triggerEvent, unseenCount } from './fixtures.ts';
import { waitFor } from './engine-fixtures.ts';
import { openStream } from './stream-fixtures.ts';
import { startPgProxy } from './pg-proxy.ts';

// A process's LISTEN connection can go silent: no error, no end (a NAT or firewall dropping its
// state, a partition, a database host that died hard). A TCP proxy between service A and PostgreSQL
// blackholes A's LISTEN connection (forwards nothing either way, closes nothing); B, on the same
// database directly, makes a change: A's heartbeat must find the connection silent, let it go and
// listen anew, and its stream must hear what it missed. Only with TEST_DATABASE_URL=postgres://...

const PG = /^postgres(ql)?:\/\//.test(process.env.TEST_DATABASE_URL ?? '');
const HEARTBEAT_MS = 500;

describe('a silent LISTEN connection', { skip: !PG && 'needs TEST_DATABASE_URL=postgres://...' }, () => {
  let a: TestServer;
  let b: TestServer;
  let proxy: Awaited<ReturnType<typeof startPgProxy>>;
  before(async () => {
    b = await new TestServer().start();
    proxy = await startPgProxy(new URL(b.dbPath));
    a = await new TestServer({ NOTIF_LISTEN_HEARTBEAT_MS: String(HEARTBEAT_MS) }, proxy.through(b.dbPath)).start(['--no-seed', '--no-scheduler']);
    await inAppWorkflow(b, 'hb', { body: 'through the silence' });
  });
  after(async () => {
    await a?.stop(true);
    await proxy?.close();
    await a?.dispose();
    await b?.dispose();
  });

  it("is found out by A's heartbeat and let go; A listens anew and its stream hears B's message", async (t) => {
    await ensureSubscriber(b, 'hb-sub');
    const s = await openStream(a, 'hb-sub');
    try {
      await s.next((e) => e.event === 'unseen' && e.data.count === 0);
      await triggerEvent(b, { name: 'hb', to: 'hb-sub' });
      await s.next((e) => e.event === 'unseen' && e.data.count === 1, 'the first message, before the silence');
      assert.equal(proxy.piped.filter((c) => c.app == 'notif-inbox listen').length, 1, 'A listens through the proxy');

      proxy.blackhole((c) => c.app == 'notif-inbox listen');
      const t0 = Date.now();
      const from = s.events.length;
      await triggerEvent(b, { name: 'hb', to: 'hb-sub' });
      // Found out within two periods (one to ask, one to wait), then a new connection after 1 s.
      const within = 2 * HEARTBEAT_MS + 1000 + 3000;
      await s.next((e) => e.event === 'message', "B's message on A, through the silence", within, from);
      t.diagnostic(`B's message reached A's stream ${Date.now() - t0} ms after the silence began (heartbeat ${HEARTBEAT_MS} ms)`);
      await s.next((e) => e.event === 'unseen' && e.data.count === 2, 'the new count', 2000, from);
      const listens = proxy.piped.filter((c) => c.app == 'notif-inbox listen');
      assert.equal(listens.length, 2, 'A opened one new LISTEN connection');
      await waitFor('the silent connection let go', async () => listens[0]!.released || undefined, 2000, 50);
      // A's requests never used the silenced connection.
      assert.equal(await unseenCount(a, 'hb-sub'), 2);
    } finally {
      s.close();
    }
  });

  it('a graceful stop waits neither for the heartbeat nor for a silent connection to say goodbye', async (t) => {
    assert.ok(proxy.piped.some((c) => c.app == 'notif-inbox listen' && !c.blackholed), 'A listens');
    proxy.blackhole((c) => c.app == 'notif-inbox listen');
    const t0 = Date.now();
    await a.stop();
    assert.ok(Date.now() - t0 < 3000, `stopped in ${Date.now() - t0} ms`);
    t.diagnostic(`stopped in ${Date.now() - t0} ms`);
    assert.doesNotMatch(a.output(), /shutdown took over/);
  });
});
