import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { TestServer, type TestServer as Service } from './helpers.ts';
import { activeIntegrations, createWorkflow, triggerEvent } from './fixtures.ts';
import { messagesOfNotification, notificationOf } from './engine-fixtures.ts';

// A subscriber's chat webhookUrl is theirs to choose, so the chat step must not become a way into
// the service's own network: by default no loopback, private, link-local, unique-local or metadata
// address is reached, however it is spelled. A receiver on 127.0.0.1 counts what gets through.

interface Receiver {
  url: string;
  port: number;
  paths: string[];
  close: () => Promise<void>;
}

/** A receiver on 127.0.0.1: `/silent` never answers, `/redirect` answers 302, others 200 with a body. */
async function receiver(): Promise<Receiver> {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url ?? '');
    req.resume();
    if (req.url?.startsWith('/silent')) return;
    if (req.url?.startsWith('/redirect')) return void res.writeHead(302, { location: '/followed' }).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end('RECEIVER-SECRET-ANSWER');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    paths,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function chatTo(service: Service, subscriberId: string, webhookUrls: string[]) {
  await triggerEvent(service, { name: 'noop', to: subscriberId });
  for (const [i, webhookUrl] of webhookUrls.entries()) {
    const r = await service.patch(`/v1/subscribers/${subscriberId}/credentials`, {
      providerId: 'slack',
      integrationIdentifier: `hook-${i}`,
      credentials: { webhookUrl },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  const started = Date.now();
  const t = await triggerEvent(service, { name: 'chat-only', to: subscriberId });
  const ms = Date.now() - started;
  const n = await notificationOf(service, t.transactionId);
  return { n, ms, messages: (await messagesOfNotification(service, n._id)).filter((m: any) => m.channel === 'chat') };
}

/** The most webhooks chatTo gives one subscriber (one slack integration each). */
const MAX_HOOKS = 4;

async function workflows(service: Service) {
  await activeIntegrations(service, ['slack']);
  for (let i = 0; i < MAX_HOOKS; i++) await activeIntegrations(service, ['slack'], undefined, () => `hook-${i}`);
  await createWorkflow(service, { workflowId: 'noop', name: 'No steps', steps: [] });
  await createWorkflow(service, { workflowId: 'chat-only', name: 'Chat', steps: [{ name: 'chat', type: 'chat', controlValues: { body: 'hello' } }] });
}

/** Every spelling of a non-public address the receiver on port `p` could hide behind. */
async function nonPublic(p: number): Promise<string[]> {
  const targets = [
    `http://127.0.0.1:${p}/a`,
    `http://2130706433:${p}/b`,
    `http://0x7f000001:${p}/c`,
    `http://017700000001:${p}/d`,
    `http://127.1:${p}/e`,
    `http://localhost:${p}/f`,
    `http://LOCALHOST.:${p}/g`,
    `http://[::1]:${p}/h`,
    `http://[::ffff:127.0.0.1]:${p}/i`,
    `http://0.0.0.0:${p}/j`,
    'http://169.254.169.254/latest/meta-data/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://172.16.0.1/',
    'http://100.64.0.1/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    `http://[::127.0.0.1]:${p}/m`,
    `http://localhost..:${p}/n`,
    'http://metadata.google.internal../computeMetadata/v1/',
    `https://127.0.0.1:${p}/k`,
  ];
  return targets;
}

describe('chat webhooks by default: public addresses only', () => {
  let service: Service;
  let hook: Receiver;

  before(async () => {
    hook = await receiver();
    // Started first with private addresses allowed, so that URLs of every spelling can be stored (as
    // a database written before the check at save, or under the flag, holds them); restarted
    // without it before anything is delivered.
    service = await new TestServer({ NOTIF_ALLOW_PRIVATE_WEBHOOKS: '' }).start(['--no-seed', '--allow-private-webhooks']);
    await workflows(service);
  });
  after(async () => {
    await service?.dispose();
    await hook?.close();
  });

  it('refuses to save a webhookUrl at a non-public address: 422 naming the field, nothing stored', async () => {
    await service.restart();
    const targets = [...(await nonPublic(hook.port)), `http://user:secret@hooks.example.test/x`];
    for (const [i, webhookUrl] of targets.entries()) {
      await triggerEvent(service, { name: 'noop', to: `save-${i}` });
      const r = await service.patch(`/v1/subscribers/save-${i}/credentials`, { providerId: 'slack', credentials: { webhookUrl } });
      assert.equal(r.status, 422, `${webhookUrl}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.message, /credentials\.webhookUrl must be a public http\(s\) URL: /, webhookUrl);
      assert.equal(r.body.errors['credentials.webhookUrl'].value, webhookUrl);
      const saved = await service.get(`/v2/subscribers/save-${i}`);
      assert.deepEqual(saved.body.channels, [], `${webhookUrl} was not stored`);
    }
    const ok = await service.patch('/v1/subscribers/save-0/credentials', { providerId: 'slack', credentials: { webhookUrl: 'https://hooks.example.test/1' } });
    assert.equal(ok.status, 200, 'a public URL is still saved');
  });

  it('refuses on delivery every non-public address stored before: 0 requests made, a clear execution detail', async () => {
    const p = hook.port;
    const targets = await nonPublic(p);
    // A name that resolves to loopback (this machine's own name, when it does) is refused after the lookup.
    const own = hostname();
    const resolved = await lookup(own).catch(() => null);
    if (resolved && resolved.address.startsWith('127.')) targets.push(`http://${own}:${p}/l`);

    await service.stop();
    await service.start(['--no-seed', '--allow-private-webhooks']);
    for (const [i, url] of targets.entries()) {
      await triggerEvent(service, { name: 'noop', to: `ssrf-${i}` });
      const r = await service.patch(`/v1/subscribers/ssrf-${i}/credentials`, { providerId: 'slack', credentials: { webhookUrl: url } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    await service.restart();
    for (const [i, url] of targets.entries()) {
      const t = await triggerEvent(service, { name: 'chat-only', to: `ssrf-${i}` });
      const n = await notificationOf(service, t.transactionId);
      const messages = (await messagesOfNotification(service, n._id)).filter((m: any) => m.channel === 'chat');
      const detail = n.jobs[0].executionDetails.at(-1);
      assert.equal(n.jobs[0].status, 'failed', url);
      assert.match(detail.detail, /^Failed: webhook refused: /, `${url}: ${detail.detail}`);
      assert.equal(messages[0].error_id, 'webhook_address_refused', url);
    }
    assert.deepEqual(hook.paths, [], 'no request reached the receiver');
  });
});

describe('chat webhooks with --allow-private-webhooks', () => {
  let service: Service;
  let hook: Receiver;

  before(async () => {
    hook = await receiver();
    service = await new TestServer({ NOTIF_ALLOW_PRIVATE_WEBHOOKS: '' }).start(['--no-seed', '--allow-private-webhooks']);
    await workflows(service);
  });
  after(async () => {
    await service?.dispose();
    await hook?.close();
  });

  it('reaches the receiver, keeps only the status of its answer, and follows no redirect', async () => {
    const { n, messages } = await chatTo(service, 'dev-1', [`${hook.url}/ok`, `${hook.url}/redirect`]);
    assert.deepEqual(hook.paths.sort(), ['/ok', '/redirect']);
    assert.deepEqual(messages.map((m: any) => m.status).sort(), ['error', 'sent']);
    const body = JSON.stringify(n);
    assert.equal(body.includes('RECEIVER-SECRET-ANSWER'), false, 'the answer is not echoed back');
    assert.match(body, /answered 302/);
  });

  it('sends the webhooks of one step at once: four silent receivers cost one timeout, not four', async () => {
    const { n, ms } = await chatTo(service, 'dev-2', [1, 2, 3, 4].map((i) => `${hook.url}/silent/${i}`));
    assert.equal(hook.paths.filter((p) => p.startsWith('/silent')).length, 4);
    assert.ok(ms < 9000, `the trigger took ${ms} ms`);
    assert.match(n.jobs[0].executionDetails.at(-1).detail, /no answer within 5000 ms/);
  });
});
