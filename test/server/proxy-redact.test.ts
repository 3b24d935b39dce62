import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInboxProxy, subscriberHash, toNodeListener } from '../../server/src/proxy.ts';
import { KEYS, sqlOn, TestServer } from './helpers.ts';
import { createWorkflow, ensureSubscriber, inAppWorkflow, triggerEvent } from './fixtures.ts';
import { chunks, openStream } from './stream-fixtures.ts';

// The proxy never hands a subscriber's delivery credentials (Subscriber.channels: chat webhook
// URLs, push device tokens) to the browser: it removes `channels` from every embedded subscriber in
// what it passes back, whatever server stands behind it. With the API key, server to server, the
// full Message stays as the spec says.

const HMAC_KEY = 'host-app-secret';
const as = (subscriberId: string) => ({ 'x-subscriber-id': subscriberId, 'x-subscriber-hash': subscriberHash(subscriberId, HMAC_KEY) });
const WEBHOOK = 'https://hooks.example.test/services/T0/B0/very-secret';
const TOKEN = 'device-token-that-must-stay-on-the-server';
/** What the elements ask for (src/store/feed-pages.ts FEED_FIELDS). */
const FEED_FIELDS = '_id,subject,content,createdAt,read,seen,avatar,cta,templateIdentifier,transactionId,payload';

