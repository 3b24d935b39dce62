import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { createInboxProxy, subscriberHash, type InboxProxyOptions } from '../../server/src/proxy.ts';
import { KEYS, TestServer } from './helpers.ts';
import { createWorkflow, ensureSubscriber, triggerEvent } from './fixtures.ts';
import { sleep, waitFor } from './engine-fixtures.ts';
import { incompressible, listen } from './bounds-fixtures.ts';

// The proxy bounds what one signed-in user can make it hold: a request keeps its place among the
// subscriber's `maxInFlight` until its answer is written to the client, not until it is read from
// the service; a client that stops reading is cut off after `writeTimeoutMs`; and its routes are
// rate limited by default, with limits a real inbox never meets. Against the real service (on
// PostgreSQL too with TEST_DATABASE_URL).

const HMAC_KEY = 'host-app-secret';
const as = (subscriberId: string) => ({ 'x-subscriber-id': subscriberId, 'x-subscriber-hash': subscriberHash(subscriberId, HMAC_KEY) });
/** What the feed asks for (src/store/store.ts). */
const FEED_FIELDS = '_id,subject,content,createdAt,read,seen,avatar,cta,templateIdentifier,transactionId,payload';

interface HeldAnswer {
  socket: Socket;
  /** The answer's status line, once it came. */
  status: Promise<string>;
  /** Every byte received, once the socket is read again. */
  received: Buffer[];
}

/**
 * Asks for `path` on a raw connection, reads the first chunk of the answer (its status line and
 * headers), and then stops reading, as a client that never takes the rest.
 */
