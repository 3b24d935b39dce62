import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { createInboxProxy, subscriberHash } from '../../server/src/proxy.ts';
import { KEYS, TestServer } from './helpers.ts';
import { createWorkflow, ensureSubscriber, getFeed, inAppWorkflow, triggerEvent } from './fixtures.ts';
import { incompressible, listen, memoryOf, readStream, type ReadStream } from './bounds-fixtures.ts';

// Streams make progress whatever the sizes of the messages they tell. A catch-up after
// Last-Event-ID larger than NOTIF_STREAM_CATCH_UP_BYTES becomes a `refetch` (the client reads its
// first page) instead of one write the stream's buffer limit ends at once, which the next reconnect
// would build again, forever; an event carries at most NOTIF_STREAM_EVENT_BYTES of a message (a
// preview: the client fetches the rest); the streams of one subscriber share one read and one text
// of each event; and the proxy never ends a stream for one large event. On PostgreSQL too
// (TEST_DATABASE_URL).

/** The most bytes one event may take, as set here (a message's event is a bounded preview of it). */
const EVENT_BYTES = 16 * 1024;
/** The most bytes a catch-up may tell before it becomes a refetch, as set here. */
const CATCH_UP_BYTES = 128 * 1024;
const LIMITS = { NOTIF_STREAM_EVENT_BYTES: String(EVENT_BYTES), NOTIF_STREAM_CATCH_UP_BYTES: String(CATCH_UP_BYTES) };

/** Messages told while the client was away, and the size of each one's payload: over a megabyte in all. */
const MISSED = 50;
const MISSED_PAYLOAD_BYTES = 24 * 1024;
/** A payload just within the service's 1 MB body limit. */
const LARGE_PAYLOAD_BYTES = 1_000_000;

const isCount = (event: { data: any }) => typeof event.data?.count === 'number';
const isRefetch = (event: { data: any }) => event.data?.refetch === true;

/** The id of the subscriber's newest message (a stream event may carry a preview of a message: its id at least). */
async function newestMessageId(server: TestServer, subscriberId: string): Promise<string> {
  const page = await getFeed(server, subscriberId, { limit: 1, fields: '_id' });
  assert.equal(page.data.length, 1);
  return page.data[0]._id;
}

/** A small message is told live on `stream`: its event arrives while the stream stays open. */
async function hearsLive(server: TestServer, stream: ReadStream, subscriberId: string, title: string) {
  const from = stream.events.length;
  await triggerEvent(server, { name: 'small', to: subscriberId, payload: { title } });
  const told = await stream.next((e) => e.data?.message?.subject === title, `the live message '${title}'`, 15_000, from);
  assert.ok(told.bytes <= EVENT_BYTES, `a small message's event takes ${told.bytes} bytes`);
  assert.equal(stream.ended, false, 'the stream is still open');
}

