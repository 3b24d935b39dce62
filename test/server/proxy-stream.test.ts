import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInboxProxy, subscriberHash, toNodeListener } from '../../server/src/proxy.ts';
import { KEYS, TestServer } from './helpers.ts';
import { ensureSubscriber, inAppWorkflow, triggerEvent } from './fixtures.ts';
import { waitFor } from './engine-fixtures.ts';
import { openStream } from './stream-fixtures.ts';

// The proxy passes the stream through, unbuffered, for the subscriber whose hash is right, and for
// no other; a page that leaves frees the stream on the service.

const HMAC_KEY = 'host-app-secret';
const as = (subscriberId: string, hash = subscriberHash(subscriberId, HMAC_KEY)) => ({ 'x-subscriber-id': subscriberId, 'x-subscriber-hash': hash });

describe('inbox proxy: the stream', () => {
  let service: TestServer;
  let proxy: Server;
  let url: string;
  const openOnService = async () => (await service.get('/__streams')).body.open as number;

  before(async () => {
    service = await new TestServer().start(['--no-seed', '--faults']);
    await inAppWorkflow(service, 'hello', { subject: 'Hi', body: 'b' });
    await ensureSubscriber(service, 'ada');
    await ensureSubscriber(service, 'grace');
    proxy = createServer(toNodeListener(createInboxProxy({ serviceUrl: service.url, apiKey: KEYS.a, hmacKey: HMAC_KEY, basePath: '/notif' })));
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/notif`;
  });
  after(async () => {
    proxy?.closeAllConnections();
    proxy?.close();
    await service?.stop(true);
    await service?.dispose();
  });

  it('streams events as they happen for the hashed subscriber, and frees the stream when the page leaves', async () => {
    const before = await openOnService();
    const s = await openStream(url, 'ada', { headers: as('ada') });
    assert.equal(s.status, 200);
    assert.match(s.headers.get('content-type') ?? '', /^text\/event-stream/);
    await s.next((e) => e.event === 'unseen' && e.data.count === 0, 'the first count');
    await triggerEvent(service, { name: 'hello', to: 'ada' });
    const m = await s.next((e) => e.event === 'message', 'the message, while the stream is open');
    assert.equal(m.data.subject, 'Hi');
    assert.equal(await openOnService(), before + 1);
    s.close();
    await waitFor('the service freed the stream', async () => ((await openOnService()) === before ? true : undefined), 5000);
  });

  it('passes Last-Event-ID on', async () => {
    const s = await openStream(url, 'ada', { headers: { ...as('ada'), 'last-event-id': 'ffffffffffffffffffffffff' } });
    try {
      await s.next((e) => e.event === 'unseen');
      assert.equal(s.events[0]!.event, 'refetch');
    } finally {
      s.close();
    }
  });

  it("refuses another subscriber's stream, and a wrong hash", async () => {
    const other = await openStream(url, 'grace', { headers: as('ada') });
    assert.equal(other.status, 403);
    const wrong = await openStream(url, 'grace', { headers: as('grace', subscriberHash('grace', 'not-the-key')) });
    assert.equal(wrong.status, 401);
    const none = await openStream(url, 'grace', { headers: {} });
    assert.equal(none.status, 401);
  });
});
