import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { adminQuery, expectErrorBody, KEYS, TestServer } from './helpers.ts';
import { ensureSubscriber, inAppWorkflow, triggerEvent } from './fixtures.ts';
import { waitFor } from './engine-fixtures.ts';
import { openStream, type Stream } from './stream-fixtures.ts';

// The stream's limits and hardening (server/src/inbox/stream-slots.ts, inbox/stream.ts): U+2028/U+2029 escaped in its
// JSON, no HEAD, a cap per subscriber (the newest ends the oldest) and per process (503 with
// Retry-After), and a stream whose client does not read ended once an event has waited
// SLOW_READER_MS for it (events are written one at a time, so the service buffers one at most).

const path = (s: string) => `/v1/subscribers/${encodeURIComponent(s)}`;

describe('stream limits', { timeout: 60_000 }, () => {
  let server: TestServer;
  const opened: Stream[] = [];
  const open = async (subscriberId: string) => {
    const s = await openStream(server, subscriberId);
    opened.push(s);
    return s;
  };
  const streams = async () => (await server.get('/__streams')).body as { open: number; bySubscriber: Record<string, number> };
  const closeAll = async () => {
    for (const s of opened.splice(0)) s.close();
    await waitFor('streams closed', async () => ((await streams()).open === 0 ? true : undefined));
  };

  before(async () => {
    // Events as large as the messages (their previews whole), and catch-ups of many of them told
    // as they are (not as one refetch), so a client that does not read fills the sockets' buffers
    // within a few messages.
    const wholeEvents = { NOTIF_STREAM_EVENT_BYTES: String(1024 * 1024), NOTIF_STREAM_CATCH_UP_BYTES: String(64 * 1024 * 1024) };
    server = await new TestServer({ NOTIF_STREAMS_PER_SUBSCRIBER: '3', NOTIF_MAX_STREAMS: '5', ...wholeEvents }).start(['--no-seed', '--faults']);
    await inAppWorkflow(server, 'limits', { subject: '{{payload.title}}', body: '{{payload.body}}' });
  });
  afterEach(closeAll);
  // Killed: an aborted fetch leaves a connection a graceful stop would wait for (see stream.test.ts).
  after(async () => {
    for (const s of opened) s.close();
    await server?.stop(true);
    await server?.dispose();
  });

  it('escapes U+2028 and U+2029 in its data, which still parses to the same text', async () => {
    await ensureSubscriber(server, 'lim-sep');
    const s = await open('lim-sep');
    await s.next((e) => e.event === 'unseen', 'the first count');
    const title = 'one\u2028retry: 0\u2029two';
    await triggerEvent(server, { name: 'limits', to: 'lim-sep', payload: { title, body: 'b' } });
    const m = await s.next((e) => e.event === 'message', 'the message');
    assert.equal(m.data.subject, title);
    assert.ok(!/[\u2028\u2029]/.test(s.text), 'no raw U+2028/U+2029 in the stream');
    assert.match(s.text, /one\\u2028retry: 0\\u2029two/);
  });

  it('answers HEAD without opening a stream', async () => {
    await ensureSubscriber(server, 'lim-head');
    const res = await fetch(`${server.url}${path('lim-head')}/notifications/stream`, { method: 'HEAD', headers: { authorization: `ApiKey ${KEYS.a}` } });
    assert.notEqual(res.status, 200);
    assert.equal((await streams()).open, 0);
  });

  it('keeps at most 3 (NOTIF_STREAMS_PER_SUBSCRIBER) streams per subscriber: a new one ends the oldest', async () => {
    await ensureSubscriber(server, 'lim-many');
    const first = await open('lim-many');
    for (let i = 0; i < 2; i++) await open('lim-many');
    assert.equal((await streams()).open, 3);
    const fourth = await open('lim-many');
    assert.equal(fourth.status, 200);
    await Promise.race([first.ended, new Promise((_, reject) => setTimeout(() => reject(new Error('the oldest stream still open')), 5000))]);
    await fourth.next((e) => e.event === 'unseen', 'the newest stream works');
    await waitFor('3 streams', async () => ((await streams()).open === 3 ? true : undefined));
  });

  it('keeps at most 5 (NOTIF_MAX_STREAMS) streams per process: past it a 503 with Retry-After', async () => {
    for (const id of ['lim-p1', 'lim-p2', 'lim-p3']) await ensureSubscriber(server, id);
    for (let i = 0; i < 3; i++) await open('lim-p1');
    const p2 = await open('lim-p2');
    await open('lim-p2');
    const refused = await open('lim-p3');
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '30');
    expectErrorBody({ status: refused.status, headers: refused.headers, body: refused.events[0]!.data }, 503);
    // A subscriber at its own cap still gets its newest stream (it ends its oldest).
    assert.equal((await open('lim-p1')).status, 200);
    p2.close();
    await waitFor('a stream freed', async () => ((await streams()).open === 4 ? true : undefined));
    const later = await open('lim-p3');
    assert.equal(later.status, 200);
    await later.next((e) => e.event === 'unseen', 'the count');
  });

  it('ends a stream whose client does not read once an event has waited for it (SLOW_READER_MS)', async () => {
    await ensureSubscriber(server, 'lim-slow');
    const url = new URL(server.url);
    const socket = connect(Number(url.port), url.hostname);
    socket.on('error', () => {});
    await new Promise((r) => socket.once('connect', r));
    socket.write(`GET ${path('lim-slow')}/notifications/stream HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: ApiKey ${KEYS.a}\r\n\r\n`);
    socket.pause(); // and never read again
    await waitFor('the stream open', async () => ((await streams()).open === 1 ? true : undefined));
    const body = 'x'.repeat(200_000);
    let sent = 0;
    try {
      for (; sent < 80 && (await streams()).open === 1; sent++) await triggerEvent(server, { name: 'limits', to: 'lim-slow', payload: { title: `t${sent}`, body } });
      // Each message takes about 400 KB on the wire (its body and its payload); the socket buffers
      // of both ends hold a few MB at most before an event waits in the service's buffer.
      await waitFor('the stream ended', async () => ((await streams()).open === 0 ? true : undefined));
      assert.ok(sent < 80, `ended after ${sent} messages`);
      console.log(`ended after ${sent} messages`);
    } finally {
      socket.destroy();
    }
  });
});