describe('streams make progress whatever the sizes', { timeout: 120_000 }, () => {
  let server: TestServer;
  const opened: ReadStream[] = [];
  const open = async (subscriberId: string, lastEventId?: string) => {
    const stream = await readStream(server.url, subscriberId, { lastEventId });
    opened.push(stream);
    assert.equal(stream.status, 200);
    return stream;
  };

  before(async () => {
    server = await new TestServer(LIMITS).start(['--no-seed', '--faults']);
    await inAppWorkflow(server, 'small', { subject: '{{payload.title}}', body: 'b' });
    await createWorkflow(server, {
      workflowId: 'five',
      name: 'Five',
      steps: Array.from({ length: 5 }, (_, i) => ({ name: `step ${i}`, type: 'in_app', controlValues: { subject: `{{payload.title}} ${i}`, body: 'b' } })),
    });
  });
  // Killed: open streams would hold a graceful stop.
  after(async () => {
    for (const stream of opened) stream.close();
    await server?.stop(true);
    await server?.dispose();
  });

  it('a reconnect that missed more than NOTIF_STREAM_CATCH_UP_BYTES is told to refetch (or every message), stays open, and hears later messages live', async (t) => {
    await ensureSubscriber(server, 'away');
    const first = await open('away');
    const since = (await first.next(isCount, 'the first count')).id;
    first.close();
    // 50 messages of 24 KB payloads while the client is away: 1.2 MB of events.
    for (let i = 0; i < MISSED; i++) await triggerEvent(server, { name: 'small', to: 'away', payload: { title: `missed ${i}`, blob: incompressible(MISSED_PAYLOAD_BYTES) } });

    for (let attempt = 1; attempt <= 2; attempt++) {
      const again = await open('away', since);
      const count = await again.next(isCount, `the count after the catch-up (reconnect ${attempt})`, 15_000);
      const caughtUp = again.events.slice(0, again.events.indexOf(count));
      const told = caughtUp.filter((e) => e.data?.message).map((e) => e.data.message.subject);
      const bytes = caughtUp.reduce((sum, e) => sum + e.bytes, 0);
      t.diagnostic(`reconnect ${attempt}: ${caughtUp.length} events before the count (${told.length} messages, refetch ${caughtUp.some(isRefetch)}), ${bytes} bytes`);
      assert.ok(
        caughtUp.some(isRefetch) || told.length === MISSED,
        `a refetch, or every missed message: got ${told.length} messages and no refetch`,
      );
      if (!caughtUp.some(isRefetch)) assert.deepEqual(told, Array.from({ length: MISSED }, (_, i) => `missed ${i}`), 'oldest first');
      assert.ok(bytes <= CATCH_UP_BYTES + EVENT_BYTES, `the catch-up took ${bytes} bytes, past NOTIF_STREAM_CATCH_UP_BYTES (${CATCH_UP_BYTES})`);
      for (const event of caughtUp) assert.ok(event.bytes <= EVENT_BYTES, `an event of ${event.bytes} bytes`);
      await hearsLive(server, again, 'away', `live after reconnect ${attempt}`);
      again.close();
    }
  });

  it('a fast reader gets every event of one trigger of five in-app steps with a 1 MB payload, each a bounded preview, and the stream lives on', async (t) => {
    await ensureSubscriber(server, 'fast');
    const stream = await open('fast');
    await stream.next(isCount, 'the first count');
    const from = stream.events.length;
    await triggerEvent(server, { name: 'five', to: 'fast', payload: { title: 'large', blob: incompressible(LARGE_PAYLOAD_BYTES) } });
    await stream.next(() => stream.messages().length >= 5, 'the five messages', 30_000, from);
    const events = stream.events.slice(from).filter((e) => e.data?.message);
    t.diagnostic(`five message events of ${events.map((e) => e.bytes).join(', ')} bytes`);
    assert.deepEqual(events.map((e) => e.data.message.subject), [0, 1, 2, 3, 4].map((i) => `large ${i}`));
    assert.equal(new Set(events.map((e) => e.data.message._id)).size, 5, 'five messages, each told once');
    for (const event of events) assert.ok(event.bytes <= EVENT_BYTES, `an event of ${event.bytes} bytes, past NOTIF_STREAM_EVENT_BYTES (${EVENT_BYTES})`);
    await hearsLive(server, stream, 'fast', 'after the large ones');
  });
});

describe('many streams of one subscriber share the work of a large message', { timeout: 180_000 }, () => {
  const STREAMS = 200;
  /** How much the service's resident memory may grow while every stream hears the message. */
  const MAX_GROWTH_MB = 150;
  let server: TestServer;
  const opened: ReadStream[] = [];

  before(async () => {
    server = await new TestServer({ ...LIMITS, NOTIF_STREAMS_PER_SUBSCRIBER: String(STREAMS) }).start(['--no-seed', '--faults']);
    await inAppWorkflow(server, 'one', { subject: '{{payload.title}}', body: 'b' });
    await ensureSubscriber(server, 'many');
  });
  after(async () => {
    for (const stream of opened) stream.close();
    await server?.stop(true);
    await server?.dispose();
  });

  it(`${STREAMS} streams of one subscriber each get a 1 MB message, none is ended, and the service grows by less than ${MAX_GROWTH_MB} MB`, async (t) => {
    for (let i = 0; i < STREAMS; i++) opened.push(await readStream(server.url, 'many'));
    await Promise.all(opened.map((stream) => stream.next(isCount, 'the first count', 30_000)));
    assert.equal((await server.get('/__streams')).body.open, STREAMS);
    // The process's peak is counted from here (Linux: writing 5 to clear_refs resets VmHWM).
    writeFileSync(`/proc/${(server as unknown as { child: { pid: number } }).child.pid}/clear_refs`, '5');
    const before = memoryOf(server);

    await triggerEvent(server, { name: 'one', to: 'many', payload: { title: 'large', blob: incompressible(LARGE_PAYLOAD_BYTES) } });
    const messageId = await newestMessageId(server, 'many');
    await Promise.all(opened.map((stream) => stream.next((e) => e.data?.message?._id === messageId, 'the large message', 90_000)));
    const afterwards = memoryOf(server);
    const growth = afterwards.peak - before.rss;
    const sizes = opened.map((stream) => stream.events.find((e) => e.data?.message)!.bytes);
    t.diagnostic(`resident memory ${before.rss} MB, at most ${afterwards.peak} MB while ${STREAMS} streams heard it (+${growth} MB); each event ${Math.max(...sizes)} bytes at most`);
    assert.equal(opened.filter((stream) => stream.ended).length, 0, 'no stream ended');
    assert.ok(growth < MAX_GROWTH_MB, `the service grew by ${growth} MB while ${STREAMS} streams heard one 1 MB message`);
    for (const size of sizes) assert.ok(size <= EVENT_BYTES, `an event of ${size} bytes, past NOTIF_STREAM_EVENT_BYTES (${EVENT_BYTES})`);
  });
});

