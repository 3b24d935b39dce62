import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KEYS, startServer, type TestServer } from './helpers.ts';
import { activeIntegrations, createWorkflow, getFeed, triggerEvent } from './fixtures.ts';
import { closedPort, messagesOfNotification, notificationOf, startReceiver } from './engine-fixtures.ts';

// email, sms, push and chat steps. Environment a (KEYS.a) has active integrations; environment b
// (KEYS.b, same organization) has none, so the same workflow fails there, and the run goes on.

const STEPS = [
  { name: 'mail', type: 'email', controlValues: { subject: 'Order {{payload.order}}', body: 'Hi {{subscriber.firstName}}, order {{payload.order}} shipped' } },
  { name: 'text', type: 'sms', controlValues: { body: 'Order {{payload.order}} shipped' } },
  { name: 'phone', type: 'push', controlValues: { subject: 'Shipped', body: 'Order {{payload.order}}' } },
  { name: 'inbox', type: 'in_app', controlValues: { body: 'Order {{payload.order}} shipped' } },
];

async function integration(server: TestServer, body: Record<string, unknown>, key: string = KEYS.a) {
  const r = await server.post('/v1/integrations', body, { key });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

async function credentials(server: TestServer, subscriberId: string, providerId: string, creds: Record<string, unknown>, key: string = KEYS.a) {
  const r = await server.patch(`/v1/subscribers/${subscriberId}/credentials`, { providerId, credentials: creds }, { key });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

const subscriber = { subscriberId: 'ada', firstName: 'Ada', email: 'ada@example.test', phone: '+15550100' };

describe('email, sms and push steps', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    for (const key of [KEYS.a, KEYS.b]) await createWorkflow(server, { workflowId: 'shipped', name: 'Shipped', steps: STEPS }, key);
    // An inactive integration is never used; the active one is (and is the channel's primary).
    await integration(server, { providerId: 'sendgrid', channel: 'email', identifier: 'sg', active: false, credentials: { apiKey: 'k', from: 'a@x.test' } });
    await integration(server, { providerId: 'postmark', channel: 'email', identifier: 'pm', active: true, credentials: { apiKey: 'k', from: 'a@x.test' } });
    await integration(server, { providerId: 'twilio', channel: 'sms', active: true, credentials: { accountSid: 's', token: 't', from: '+1555' } });
    await integration(server, { providerId: 'expo', channel: 'push', active: true, credentials: { apiKey: 'k' } });
    // Staging has an expo integration only while the subscriber's device tokens are set: then none is active.
    const [stagingExpo] = await activeIntegrations(server, ['expo'], KEYS.b);
    for (const key of [KEYS.a, KEYS.b]) {
      await triggerEvent(server, { name: 'shipped', to: subscriber, payload: { order: 0 } }, key);
      await credentials(server, 'ada', 'expo', { deviceTokens: ['tok-1', 'tok-2'] }, key);
    }
    const off = await server.put(`/v1/integrations/${stagingExpo}`, { active: false }, { key: KEYS.b });
    assert.equal(off.status, 200, JSON.stringify(off.body));
  });
  after(() => server.dispose());

  it('records Success with the active integration\'s providerId and stores a sent message of each channel', async () => {
    const t = await triggerEvent(server, { name: 'shipped', to: 'ada', payload: { order: 42 } });
    const n = await notificationOf(server, t.transactionId);
    assert.deepEqual(n.jobs.map((j: any) => j.status), ['completed', 'completed', 'completed', 'completed']);
    const [mail, sms, push] = n.jobs;
    for (const [job, provider] of [[mail, 'postmark'], [sms, 'twilio'], [push, 'expo']] as const) {
      const last = job.executionDetails.at(-1);
      assert.equal(last.status, 'Success');
      assert.equal(last.providerId, provider);
      assert.equal(job.providerId, provider);
    }
    const messages = await messagesOfNotification(server, n._id);
    const by = Object.fromEntries(messages.map((m: any) => [m.channel, m]));
    assert.deepEqual(Object.keys(by).sort(), ['email', 'in_app', 'push', 'sms']);
    assert.equal(by.email.status, 'sent');
    assert.equal(by.email.provider_id, 'postmark');
    assert.equal(by.email.email, 'ada@example.test');
    assert.equal(by.email.subject, 'Order 42');
    assert.deepEqual(JSON.parse(by.email.content), [{ type: 'text', content: 'Hi Ada, order 42 shipped' }]);
    assert.equal(by.sms.phone, '+15550100');
    assert.equal(by.sms.provider_id, 'twilio');
    assert.deepEqual(JSON.parse(by.push.device_tokens), ['tok-1', 'tok-2']);
    assert.equal(by.push.provider_id, 'expo');
    for (const m of messages) assert.equal(m.error_id, null);
    // Only the in-app message is in the feed.
    const feed = await getFeed(server, 'ada');
    assert.ok(feed.data.every((m: any) => m.channel === 'in_app'));
    assert.equal(feed.data[0].content, 'Order 42 shipped');
  });

  it('without an active integration: a failed detail saying so, a message with status error, and the run goes on', async () => {
    const t = await triggerEvent(server, { name: 'shipped', to: 'ada', payload: { order: 7 } }, KEYS.b);
    const n = await notificationOf(server, t.transactionId, KEYS.b);
    assert.deepEqual(n.jobs.map((j: any) => j.status), ['failed', 'failed', 'failed', 'completed']);
    for (const [i, channel] of ['email', 'sms', 'push'].entries()) {
      const last = n.jobs[i].executionDetails.at(-1);
      assert.equal(last.status, 'Failed');
      assert.match(last.detail, new RegExp(`no active ${channel} integration`));
    }
    const messages = await messagesOfNotification(server, n._id);
    const failed = messages.filter((m: any) => m.channel !== 'in_app');
    assert.equal(failed.length, 3);
    for (const m of failed) {
      assert.equal(m.status, 'error');
      assert.equal(m.error_id, 'no_active_integration');
      assert.match(m.error_text, /no active (email|sms|push) integration/);
    }
    assert.equal((await getFeed(server, 'ada', {}, KEYS.b)).data[0].content, 'Order 7 shipped');
  });

  it('fails a delivery the subscriber has no address for (no email, no phone, no device token)', async () => {
    const t = await triggerEvent(server, { name: 'shipped', to: 'nobody', payload: { order: 1 } });
    const n = await notificationOf(server, t.transactionId);
    assert.deepEqual(n.jobs.map((j: any) => j.status), ['failed', 'failed', 'failed', 'completed']);
    const ids = (await messagesOfNotification(server, n._id)).filter((m: any) => m.channel !== 'in_app').map((m: any) => m.error_id).sort();
    assert.deepEqual(ids, ['missing_device_tokens', 'missing_email', 'missing_phone']);
  });
});