function askWithoutReading(port: number, path: string, subscriberId: string): HeldAnswer {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  const received: Buffer[] = [];
  const status = new Promise<string>((resolve) => {
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      received.push(chunk);
      resolve(chunk.toString('latin1').split('\r\n')[0]!);
    });
    socket.once('close', () => resolve('closed'));
  });
  const headers = Object.entries(as(subscriberId))
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n`);
  return { socket, status, received };
}

/** Reads the rest of a held answer: true when it came whole (its last chunk), false when the proxy cut it off. */
function readRest(held: HeldAnswer, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const whole = () => Buffer.concat(held.received).includes('\r\n0\r\n\r\n');
    const timer = setTimeout(() => resolve(whole()), timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      resolve(whole());
    };
    held.socket.on('data', (chunk: Buffer) => {
      held.received.push(chunk);
      if (whole()) finish();
    });
    held.socket.once('close', finish);
    held.socket.resume();
  });
}

describe('proxy: a place is held until the answer is written', { timeout: 90_000 }, () => {
  const MAX_IN_FLIGHT = 4;
  const PAGE = `/notif/v1/subscribers/ada/notifications/feed?limit=100&fields=${FEED_FIELDS}`;
  const WRITE_TIMEOUT_MS = 10_000;
  let service: TestServer;
  let proxy: Awaited<ReturnType<typeof listen>>;
  const held: HeldAnswer[] = [];

  before(async () => {
    service = await new TestServer().start(['--no-seed']);
    await createWorkflow(service, { workflowId: 'note', name: 'Note', steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'Note {{payload.n}}', body: 'b' } }] });
    // A full page of 100 is about 8 MB: more than the kernel's buffers between the proxy and a
    // client that does not read take in (about 4 MB on loopback with Linux's default tcp_wmem).
    for (let n = 0; n < 100; n++) await triggerEvent(service, { name: 'note', to: 'ada', payload: { n, text: incompressible(80_000) } });
    // (The write timeout is an option this version does not know yet: passed as a variable, not a literal.)
    const options: InboxProxyOptions & { writeTimeoutMs: number } = { serviceUrl: service.url, apiKey: KEYS.a, hmacKey: HMAC_KEY, maxInFlight: MAX_IN_FLIGHT, writeTimeoutMs: WRITE_TIMEOUT_MS };
    proxy = await listen(createInboxProxy(options));
    // Once read whole: the service has compiled its schemas and read the pages from disk once.
    const warm = await fetch(`${proxy.url}${PAGE}`, { headers: as('ada') });
    assert.equal(warm.status, 200);
    await warm.arrayBuffer();
  });
  after(async () => {
    for (const answer of held) answer.socket.destroy();
    proxy?.close();
    await service?.dispose();
  });

  it('answers 429 past maxInFlight while earlier answers wait for a client that does not read, and cuts those off after writeTimeoutMs', async (t) => {
    const statuses: string[] = [];
    /** When each status line came, in ms from the first request. */
    const cameAt: number[] = [];
    const started = Date.now();
    // One after the other: each asked once the one before has its status line (its answer read from the service).
    for (let i = 0; i < 3 * MAX_IN_FLIGHT; i++) {
      const answer = askWithoutReading(proxy.port, PAGE, 'ada');
      held.push(answer);
      statuses.push(await answer.status);
      cameAt.push(Date.now() - started);
    }
    t.diagnostic(statuses.map((s, i) => `${s} at ${cameAt[i]} ms`).join('; '));
    // Only the answers that came within the write timeout of the first request are judged: none
    // of the unread ones can have been cut off (and its place freed) by then.
    const judged = statuses.filter((_, i) => cameAt[i]! < WRITE_TIMEOUT_MS);
    const begun = judged.filter((s) => / 200 /.test(s)).length;
    assert.ok(begun <= MAX_IN_FLIGHT, `${begun} answers under way at once for one subscriber (maxInFlight ${MAX_IN_FLIGHT})`);
    assert.ok(judged.length > MAX_IN_FLIGHT, `only ${judged.length} requests answered within ${WRITE_TIMEOUT_MS} ms: too slow to tell`);
    assert.ok(judged.slice(MAX_IN_FLIGHT).every((s) => / 429 /.test(s)), 'the others answered 429');

    // Past the write timeout, the answers nobody read were cut off, not kept whole for later.
    await sleep(2 * WRITE_TIMEOUT_MS);
    const whole = await Promise.all(held.filter((_, i) => / 200 /.test(statuses[i]!)).map((answer) => readRest(answer, 10_000)));
    assert.deepEqual(whole.filter(Boolean).length, 0, `${whole.filter(Boolean).length} of ${whole.length} answers waited whole for a client that stopped reading for ${2 * WRITE_TIMEOUT_MS} ms`);
    // And their places are free again.
    await waitFor('a place free again', async () => {
      const r = await fetch(`${proxy.url}/notif/v1/subscribers/ada/notifications/unseen`, { headers: as('ada') });
      await r.arrayBuffer();
      return r.status === 200 || undefined;
    }, 10_000, 200);
  });
});

describe('proxy: rate limited by default', { timeout: 90_000 }, () => {
  /** More requests than a real inbox makes in a burst (first load, a few pages, marks): all answered. */
  const BURST = 60;
  /** Far more than any inbox makes: the default limit is met before these are sent. */
  const FLOOD = 2000;
  const AT_ONCE = 8;
  let service: TestServer;
  let proxy: Awaited<ReturnType<typeof listen>>;

  before(async () => {
    service = await new TestServer().start(['--no-seed']);
    await ensureSubscriber(service, 'bob');
    await ensureSubscriber(service, 'carol');
    // Every option left to its default.
    proxy = await listen(createInboxProxy({ serviceUrl: service.url, apiKey: KEYS.a, hmacKey: HMAC_KEY }));
  });
  after(async () => {
    proxy?.close();
    await service?.dispose();
  });

  const unseen = async (subscriberId: string) => {
    const r = await fetch(`${proxy.url}/notif/v1/subscribers/${subscriberId}/notifications/unseen`, { headers: as(subscriberId) });
    return { status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json().catch(() => null)) as { statusCode?: number } | null };
  };

  it('answers an inbox\'s burst, and 429 with Retry-After to one subscriber flooding it, not to the others', async (t) => {
    for (let i = 0; i < BURST; i++) assert.equal((await unseen('bob')).status, 200, `request ${i + 1} of a burst of ${BURST}`);
    let sent = BURST;
    let limited: Awaited<ReturnType<typeof unseen>> | undefined;
    while (!limited && sent < FLOOD) {
      const answers = await Promise.all(Array.from({ length: AT_ONCE }, () => unseen('bob')));
      sent += AT_ONCE;
      for (const answer of answers) assert.ok(answer.status === 200 || answer.status === 429, `status ${answer.status}`);
      limited = answers.find((answer) => answer.status === 429);
    }
    t.diagnostic(limited ? `the first 429 after ${sent} requests` : `no 429 after ${sent} requests`);
    assert.ok(limited, `${FLOOD} requests of one subscriber met no rate limit`);
    assert.ok(Number(limited.retryAfter) >= 1, `Retry-After: ${limited.retryAfter}`);
    assert.equal(limited.body?.statusCode, 429);
    assert.equal((await unseen('carol')).status, 200, 'another subscriber is not limited');
  });
});