describe('through the proxy, a large event never ends the stream', { timeout: 60_000 }, () => {
  const HMAC_KEY = 'host-app-secret';
  const as = (subscriberId: string) => ({ 'x-subscriber-id': subscriberId, 'x-subscriber-hash': subscriberHash(subscriberId, HMAC_KEY) });
  let service: TestServer;
  let proxy: Awaited<ReturnType<typeof listen>>;
  let upstream: Server | undefined;
  let standIn: Awaited<ReturnType<typeof listen>> | undefined;
  const opened: ReadStream[] = [];

  before(async () => {
    service = await new TestServer(LIMITS).start(['--no-seed']);
    await inAppWorkflow(service, 'small', { subject: '{{payload.title}}', body: 'b' });
    // A message whose rendered texts repeat its payload (each cut at 64 KB): over a megabyte of JSON in all.
    const echo = '{{payload.text}}';
    await inAppWorkflow(service, 'echo', { subject: echo, body: echo, primaryAction: { label: echo }, secondaryAction: { label: echo } });
    await ensureSubscriber(service, 'ada');
    proxy = await listen(createInboxProxy({ serviceUrl: service.url, apiKey: KEYS.a, hmacKey: HMAC_KEY }));
  });
  after(async () => {
    for (const stream of opened) stream.close();
    proxy?.close();
    standIn?.close();
    upstream?.closeAllConnections();
    upstream?.close();
    await service?.stop(true);
    await service?.dispose();
  });

  it("a message of over a megabyte reaches the proxy's reader, and later messages too", async (t) => {
    const stream = await readStream(`${proxy.url}/notif`, 'ada', { headers: as('ada') });
    opened.push(stream);
    assert.equal(stream.status, 200);
    await stream.next(isCount, 'the first count');
    await triggerEvent(service, { name: 'echo', to: 'ada', payload: { text: incompressible(950_000) } });
    const messageId = await newestMessageId(service, 'ada');
    const told = await stream.next((e) => e.data?.message?._id === messageId, 'the large message', 15_000);
    t.diagnostic(`the large message's event: ${told.bytes} bytes`);
    assert.ok(told.bytes <= EVENT_BYTES, `an event of ${told.bytes} bytes`);
    await hearsLive(service, stream, 'ada', 'after the large one');
  });

  it('an event past what the proxy passes whole is not the end of the stream: the events after it still come', async () => {
    // A stand-in service: a small event, one of 2 MB, then another small one once asked.
    let sendLast = () => {};
    upstream = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`id: 1\ndata: ${JSON.stringify({ id: '1', count: 1 })}\n\n`);
      response.write(`id: 2\ndata: ${JSON.stringify({ id: '2', message: { _id: 'big', subject: 'big', payload: { blob: 'x'.repeat(2_000_000) } } })}\n\n`);
      sendLast = () => response.write(`id: 3\ndata: ${JSON.stringify({ id: '3', count: 2 })}\n\n`);
    });
    await new Promise<void>((resolve) => upstream!.listen(0, '127.0.0.1', resolve));
    standIn = await listen(createInboxProxy({ serviceUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, apiKey: KEYS.a, hmacKey: HMAC_KEY }));
    const stream = await readStream(`${standIn.url}/notif`, 'ada', { headers: as('ada') });
    opened.push(stream);
    assert.equal(stream.status, 200);
    await stream.next((e) => e.data?.count === 1, 'the first event');
    // The large event has been taken in (or refused) by the time the client asks for the next.
    await new Promise((resolve) => setTimeout(resolve, 500));
    sendLast();
    await stream.next((e) => e.data?.count === 2, 'the event after the large one', 10_000);
    assert.equal(stream.ended, false, 'the stream is still open');
  });
});
