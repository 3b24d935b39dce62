import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { TestServer } from './helpers.ts';
import { ensureSubscriber, inAppWorkflow, triggerEvent, unseenCount } from './fixtures.ts';
import { waitFor } from './engine-fixtures.ts';
import { openStream } from './stream-fixtures.ts';

// A process's LISTEN connection can go silent: no error, no end (a NAT or firewall dropping its
// state, a partition, a database host that died hard). A TCP proxy between service A and PostgreSQL
// blackholes A's LISTEN connection (forwards nothing either way, closes nothing); B, on the same
// database directly, makes a change: A's heartbeat must find the connection silent, let it go and
// listen anew, and its stream must hear what it missed. Only with TEST_DATABASE_URL=postgres://...

const PG = /^postgres(ql)?:\/\//.test(process.env.TEST_DATABASE_URL ?? '');
const HEARTBEAT_MS = 500;

interface Piped {
  /** Its startup packet names the LISTEN connection's application_name. */
  listen: boolean;
  blackholed: boolean;
  /** A closed its socket: after its FIN, a byte sent to it was refused (a half-open socket takes it). */
  released: boolean;
}

/** Forwards connections to `target`; `blackhole()` silences the LISTEN connections open now. */
async function startProxy(target: URL) {
  const piped: Piped[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (inbound) => {
    const outbound = net.connect({ host: target.hostname, port: Number(target.port || 5432), allowHalfOpen: true });
    const conn: Piped = { listen: false, blackholed: false, released: false };
    let first = true;
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    inbound.on('data', (chunk) => {
      if (first) (first = false), (conn.listen = chunk.includes('notif-inbox listen')), piped.push(conn);
      if (!conn.blackholed) outbound.write(chunk);
    });
    outbound.on('data', (chunk) => conn.blackholed || inbound.write(chunk));
    outbound.on('end', () => conn.blackholed || inbound.end());
    inbound.on('end', () => {
      if (!conn.blackholed) return void outbound.end();
      // A sent its FIN: a socket it still holds open takes these bytes; one it let go answers with a reset.
      inbound.write('x');
      setTimeout(() => inbound.write('x', (err) => (conn.released = !!err)), 100);
    });
    inbound.on('close', () => outbound.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    piped,
    blackhole: () => piped.filter((c) => c.listen).forEach((c) => (c.blackholed = true)),
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('a silent LISTEN connection', { skip: !PG && 'needs TEST_DATABASE_URL=postgres://...' }, () => {
  let a: TestServer;
  let b: TestServer;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  before(async () => {
    b = await new TestServer().start();
    proxy = await startProxy(new URL(b.dbPath));
    const through = new URL(b.dbPath);
    through.hostname = '127.0.0.1';
    through.port = String(proxy.port);
    a = await new TestServer({ NOTIF_LISTEN_HEARTBEAT_MS: String(HEARTBEAT_MS) }, through.toString()).start(['--no-seed', '--no-scheduler']);
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
      assert.equal(proxy.piped.filter((c) => c.listen).length, 1, 'A listens through the proxy');

      proxy.blackhole();
      const t0 = Date.now();
      const from = s.events.length;
      await triggerEvent(b, { name: 'hb', to: 'hb-sub' });
      // Found out within two periods (one to ask, one to wait), then a new connection after 1 s.
      const within = 2 * HEARTBEAT_MS + 1000 + 3000;
      await s.next((e) => e.event === 'message', "B's message on A, through the silence", within, from);
      t.diagnostic(`B's message reached A's stream ${Date.now() - t0} ms after the silence began (heartbeat ${HEARTBEAT_MS} ms)`);
      await s.next((e) => e.event === 'unseen' && e.data.count === 2, 'the new count', 2000, from);
      const listens = proxy.piped.filter((c) => c.listen);
      assert.equal(listens.length, 2, 'A opened one new LISTEN connection');
      await waitFor('the silent connection let go', async () => listens[0]!.released || undefined, 2000, 50);
      // A's requests never used the silenced connection.
      assert.equal(await unseenCount(a, 'hb-sub'), 2);
    } finally {
      s.close();
    }
  });

  it('a graceful stop waits neither for the heartbeat nor for a silent connection to say goodbye', async (t) => {
    assert.ok(proxy.piped.some((c) => c.listen && !c.blackholed), 'A listens');
    proxy.blackhole();
    const t0 = Date.now();
    await a.stop();
    assert.ok(Date.now() - t0 < 3000, `stopped in ${Date.now() - t0} ms`);
    t.diagnostic(`stopped in ${Date.now() - t0} ms`);
    assert.doesNotMatch(a.output(), /shutdown took over/);
  });
});