describe('chat steps', () => {
  let server: TestServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    receiver = await startReceiver((path) => (path.startsWith('/fail') ? 500 : 200));
    // The receiver listens on 127.0.0.1, which webhooks may reach only when allowed.
    server = await startServer({ NOTIF_ALLOW_PRIVATE_WEBHOOKS: '1' });
    await activeIntegrations(server, ['slack', 'discord', 'chat-webhook', 'msteams', 'push-webhook']);
    await createWorkflow(server, {
      workflowId: 'chatty',
      name: 'Chatty',
      steps: [
        { name: 'chat', type: 'chat', controlValues: { body: '{{payload.who}} said "{{payload.text}}" to {{subscriber.firstName}}' } },
        { name: 'inbox', type: 'in_app', controlValues: { body: 'after chat' } },
      ],
    });
  });
  after(async () => {
    await server.dispose();
    await receiver.close();
  });

  it('POSTs the rendered text as JSON to the subscriber\'s webhookUrl and records the answer', async () => {
    await triggerEvent(server, { name: 'chatty', to: { subscriberId: 'c-ok', firstName: 'Ada' }, payload: { who: 'x' } });
    receiver.received.length = 0;
    await credentials(server, 'c-ok', 'slack', { webhookUrl: `${receiver.url}/hooks/ok?token=1` });
    const t = await triggerEvent(server, { name: 'chatty', to: 'c-ok', payload: { who: 'Grace', text: 'ship <it> & "go"' } });
    assert.equal(receiver.received.length, 1);
    const req = receiver.received[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/hooks/ok?token=1');
    assert.match(String(req.headers['content-type']), /^application\/json/);
    assert.deepEqual(JSON.parse(req.body), { text: 'Grace said "ship <it> & "go"" to Ada' });

    const n = await notificationOf(server, t.transactionId);
    assert.deepEqual(n.jobs.map((j: any) => j.status), ['completed', 'completed']);
    const detail = n.jobs[0].executionDetails.at(-1);
    assert.equal(detail.status, 'Success');
    assert.equal(detail.providerId, 'slack');
    assert.equal(JSON.parse(detail.raw).statusCode, 200);
    const [chat] = (await messagesOfNotification(server, n._id)).filter((m: any) => m.channel === 'chat');
    assert.equal(chat.status, 'sent');
    assert.equal(chat.provider_id, 'slack');
    assert.deepEqual(JSON.parse(chat.content), [{ type: 'text', content: 'Grace said "ship <it> & "go"" to Ada' }]);
  });

  it('a receiver answering 500: recorded as a failure on the job and the message; the run finishes', async () => {
    await triggerEvent(server, { name: 'chatty', to: 'c-500', payload: {} });
    await credentials(server, 'c-500', 'discord', { webhookUrl: `${receiver.url}/fail` });
    const before = receiver.received.length;
    const t = await triggerEvent(server, { name: 'chatty', to: 'c-500', payload: { who: 'x' } });
    assert.equal(receiver.received.length, before + 1);
    const n = await notificationOf(server, t.transactionId);
    assert.deepEqual(n.jobs.map((j: any) => j.status), ['failed', 'completed']);
    const detail = n.jobs[0].executionDetails.at(-1);
    assert.equal(detail.status, 'Failed');
    assert.match(detail.detail, /500/);
    assert.equal(JSON.parse(detail.raw).statusCode, 500);
    const messages = await messagesOfNotification(server, n._id);
    const chat = messages.find((m: any) => m.channel === 'chat');
    assert.equal(chat.status, 'error');
    assert.equal(chat.error_id, 'webhook_status_500');
    assert.match(chat.error_text, /500/);
    assert.ok(messages.some((m: any) => m.channel === 'in_app'), 'the in-app step after it ran');
  });

  it('a closed port: the refused connection is recorded, the run finishes, the service stays up', async () => {
    const port = await closedPort();
    await triggerEvent(server, { name: 'chatty', to: 'c-closed', payload: {} });
    await credentials(server, 'c-closed', 'chat-webhook', { webhookUrl: `http://127.0.0.1:${port}/hook` });
    const t = await triggerEvent(server, { name: 'chatty', to: 'c-closed', payload: { who: 'x' } });
    const n = await notificationOf(server, t.transactionId);
    assert.deepEqual(n.jobs.map((j: any) => j.status), ['failed', 'completed']);
    const detail = n.jobs[0].executionDetails.at(-1);
    assert.equal(detail.status, 'Failed');
    assert.match(detail.detail, /ECONNREFUSED/);
    assert.equal(JSON.parse(detail.raw).statusCode, null);
    const chat = (await messagesOfNotification(server, n._id)).find((m: any) => m.channel === 'chat');
    assert.equal(chat.status, 'error');
    assert.equal(chat.error_id, 'webhook_unreachable');
    assert.equal((await server.get('/health')).status, 200);
  });

  it('a subscriber without a chat webhook: a failed detail, no request', async () => {
    const before = receiver.received.length;
    const t = await triggerEvent(server, { name: 'chatty', to: 'c-none', payload: {} });
    assert.equal(receiver.received.length, before);
    const n = await notificationOf(server, t.transactionId);
    assert.deepEqual(n.jobs.map((j: any) => j.status), ['failed', 'completed']);
    assert.match(n.jobs[0].executionDetails.at(-1).detail, /no chat credentials with a webhookUrl/);
  });

  it('posts to every chat webhook of the subscriber, and not to push credentials', async () => {
    await triggerEvent(server, { name: 'chatty', to: 'c-two', payload: {} });
    await credentials(server, 'c-two', 'slack', { webhookUrl: `${receiver.url}/two/slack` });
    await credentials(server, 'c-two', 'msteams', { webhookUrl: `${receiver.url}/two/teams` });
    await credentials(server, 'c-two', 'push-webhook', { webhookUrl: `${receiver.url}/two/push` });
    const before = receiver.received.length;
    const t = await triggerEvent(server, { name: 'chatty', to: 'c-two', payload: { who: 'y' } });
    assert.deepEqual(receiver.received.slice(before).map((r) => r.path).sort(), ['/two/slack', '/two/teams']);
    const n = await notificationOf(server, t.transactionId);
    const chats = (await messagesOfNotification(server, n._id)).filter((m: any) => m.channel === 'chat');
    assert.deepEqual(chats.map((m: any) => m.provider_id).sort(), ['msteams', 'slack']);
  });
});