async function listen(handler: (request: Request) => Promise<Response>): Promise<{ server: Server; url: string }> {
  const server = createServer(toNodeListener(handler));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Asserts the text carries no credential, and no subscriber in it has `channels` (however its JSON writes the key). */
function assertNoCredentials(text: string, what: string) {
  assert.equal(text.includes(WEBHOOK), false, `${what}: the webhook URL crossed`);
  assert.equal(text.includes(TOKEN), false, `${what}: the device token crossed`);
  let subscribers = 0;
  JSON.parse(text, function (key, value) {
    if (key === 'subscriber' && value && typeof value === 'object') {
      subscribers++;
      assert.equal('channels' in value, false, `${what}: a subscriber's channels crossed`);
    }
    return value;
  });
  assert.ok(subscribers > 0, `${what}: a subscriber is embedded`);
}

describe('inbox proxy: no delivery credentials reach the browser', () => {
  let service: TestServer;
  let proxy: { server: Server; url: string };
  let messageId: string;
  const call = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(`${proxy.url}/notif${path}`, { ...init, headers: { ...as('ada'), ...init.headers } });
  const feed = '/v1/subscribers/ada/notifications/feed';

  before(async () => {
    service = await new TestServer().start(['--no-seed']);
    await inAppWorkflow(service, 'hello', { subject: 'Hi {{payload.name}}', body: 'Welcome', primaryAction: { label: 'OK' } });
    await ensureSubscriber(service, 'ada', { firstName: 'Ada' });
    const chat = await service.put('/v1/subscribers/ada/credentials', { providerId: 'slack', credentials: { webhookUrl: WEBHOOK } });
    assert.equal(chat.status, 200, JSON.stringify(chat.body));
    const push = await service.put('/v1/subscribers/ada/credentials', { providerId: 'fcm', credentials: { deviceTokens: [TOKEN] } });
    assert.equal(push.status, 200, JSON.stringify(push.body));
    for (const name of ['one', 'two']) await triggerEvent(service, { name: 'hello', to: 'ada', payload: { name } });
    messageId = (await service.get(`${feed}?limit=1`)).body.data[0]._id;
    proxy = await listen(createInboxProxy({ serviceUrl: service.url, apiKey: KEYS.a, hmacKey: HMAC_KEY }));
  });
  after(async () => {
    proxy?.server.close();
    await service?.dispose();
  });

  it('the full feed has no channels through the proxy, and keeps them with the API key', async () => {
    const direct = await service.get(feed);
    assert.equal(direct.status, 200);
    assert.equal(JSON.stringify(direct.body).includes(WEBHOOK), true, 'the service itself keeps the webhook URL');
    assert.deepEqual(direct.body.data[0].subscriber.channels.map((c: any) => c.providerId).sort(), ['fcm', 'slack']);
    for (const encoding of ['br', 'gzip', 'identity']) {
      const r = await call(feed, { headers: { 'accept-encoding': encoding } });
      assert.equal(r.status, 200);
      const text = await r.text();
      assertNoCredentials(text, `feed (${encoding})`);
      // The rest of the Message as the spec says: the subscriber embedded, but for its channels.
      const body = JSON.parse(text);
      const { channels: _, ...rest } = direct.body.data[0].subscriber;
      assert.deepEqual(body.data[0].subscriber, rest);
      assert.deepEqual(
        body.data.map((m: any) => ({ ...m, subscriber: undefined })),
        direct.body.data.map((m: any) => ({ ...m, subscriber: undefined })),
      );
      assert.equal(body.totalCount, 2);
    }
  });

  it('the ETag of a redacted answer describes the body sent, and gets a 304 next time', async () => {
    const first = await call(feed, { headers: { 'accept-encoding': 'br' } });
    const text = await first.text();
    const etag = first.headers.get('etag')!;
    assert.match(etag, /^"[\w-]+"$/);
    const direct = await service.get(feed, { headers: { 'accept-encoding': 'identity' } });
    assert.notEqual(etag, direct.headers.get('etag'), 'not the tag of the text with the credentials');
    assert.equal(etag, `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`, 'the tag of the text sent, as the service makes its own');
    const again = await call(feed, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
    assert.equal(again.headers.get('etag'), etag);
    assert.equal(again.headers.get('cache-control'), 'private, no-cache');
    const other = await call(feed, { headers: { 'if-none-match': '"other"' } });
    assert.equal(other.status, 200);
    assert.equal(await other.text(), text);
  });

  it("the elements' projected page passes as it is, byte for byte, and its 304 still works", async () => {
    const path = `${feed}?limit=20&fields=${FEED_FIELDS}`;
    const direct = await fetch(`${service.url}${path}`, { headers: { authorization: `ApiKey ${KEYS.a}`, 'accept-encoding': 'br' } });
    const directText = await direct.text();
    const r = await call(path, { headers: { 'accept-encoding': 'br' } });
    assert.equal(r.status, 200);
    assert.equal(await r.text(), directText);
    const etag = r.headers.get('etag')!;
    assert.equal(etag, direct.headers.get('etag')!.replace(/-br"$/, '"'));
    const again = await call(path, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
  });

  it('mark-as, its replay, and action answers have no channels through the proxy, and keep them with the API key', async () => {
    const json = { 'content-type': 'application/json' };
    const markAs = JSON.stringify({ messageId: [messageId], markAs: 'seen' });
    const direct = await service.post('/v1/subscribers/ada/messages/mark-as', { messageId: [messageId], markAs: 'unseen' });
    assert.equal(direct.status, 201);
    assert.equal(JSON.stringify(direct.body).includes(WEBHOOK), true);
    for (let i = 0; i < 2; i++) {
      const r = await call('/v1/subscribers/ada/messages/mark-as', { method: 'POST', headers: { ...json, 'idempotency-key': 'redact-1' }, body: markAs });
      assert.equal(r.status, 201);
      if (i) assert.equal(r.headers.get('idempotency-replay'), 'true');
      const text = await r.text();
      assertNoCredentials(text, `mark-as ${i ? '(replayed)' : ''}`);
      const [m] = JSON.parse(text);
      assert.equal(m._id, messageId);
      assert.equal(m.seen, true);
      assert.equal(m.subscriber.subscriberId, 'ada');
      assert.equal(m.subscriber.firstName, 'Ada');
    }
    const directAction = await service.post(`/v1/subscribers/ada/messages/${messageId}/actions/primary`, { status: 'pending' });
    assert.equal(directAction.status, 201);
    assert.equal(JSON.stringify(directAction.body).includes(TOKEN), true);
    const action = await call(`/v1/subscribers/ada/messages/${messageId}/actions/primary`, { method: 'POST', headers: json, body: JSON.stringify({ status: 'done' }) });
    assert.equal(action.status, 201);
    const text = await action.text();
    assertNoCredentials(text, 'action');
    const body = JSON.parse(text);
    assert.equal(body.cta.action.status, 'done');
    assert.equal(body.subscriber.subscriberId, 'ada');
    // Answers with no Message pass as they were.
    const all = await call('/v1/subscribers/ada/messages/mark-all', { method: 'POST', headers: json, body: JSON.stringify({ markAs: 'read' }) });
    assert.equal(all.status, 201);
    assert.equal(typeof (await all.json()), 'number');
    const unseen = await call('/v1/subscribers/ada/notifications/unseen');
    assert.deepEqual(await unseen.json(), { count: 0 });
  });

  it("a push message's own device tokens do not cross either (mark-as and actions take any of the subscriber's messages)", async () => {
    const made = await service.post('/v1/integrations', { providerId: 'expo', channel: 'push', active: true, credentials: { apiKey: 'k' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const expo = await service.patch('/v1/subscribers/ada/credentials', { providerId: 'expo', credentials: { deviceTokens: [TOKEN] } });
    assert.equal(expo.status, 200, JSON.stringify(expo.body));
    await createWorkflow(service, { workflowId: 'pushed', name: 'Pushed', steps: [{ name: 'phone', type: 'push', controlValues: { subject: 'Shipped', body: 'Order' } }] });
    await triggerEvent(service, { name: 'pushed', to: 'ada' });
    let pushId: string | undefined;
    for (let i = 0; i < 50 && !pushId; i++) {
      pushId = (await sqlOn(service, `select m.id from messages m join subscribers s on s.id = m.subscriber_id where s.subscriber_id = 'ada' and m.channel = 'push'`))[0]?.id;
      if (!pushId) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(pushId, 'the push message was sent');
    const direct = await service.post('/v1/subscribers/ada/messages/mark-as', { messageId: [pushId], markAs: 'unread' });
    assert.equal(direct.status, 201);
    assert.deepEqual(direct.body[0].deviceTokens, [TOKEN], 'the service itself keeps the message\'s tokens');
    const r = await call('/v1/subscribers/ada/messages/mark-as', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messageId: [pushId], markAs: 'read' }) });
    assert.equal(r.status, 201);
    const text = await r.text();
    assertNoCredentials(text, 'mark-as of a push message');
    const [m] = JSON.parse(text);
    assert.equal(m._id, pushId);
    assert.equal(m.read, true);
    assert.equal('deviceTokens' in m, false);
    const action = await call(`/v1/subscribers/ada/messages/${pushId}/actions/primary`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'done' }) });
    if (action.status == 201) assertNoCredentials(await action.text(), 'action on a push message');
    else assert.ok(action.status >= 400 && action.status < 500, `action: ${action.status}`);
  });

  it("a failed chat delivery's errorText (the webhook's host, what it resolved to) does not cross; its errorId does", async () => {
    await createWorkflow(service, { workflowId: 'chatted', name: 'Chatted', steps: [{ name: 'room', type: 'chat', controlValues: { body: 'Shipped' } }] });
    await triggerEvent(service, { name: 'chatted', to: 'ada' });
    let chat: { id: string; error_text: string | null } | undefined;
    for (let i = 0; i < 100 && !chat?.error_text; i++) {
      chat = (await sqlOn(service, `select m.id, m.error_text from messages m join subscribers s on s.id = m.subscriber_id where s.subscriber_id = 'ada' and m.channel = 'chat'`))[0] as typeof chat;
      if (!chat?.error_text) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(chat?.error_text?.includes('hooks.example.test'), `the delivery failed naming the webhook's host: ${JSON.stringify(chat)}`);
    assert.ok(chat);
    const direct = await service.post('/v1/subscribers/ada/messages/mark-as', { messageId: [chat.id], markAs: 'unread' });
    assert.equal(direct.body[0].errorText, chat.error_text, 'the service itself keeps the error, for the API key');
    const r = await call('/v1/subscribers/ada/messages/mark-as', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messageId: [chat.id], markAs: 'read' }) });
    assert.equal(r.status, 201);
    const text = await r.text();
    assert.equal(text.includes('hooks.example.test'), false, text);
    const [m] = JSON.parse(text);
    assert.equal(m._id, chat.id);
    assert.equal('errorText' in m, false);
    assert.equal(m.errorId, direct.body[0].errorId);
    assert.ok(m.errorId);
  });

  it('a message event of the stream carries no subscriber, so no channels (a preview of the message)', async () => {
    const straight = await openStream(service, 'ada');
    const s = await openStream(`${proxy.url}/notif`, 'ada', { headers: as('ada') });
    try {
      assert.equal(s.status, 200);
      await s.next((e) => e.event === 'unseen', 'the first count');
      await straight.next((e) => e.event === 'unseen', 'the first count, straight');
      await triggerEvent(service, { name: 'hello', to: 'ada', payload: { name: 'live' } });
      const m = await s.next((e) => e.event === 'message', 'the message through the proxy');
      const d = await straight.next((e) => e.event === 'message', 'the message, straight');
      // A stream event is a preview of the message (the fields the elements show): the service
      // itself embeds no subscriber in it, and the proxy passes it as it is.
      assert.equal(d.data.subscriber, undefined, 'the service embeds no subscriber in a stream event');
      assert.equal(JSON.stringify(d.wire).includes(WEBHOOK) || JSON.stringify(d.wire).includes(TOKEN), false, 'no credential in the event, straight');
      assert.equal(m.data.subject, 'Hi live');
      assert.equal(m.data.subscriber, undefined);
      assert.equal(JSON.stringify(m.wire).includes(WEBHOOK) || JSON.stringify(m.wire).includes(TOKEN), false, 'no credential in the event, through the proxy');
      assert.equal(s.text.includes(WEBHOOK) || s.text.includes(TOKEN), false);
      await s.next((e) => e.event === 'unseen' && e.data.count === 1, 'the new count after it');
    } finally {
      s.close();
      straight.close();
    }
  });
});

describe('inbox proxy: redaction in front of another server', () => {
  // A stand-in server: each test sets what it answers. The proxy must not rely on our service's
  // extensions (the projection) nor on its spelling of JSON.
  let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  let upstream: Server;
  let proxy: { server: Server; url: string };
  const subscriber = { _id: 's1', subscriberId: 'ada', firstName: 'Ada', channels: [{ providerId: 'slack', credentials: { webhookUrl: WEBHOOK, deviceTokens: [TOKEN] } }] };
  const message = { _id: 'm1', subject: 'Hi', subscriber, payload: { channels: 'the app’s own data' } };
  const feed = () => fetch(`${proxy.url}/notif/v1/subscribers/ada/notifications/feed`, { headers: as('ada') });

  before(async () => {
    upstream = createServer((req, res) => answer(req, res));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    proxy = await listen(createInboxProxy({ serviceUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, apiKey: KEYS.a, hmacKey: HMAC_KEY }));
  });
  after(() => {
    proxy?.server.close();
    upstream?.closeAllConnections();
    upstream?.close();
  });

  const json = (body: string, type = 'application/json; charset=utf-8') => (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': type, etag: '"upstream"' });
    res.end(body);
  };

  it('removes channels from a full feed that ignores the projection, from a Message wrapped in data, and from keys written with escapes', async () => {
    answer = json(JSON.stringify({ data: [message, message], totalCount: 2, hasMore: false, pageSize: 10, page: 0 }));
    let r = await feed();
    let text = await r.text();
    assertNoCredentials(text, 'a spec server\'s feed');
    assert.deepEqual(JSON.parse(text).data[1], { ...message, subscriber: { _id: 's1', subscriberId: 'ada', firstName: 'Ada' } }, "the rest kept, the payload's own keys too");
    assert.notEqual(r.headers.get('etag'), '"upstream"');

    // Novu wraps non-paginated bodies in {data: X}.
    answer = json(JSON.stringify({ data: message }));
    r = await fetch(`${proxy.url}/notif/v1/subscribers/ada/messages/m1/actions/primary`, { method: 'POST', headers: { ...as('ada'), 'content-type': 'application/json' }, body: '{"status":"done"}' });
    assertNoCredentials(await r.text(), 'a Message in data');
    answer = json(JSON.stringify({ data: [message] }));
    r = await fetch(`${proxy.url}/notif/v1/subscribers/ada/messages/mark-as`, { method: 'POST', headers: { ...as('ada'), 'content-type': 'application/json' }, body: '{"messageId":"m1","markAs":"read"}' });
    assertNoCredentials(await r.text(), 'Messages in data');

    // The same key, written with escapes: JSON.parse reads "channels".
    answer = json(JSON.stringify({ data: [message] }).replace('"channels"', '"\\u0063hannels"'));
    text = await (await feed()).text();
    assertNoCredentials(text, 'an escaped key');
  });

  it('passes an answer with nothing to remove as it is, its tag as the server gave it', async () => {
    const body = '{"data":[{"_id":"m1","subject":"Hi","payload":{"channels":["mine"]}}],"totalCount":1}';
    answer = json(body);
    const r = await feed();
    assert.equal(await r.text(), body);
    assert.equal(r.headers.get('etag'), '"upstream"');
  });

  it('never answers 500 for a malformed or non-JSON answer: one that could carry channels is refused (502), the rest passes as it is', async () => {
    answer = json('{"data":[{"subscriber":{"channels":[{"credentials":{"webhookUrl":"' + WEBHOOK + '"}}]');
    let r = await feed();
    assert.equal(r.status, 502);
    const text = await r.text();
    assert.equal(text.includes(WEBHOOK), false);
    const error = JSON.parse(text);
    for (const field of ['statusCode', 'error', 'message', 'timestamp', 'path']) assert.ok(field in error, field);
    assert.equal(error.statusCode, 502);

    for (const [body, type] of [
      ['{"data":[', 'application/json'],
      ['<html>Bad gateway</html>', 'text/html'],
      ['', 'application/json'],
      ['not json at all', 'text/plain'],
    ]) {
      answer = json(body!, type);
      r = await feed();
      assert.equal(r.status, 200, body);
      assert.equal(await r.text(), body);
    }
    // A body cut short: no 500, no crash.
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"data":[{"subscriber":{"channels":');
      setTimeout(() => res.destroy(), 20);
    };
    r = await feed();
    assert.equal(r.status, 502);
    assert.equal(((await r.json()) as { statusCode: number }).statusCode, 502);
    // JSON nested too deep to be written again once redacted: refused, not a 500.
    answer = json(`${'['.repeat(200_000)}{"subscriber":{"channels":[]}}${']'.repeat(200_000)}`);
    r = await feed();
    assert.equal(r.status, 502);
    await r.arrayBuffer();
    // Many Messages in one array.
    answer = json(JSON.stringify({ data: Array.from({ length: 200_000 }, () => ({ subscriber: { channels: [] } })) }));
    r = await feed();
    assert.equal(r.status, 200);
    assert.equal((await r.text()).includes('channels'), false);
    answer = json('[]');
    assert.equal((await feed()).status, 200, 'the proxy still answers');
  });

  it('redacts a stream event by event, as each comes, even split across chunks, and leaves out one it cannot read', async () => {
    let push: (text: string) => void = () => {};
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('retry: 1000\n\n');
      push = (text) => res.write(text);
    };
    const r = await fetch(`${proxy.url}/notif/v1/subscribers/ada/notifications/stream`, { headers: as('ada') });
    assert.equal(r.status, 200);
    const { next, cancel } = chunks(r);
    assert.equal(await next(), 'retry: 1000\n\n');
    push('id: 1\ndata: {"id":"1","count":3}\n\n');
    assert.equal(await next(), 'id: 1\ndata: {"id":"1","count":3}\n\n', 'an event with nothing to remove, as it was');
    const event = `id: 2\ndata: ${JSON.stringify({ id: '2', message })}\n\n`;
    push(event.slice(0, 40));
    push(event.slice(40, 90));
    push(event.slice(90));
    const got = await next();
    assert.equal(got, `id: 2\ndata: ${JSON.stringify({ id: '2', message: { ...message, subscriber: { _id: 's1', subscriberId: 'ada', firstName: 'Ada' } } })}\n\n`);
    push(`id: 3\ndata: {"message":{"subscriber":{"channels":[{"credentials":{"webhookUrl":"${WEBHOOK}"}}]\n\n:\n\n`);
    assert.equal(await next(), ':\n\n', 'an event that cannot be read is left out; the heartbeat passes');
    await cancel();
  });

  it('reads a long event that comes in many small chunks once, not once a chunk; CR line ends split across chunks still end it', async () => {
    // A message event of 600 KB (a large payload) in 256 B chunks, as a slow link may split it: the
    // proxy once scanned all it held for every chunk (900 ms here, against 25 ms in one chunk).
    const big = `id: 9\ndata: ${JSON.stringify({ id: '9', message: { ...message, payload: { text: 'p'.repeat(600_000) } } })}\n\n`;
    const through = async (chunks: string[]) => {
      const bytes = chunks.map((c) => Buffer.from(c));
      const handler = createInboxProxy({
        serviceUrl: 'http://service.test',
        apiKey: KEYS.a,
        hmacKey: HMAC_KEY,
        fetch: async () => new Response(new ReadableStream({ start: (c) => (bytes.forEach((b) => c.enqueue(b)), c.close()) }), { headers: { 'content-type': 'text/event-stream' } }),
      });
      const started = performance.now();
      const r = await handler(new Request('http://host.test/notif/v1/subscribers/ada/notifications/stream', { headers: as('ada') }));
      const text = await r.text();
      return { text, ms: performance.now() - started };
    };
    const split = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));
    // The fastest of three runs each: a pause of the machine's must not decide it.
    const fastest = async (chunks: string[]) => {
      const runs = [await through(chunks), await through(chunks), await through(chunks)];
      return runs.reduce((a, b) => (b.ms < a.ms ? b : a));
    };
    const whole = await fastest([big]);
    assert.equal(whole.text.includes('channels'), false);
    const chunked = await fastest(split(big, 256));
    assert.equal(chunked.text, whole.text);
    assert.ok(chunked.ms < whole.ms * 5 + 100, `${Math.round(chunked.ms)} ms in chunks against ${Math.round(whole.ms)} ms whole`);
    // CR alone ends lines: a CR last in a chunk, the blank line's CR first in the next (and a CRLF split so).
    const data = JSON.stringify({ message });
    for (const chunks of [[`data: ${data}\r`, '\r', ': next\r\r'], [`data: ${data}\r\n`, '\r', '\n: next\r\n\r\n'], [`data: ${data}\r`, '\n\r\n: next\n\n']]) {
      const { text } = await through(chunks);
      assert.equal(text.includes(WEBHOOK) || text.includes(TOKEN), false, JSON.stringify(chunks));
      assert.ok(text.endsWith(': next' + chunks.at(-1)!.split('next')[1]), `${JSON.stringify(chunks)} -> ${JSON.stringify(text.slice(-40))}`);
      assert.equal(JSON.parse(text.split(/\r\n|\r|\n/)[0]!.slice(6)).message.subscriber.channels, undefined);
    }
  });
});
