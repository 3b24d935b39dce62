import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { TestServer } from './helpers.ts';
import { createWorkflow, triggerEvent, unseenCount } from './fixtures.ts';
import { sleep } from './engine-fixtures.ts';
import { readStream, type ReadStream } from './bounds-fixtures.ts';

// A change and the notification that announces it to other processes' streams are one: on
// PostgreSQL the NOTIFY is sent in the transaction of the change it announces (or a periodic
// recount corrects any drift within seconds). A process killed (kill -9) after its UPDATE commits
// and before a separate pg_notify must not leave another process's stream telling a wrong count.
// A TCP proxy between process A and PostgreSQL holds A's first statement that sends a
// notification, and the test kills A then. Only with TEST_DATABASE_URL=postgres://...

const PG = /^postgres(ql)?:\/\//.test(process.env.TEST_DATABASE_URL ?? '');
/** How long another process's stream may tell a wrong count after the kill. */
const SETTLES_WITHIN_MS = 15_000;

/**
 * A TCP proxy to PostgreSQL that, once armed, holds for good the first chunk a connection sends
 * that names a notification (`pg_notify(...)` or `NOTIFY`), and everything that connection sends
 * after it, and says when it has.
 */
async function startHoldingProxy(target: URL) {
  let armed = false;
  let onHeld: () => void = () => {};
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect({ host: target.hostname, port: Number(target.port || 5432) });
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    let holding = false;
    inbound.on('data', (chunk: Buffer) => {
      if (holding) return;
      if (armed && chunk.toString('latin1').toLowerCase().includes('notify')) {
        holding = true;
        onHeld();
        return;
      }
      outbound.write(chunk);
    });
    outbound.on('data', (chunk: Buffer) => inbound.write(chunk));
    // A's side gone (killed): PostgreSQL's side goes too, which rolls back whatever it left open.
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    arm: () => (armed = true),
    held,
    through(url: string) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String((server.address() as net.AddressInfo).port);
      return u.toString();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('a process killed between a change and its notification', { skip: !PG && 'needs TEST_DATABASE_URL=postgres://...', timeout: 90_000 }, () => {
  let b: TestServer;
  let a: TestServer;
  let proxy: Awaited<ReturnType<typeof startHoldingProxy>>;
  let stream: ReadStream | undefined;

  before(async () => {
    b = await new TestServer().start(['--no-seed']);
    proxy = await startHoldingProxy(new URL(b.dbPath));
    a = await new TestServer({}, proxy.through(b.dbPath)).start(['--no-seed', '--no-scheduler']);
    await createWorkflow(b, { workflowId: 'note', name: 'Note', steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'Note', body: 'b' } }] });
    for (let i = 0; i < 100; i++) await triggerEvent(b, { name: 'note', to: 'ada', payload: { i } });
  });
  after(async () => {
    stream?.close();
    await a?.stop(true);
    await proxy?.close();
    await a?.dispose();
    await b?.dispose();
  });

  it("kill -9 of the process answering a mark-all: another process's stream tells the true count within seconds", async (t) => {
    stream = await readStream(b.url, 'ada');
    assert.equal(stream.status, 200);
    await stream.next((e) => e.data?.count === 100, 'the count of 100 unseen');
    proxy.arm();
    const answer = a.post('/v1/subscribers/ada/messages/mark-all', { markAs: 'seen' }).catch((err: Error) => err);
    // (A service that tells other processes without a NOTIFY of its own answers: it is killed then.)
    await Promise.race([proxy.held, answer]);
    await a.stop(true);
    await answer;

    const killedAt = Date.now();
    const told = () => stream!.events.filter((e) => typeof e.data?.count === 'number').at(-1)!.data.count as number;
    let truth = await unseenCount(b, 'ada');
    while (told() !== truth && Date.now() - killedAt < SETTLES_WITHIN_MS) {
      await sleep(250);
      truth = await unseenCount(b, 'ada');
    }
    t.diagnostic(`${Date.now() - killedAt} ms after the kill: the stream on B tells ${told()}, the true count is ${truth}`);
    assert.equal(told(), truth, `another process's stream still tells ${told()} unseen against a true ${truth}, ${SETTLES_WITHIN_MS} ms after the kill`);
    assert.equal(stream.ended, false, 'the stream is still open');
  });
});
