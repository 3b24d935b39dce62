import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { startServer, type TestServer } from './helpers.ts';
import { activeIntegrations, createWorkflow } from './fixtures.ts';

// A client that starts a request and goes silent must not hold a connection for long: the service
// gives it NOTIF_HEADERS_TIMEOUT_MS for its headers and NOTIF_REQUEST_TIMEOUT_MS for the whole
// request (shortened here to keep the test quick; 10 s and 15 s by default).

/** Sends `text`, then stays silent; resolves with what came back and when the service closed. */
function silentClient(server: TestServer, text: string, giveUpMs = 8000): Promise<{ ms: number; answer: string; closed: boolean }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(Number(port), hostname);
    let answer = '';
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ ms: Date.now() - started, answer, closed });
    };
    const timer = setTimeout(() => finish(false), giveUpMs);
    socket.on('data', (c) => (answer += c.toString('latin1')));
    socket.on('close', () => finish(true));
    socket.on('error', () => {});
    socket.on('connect', () => socket.write(text));
  });
}

describe('request timeouts', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ NOTIF_HEADERS_TIMEOUT_MS: '1500', NOTIF_REQUEST_TIMEOUT_MS: '2000', NOTIF_ALLOW_PRIVATE_WEBHOOKS: '1' });
    await activeIntegrations(server, ['slack']);
  });
  after(async () => server?.dispose());

  it('drops a silent partial body within seconds, with 408', async () => {
    const head = 'POST /v2/subscribers HTTP/1.1\r\nHost: x\r\nauthorization: ApiKey test_key_a\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n';
    const r = await silentClient(server, head + '{"subscri');
    assert.ok(r.closed, 'the connection was still open after 8 s');
    assert.ok(r.ms < 6000, `closed after ${r.ms} ms`);
    assert.match(r.answer, /^HTTP\/1\.1 408 /);
  });

  it('a request answered before its body arrived (401 for a wrong key) ends its connection with that one answer, never a second (408)', async () => {
    const head = 'POST /v1/events/trigger HTTP/1.1\r\nHost: x\r\nauthorization: ApiKey wrong\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n';
    const r = await silentClient(server, head + '{"na');
    assert.match(r.answer, /^HTTP\/1\.1 401 /);
    assert.equal(r.answer.match(/HTTP\/1\.1 /g)!.length, 1, r.answer);
    assert.match(r.answer.slice(0, r.answer.indexOf('\r\n\r\n')), /\r\nconnection: close(\r\n|$)/i);
    assert.ok(r.closed && r.ms < 1000, `closed ${r.closed} after ${r.ms} ms`);
    // A request whose body was read keeps its connection for the next one.
    const read = await silentClient(
      server,
      head.replace('/v1/events/trigger', '/v2/subscribers').replace('ApiKey wrong', 'ApiKey test_key_a').replace('content-length: 100', 'content-length: 24') + '{"subscriberId":"kept1"}',
      2500,
    );
    assert.match(read.answer, /^HTTP\/1\.1 20[01] /);
    assert.doesNotMatch(read.answer, /connection: close/i);
    assert.equal(read.closed, false, 'kept open');
  });

  it("answers what Node's parser refuses with decisions.md's error body: 431, 400, 408", async () => {
    const body = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    const long = await silentClient(server, `GET /v1/subscribers/${'a'.repeat(20_000)}/notifications/feed HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(long.answer, /^HTTP\/1\.1 431 /);
    const tooLarge = body(long.answer);
    assert.deepEqual(Object.keys(tooLarge), ['statusCode', 'error', 'message', 'timestamp', 'path']);
    assert.equal(tooLarge.statusCode, 431);
    assert.equal(tooLarge.error, 'Request Header Fields Too Large');
    assert.ok(!isNaN(Date.parse(tooLarge.timestamp as string)));
    assert.equal(tooLarge.path, `/v1/subscribers/${'a'.repeat(200 - 16)}`);
    const garbage = await silentClient(server, 'HELLO\r\n\r\n');
    assert.match(garbage.answer, /^HTTP\/1\.1 400 /);
    assert.equal(body(garbage.answer).statusCode, 400);
    assert.equal(body(garbage.answer).path, '');
    const slow = await silentClient(server, 'POST /v2/subscribers HTTP/1.1\r\nHost: x\r\nauthorization: ApiKey test_key_a\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{');
    assert.match(slow.answer, /^HTTP\/1\.1 408 /);
    assert.equal(body(slow.answer).path, '/v2/subscribers');
    assert.equal((await server.get('/health')).status, 200, 'and it goes on serving');
  });

  it('drops silent partial headers, and a connection that sends nothing', async () => {
    const partial = await silentClient(server, 'GET /health HTTP/1.1\r\nHost: x\r\n');
    assert.ok(partial.closed && partial.ms < 6000, `partial headers: closed ${partial.closed} after ${partial.ms} ms`);
    const nothing = await silentClient(server, '');
    assert.ok(nothing.closed && nothing.ms < 6000, `nothing sent: closed ${nothing.closed} after ${nothing.ms} ms`);
  });

  it('answers a request that arrives in time, however long the answer takes', async () => {
    assert.equal((await server.get('/health')).status, 200);
    // A trigger whose chat webhook never answers takes the webhook's 5 s timeout: longer than the
    // 2 s request timeout, and still answered.
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      await createWorkflow(server, { workflowId: 'slow', name: 'Slow', steps: [{ name: 'chat', type: 'chat', controlValues: { body: 'hi' } }] });
      await server.post('/v2/subscribers', { subscriberId: 'slow' });
      const hook = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
      assert.equal((await server.patch('/v1/subscribers/slow/credentials', { providerId: 'slack', credentials: { webhookUrl: hook } })).status, 200);
      const started = Date.now();
      const r = await server.post('/v1/events/trigger', { name: 'slow', to: 'slow' });
      assert.equal(r.status, 201);
      assert.ok(Date.now() - started > 4000, 'the answer took longer than the request timeout');
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