describe('stream limits per environment', { timeout: 60_000 }, () => {
  let server: TestServer;
  const opened: Stream[] = [];
  const open = async (subscriberId: string, key: string) => {
    const s = await openStream(server, subscriberId, { key });
    opened.push(s);
    return s;
  };
  const streams = async () => (await server.get('/__streams')).body as { open: number; bySubscriber: Record<string, number> };
  const ended = (s: Stream, what: string) =>
    Promise.race([s.ended, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what} still open`)), 5000))]);

  before(async () => {
    server = await new TestServer({ NOTIF_STREAMS_PER_SUBSCRIBER: '3', NOTIF_MAX_STREAMS: '6', NOTIF_STREAMS_PER_ENVIRONMENT: '5' }).start(['--no-seed', '--faults']);
    for (const id of ['env-a1', 'env-a2']) await ensureSubscriber(server, id);
    for (const id of ['env-b1', 'env-b2']) await ensureSubscriber(server, id, {}, KEYS.b);
  });
  after(async () => {
    for (const s of opened) s.close();
    await server?.stop(true);
    await server?.dispose();
  });

  it('caps one environment at NOTIF_STREAMS_PER_ENVIRONMENT, and a full process makes room for another environment from the largest', async () => {
    const a: Stream[] = [];
    for (const id of ['env-a1', 'env-a1', 'env-a1', 'env-a2', 'env-a2']) {
      const s = await open(id, KEYS.a);
      assert.equal(s.status, 200);
      a.push(s);
    }
    // Environment a is at its cap (5) with a slot of the process (6) free: refused, with Retry-After.
    const over = await open('env-a2', KEYS.a);
    assert.equal(over.status, 503);
    assert.equal(over.headers.get('retry-after'), '30');
    expectErrorBody({ status: over.status, headers: over.headers, body: over.events[0]!.data }, 503);
    assert.match(String(over.events[0]!.data.message), /environment/);
    // A subscriber at its own cap still replaces its oldest stream.
    const replacing = await open('env-a1', KEYS.a);
    assert.equal(replacing.status, 200);
    await ended(a.shift()!, "env-a1's oldest stream");
    a.push(replacing);

    // Environment b gets the last free slot; the process is then full (6).
    const b1 = await open('env-b1', KEYS.b);
    assert.equal(b1.status, 200);
    await b1.next((e) => e.event === 'unseen', "b's first stream works");
    await waitFor('6 streams', async () => ((await streams()).open === 6 ? true : undefined));
    // The process is full: b (1) still gets streams, each ending the oldest stream of a (5, then 4).
    const b2 = await open('env-b1', KEYS.b);
    assert.equal(b2.status, 200);
    await ended(a.shift()!, "a's oldest stream");
    const b3 = await open('env-b1', KEYS.b);
    assert.equal(b3.status, 200);
    await ended(a.shift()!, "a's next oldest stream");
    await b3.next((e) => e.event === 'unseen', "b's third stream works");
    // Even shares (3 and 3): nobody's stream is ended for another, and a gets none back either.
    assert.equal((await open('env-a2', KEYS.a)).status, 503);
    assert.equal((await open('env-b2', KEYS.b)).status, 503);
    await waitFor('6 streams', async () => ((await streams()).open === 6 ? true : undefined));
  });
});

describe('stream: PostgreSQL cannot listen', { timeout: 60_000 }, () => {
  let server: TestServer;
  const opened: Stream[] = [];
  /** Sets how many connections the service's database takes (from the admin database: this one may take none). */
  const limit = (n: number) => adminQuery(process.env.TEST_DATABASE_URL!, `alter database "${new URL(server.dbPath).pathname.slice(1)}" connection limit ${n}`);
  before(async () => {
    server = await new TestServer({ NOTIF_MAX_STREAMS: '2' }).start(['--no-seed']);
    await ensureSubscriber(server, 'lim-db');
  });
  after(async () => {
    for (const s of opened) s.close();
    if (server?.postgres) await limit(-1).catch(() => {});
    await server?.stop(true);
    await server?.dispose();
  });

  it('answers 503 with Retry-After when the LISTEN connection cannot be opened, holds no slot for it, and streams once it can', async (t) => {
    if (!server.postgres) return t.skip('PostgreSQL only (SQLite hears its changes in-process)');
    // No new connection to the service's database (the pool keeps the ones it has): the stream's
    // LISTEN connection, opened with the first stream, is refused.
    await limit(0);
    for (let i = 0; i < 3; i++) {
      const refused = await openStream(server, 'lim-db');
      opened.push(refused);
      assert.equal(refused.status, 503, `attempt ${i + 1}: ${refused.text}`);
      assert.equal(refused.headers.get('retry-after'), '2');
      expectErrorBody({ status: refused.status, headers: refused.headers, body: refused.events[0]?.data ?? JSON.parse(refused.text) }, 503);
    }
    await limit(-1);
    // The LISTEN connection is tried again a second after it failed; the three refused streams hold
    // no slot (NOTIF_MAX_STREAMS is 2).
    await waitFor('a stream once the database takes connections', async () => {
      const s = await openStream(server, 'lim-db');
      opened.push(s);
      if (s.status === 200) return s;
      assert.equal(s.status, 503);
      assert.match(s.text, /listen/, 'refused for the listen connection, not for slots');
      return undefined;
    }, 10_000, 300);
    const second = await openStream(server, 'lim-db');
    opened.push(second);
    assert.equal(second.status, 200, 'two slots are free');
  });
});
