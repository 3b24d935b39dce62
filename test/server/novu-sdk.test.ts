import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Novu } from '@novu/api';
import {
  ErrorDto,
  NovuError,
  ResponseValidationError,
  SDKValidationError,
  SubscriberResponseDto as SubscriberConflict,
  TopicResponseDto as TopicConflict,
  ValidationErrorDto,
} from '@novu/api/models/errors/index.js';
import { KEYS, startServer, type TestServer } from './helpers.ts';
import { b64, createWorkflow, getFeed, inAppWorkflow, triggerEvent, unseenCount } from './fixtures.ts';
import { waitFor } from './engine-fixtures.ts';

// The service driven through Novu's published TypeScript SDK, @novu/api (the exact version pinned in
// package.json), as a team moving from Novu would use it: their backend code, unchanged, pointed at
// this service with `serverURL` and `secretKey`. The SDK validates every answer against its models
// and throws on a mismatch (ResponseValidationError), so each test makes one SDK method's calls and
// checks that they resolve and that what was sent is what is read back.
//
// Fixtures (workflows, subscribers, messages) are made over plain HTTP, as the other server tests make
// them, so one method's failure does not hide another method's result. A failing call's message names
// the request and gives the SDK's own account of the mismatch.

/** How much of an answer's body a failure message quotes. */
const QUOTED_BODY_CHARS = 1500;
/** A snooze must end at least a minute ahead (decisions.md); this one ends two hours ahead. */
const SNOOZE_MS = 2 * 60 * 60 * 1000;

const INBOX = 'sdk-inbox';
const DELAYED = 'sdk-delayed';
const INVOICE = 'sdk-invoice';
const COMMENT = 'sdk-comment';

let serial = 0;
/** A fresh identifier for one test's subscriber, topic or workflow. */
const uid = (name: string) => `${name}-${++serial}`;

/** A client as a team configures one; retries off (the SDK's default retries 408/409/429/5xx for up to an hour). */
function sdkFor(server: TestServer, secretKey: string = KEYS.a): Novu {
  return new Novu({ serverURL: server.url, secretKey, retryConfig: { strategy: 'none' } });
}

/** What an SDK call threw, told with the request's path, the status and the SDK's account of the mismatch. */
function sdkFailure(err: unknown): string {
  if (err instanceof ResponseValidationError) {
    const url = new URL(err.rawResponse.url);
    return `${err.name} on ${err.statusCode} ${url.pathname}${url.search}: ${err.pretty()}\nbody: ${err.body.slice(0, QUOTED_BODY_CHARS)}`;
  }
  if (err instanceof SDKValidationError) return `${err.name}: ${err.pretty()}`;
  if (err instanceof NovuError) {
    const url = new URL(err.rawResponse.url);
    return `${err.name} ${err.statusCode} ${url.pathname}${url.search}: ${err.body.slice(0, QUOTED_BODY_CHARS)}`;
  }
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** Awaits an SDK call that must resolve. */
async function accepted<T>(call: string, pending: Promise<T>): Promise<T> {
  try {
    return await pending;
  } catch (err) {
    assert.fail(`${call} was not accepted: ${sdkFailure(err)}`);
  }
}

/** Awaits an SDK call that must throw an error of `kind` (the SDK's typed error for that status); returns it. */
async function refusedWith<E extends Error>(call: string, pending: Promise<unknown>, kind: abstract new (...args: any[]) => E): Promise<E> {
  try {
    await pending;
  } catch (err) {
    if (err instanceof kind) return err;
    assert.fail(`${call} threw ${sdkFailure(err)}, not ${kind.name}`);
  }
  assert.fail(`${call} resolved; expected ${kind.name}`);
}

/** The `body` control value of a workflow step in the SDK's workflow model (a union of step types). */
function stepBody(step: { controlValues?: unknown } | undefined): unknown {
  return (step?.controlValues as { body?: unknown } | undefined)?.body;
}

/** Posts over plain HTTP and asserts a 2xx answer (fixtures). */
async function httpOk(server: TestServer, method: string, path: string, body?: unknown) {
  const r = await server.request(method, path, { body });
  assert.ok(r.status >= 200 && r.status < 300, `fixture ${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

function createSubscriberOverHttp(server: TestServer, subscriberId: string, fields: Record<string, unknown> = {}) {
  return httpOk(server, 'POST', '/v2/subscribers', { subscriberId, ...fields });
}

/** Triggers a workflow over HTTP for one subscriber; returns the transactionId and the in-app message's _id. */
async function deliver(server: TestServer, subscriberId: string, workflowId: string, payload: Record<string, unknown> = {}) {
  const { transactionId } = await triggerEvent(server, { name: workflowId, to: subscriberId, payload });
  const feed = await getFeed(server, subscriberId, { limit: 100 });
  const message = feed.data.find((m) => m.transactionId === transactionId);
  assert.ok(message, `no in-app message for ${transactionId}`);
  return { transactionId, messageId: message._id as string };
}

describe('@novu/api against the service', () => {
  let server: TestServer;
  let novu: Novu;
  /** The active FCM integration made once for the credentials tests. */
  let pushIntegration: { _id: string; identifier: string } | undefined;

  before(async () => {
    server = await startServer();
    novu = sdkFor(server);
    await inAppWorkflow(server, INBOX, {
      subject: 'Order {{payload.orderId}}',
      body: 'Hello {{payload.name}}, your order shipped',
      redirect: { url: '/orders/{{payload.orderId}}' },
      primaryAction: { label: 'Track' },
      secondaryAction: { label: 'Dismiss' },
    });
    await createWorkflow(server, {
      workflowId: DELAYED,
      name: 'Delayed reminder',
      steps: [
        { name: 'wait', type: 'delay', controlValues: { amount: 1, unit: 'hours' } },
        { name: 'inbox', type: 'in_app', controlValues: { body: 'Reminder' } },
      ],
    });
  });
  after(() => server.dispose());

  async function activePushIntegration() {
    pushIntegration ??= await httpOk(server, 'POST', '/v1/integrations', {
      providerId: 'fcm',
      channel: 'push',
      name: 'Push',
      identifier: 'fcm-sdk',
      credentials: { serviceAccount: '{"project_id":"demo"}' },
      active: true,
    });
    return pushIntegration!;
  }

  describe('spec endpoints', () => {
    it('trigger: a subscriber object with a payload; the message reaches the feed and the subscriber is made', async () => {
      const subscriberId = uid('trigger');
      const { result } = await accepted(
        'trigger',
        novu.trigger({ workflowId: INBOX, to: { subscriberId, firstName: 'Ada', email: 'ada@example.test' }, payload: { name: 'Ada', orderId: 'A-1' } }),
      );
      assert.equal(result.acknowledged, true);
      assert.equal(result.status, 'processed');
      assert.ok(result.transactionId);
      const feed = await getFeed(server, subscriberId);
      assert.deepEqual(feed.data.map((m) => m.transactionId), [result.transactionId]);
      const subscriber = await httpOk(server, 'GET', `/v2/subscribers/${subscriberId}`);
      assert.equal(subscriber.firstName, 'Ada');
      assert.equal(subscriber.email, 'ada@example.test');
    });

    it('trigger: several recipients with the caller\'s transactionId', async () => {
      const [first, second] = [uid('trigger'), uid('trigger')];
      const transactionId = `tx-${uid('trigger')}`;
      const { result } = await accepted(
        'trigger',
        novu.trigger({ workflowId: INBOX, to: [first, { subscriberId: second }], transactionId, payload: { name: 'team', orderId: 'A-2' } }),
      );
      assert.equal(result.status, 'processed');
      assert.equal(result.transactionId, transactionId);
      for (const subscriberId of [first, second]) {
        const feed = await getFeed(server, subscriberId);
        assert.deepEqual(feed.data.map((m) => m.transactionId), [transactionId], subscriberId);
      }
    });

    it('subscribers.create: 201 with the Subscriber as sent', async () => {
      const subscriberId = uid('create');
      const sent = {
        subscriberId,
        firstName: 'Grace',
        lastName: 'Hopper',
        email: 'grace@example.test',
        phone: '+15550002',
        avatar: 'https://example.test/grace.png',
        locale: 'en-US',
        timezone: 'America/New_York',
        data: { plan: 'pro', seats: 3 },
      };
      const { result } = await accepted('subscribers.create', novu.subscribers.create(sent));
      assert.equal(result.subscriberId, subscriberId);
      for (const field of ['firstName', 'lastName', 'email', 'phone', 'avatar', 'locale', 'timezone'] as const) {
        assert.equal(result[field], sent[field], field);
      }
      assert.deepEqual(result.data, sent.data);
      assert.equal(result.deleted, false);
      const stored = await httpOk(server, 'GET', `/v2/subscribers/${subscriberId}`);
      assert.equal(stored._id, result.id);
      assert.equal(stored.lastName, 'Hopper');
    });

    it('subscribers.create of an existing subscriberId updates it', async () => {
      const subscriberId = uid('upsert');
      const before = await createSubscriberOverHttp(server, subscriberId, { firstName: 'Old', email: 'old@example.test' });
      const { result } = await accepted('subscribers.create', novu.subscribers.create({ subscriberId, firstName: 'New' }));
      assert.equal(result.id, before._id);
      assert.equal(result.firstName, 'New');
      assert.equal(result.email, 'old@example.test');
    });

    it('subscribers.retrieve: the Subscriber as created', async () => {
      const subscriberId = uid('retrieve');
      const made = await createSubscriberOverHttp(server, subscriberId, { firstName: 'Alan', lastName: 'Turing', data: { team: 'crypto' } });
      const { result } = await accepted('subscribers.retrieve', novu.subscribers.retrieve(subscriberId));
      assert.equal(result.id, made._id);
      assert.equal(result.subscriberId, subscriberId);
      assert.equal(result.firstName, 'Alan');
      assert.equal(result.lastName, 'Turing');
      assert.deepEqual(result.data, { team: 'crypto' });
      assert.equal(result.createdAt, made.createdAt);
    });

    it('subscribers.search: filters and cursor pages', async () => {
      const domain = `${uid('search')}.example.test`;
      const ids = [uid('search'), uid('search'), uid('search')];
      for (const [i, subscriberId] of ids.entries()) {
        await createSubscriberOverHttp(server, subscriberId, { email: `user${i}@${domain}`, firstName: `Searcher${i}` });
      }
      const first = await accepted('subscribers.search', novu.subscribers.search({ email: domain, limit: 2 }));
      assert.equal(first.result.data.length, 2);
      assert.equal(first.result.totalCount, 3);
      assert.ok(first.result.next, 'a next cursor');
      const second = await accepted('subscribers.search', novu.subscribers.search({ email: domain, limit: 2, after: first.result.next! }));
      assert.equal(second.result.data.length, 1);
      const found = [...first.result.data, ...second.result.data].map((s) => s.subscriberId);
      assert.deepEqual([...found].sort(), [...ids].sort());
      const exact = await accepted('subscribers.search', novu.subscribers.search({ subscriberId: ids[1] }));
      assert.deepEqual(exact.result.data.map((s) => s.subscriberId), [ids[1]]);
    });

    it('subscribers.credentials.append: device tokens added, and the subscriber stays readable', async () => {
      const integration = await activePushIntegration();
      const subscriberId = uid('append');
      await createSubscriberOverHttp(server, subscriberId);
      await accepted('subscribers.credentials.append', novu.subscribers.credentials.append({ providerId: 'fcm', credentials: { deviceTokens: ['token-a'] } }, subscriberId));
      const { result } = await accepted(
        'subscribers.credentials.append',
        novu.subscribers.credentials.append({ providerId: 'fcm', credentials: { deviceTokens: ['token-b', 'token-a'] } }, subscriberId),
      );
      const entry = result.channels?.find((c) => c.providerId === 'fcm');
      assert.deepEqual(entry?.credentials.deviceTokens, ['token-a', 'token-b']);
      assert.equal(entry?.integrationId, integration._id);
      const read = await accepted('subscribers.retrieve', novu.subscribers.retrieve(subscriberId));
      assert.deepEqual(read.result.channels?.find((c) => c.providerId === 'fcm')?.credentials.deviceTokens, ['token-a', 'token-b']);
      const page = await accepted('subscribers.search', novu.subscribers.search({ subscriberId }));
      assert.equal(page.result.data[0]?.channels?.length, 1);
    });

    it('subscribers.credentials.update: the entry\'s credentials replaced', async () => {
      const integration = await activePushIntegration();
      const subscriberId = uid('replace');
      await createSubscriberOverHttp(server, subscriberId);
      await httpOk(server, 'PATCH', `/v1/subscribers/${subscriberId}/credentials`, { providerId: 'fcm', credentials: { deviceTokens: ['old-token'] } });
      const { result } = await accepted(
        'subscribers.credentials.update',
        novu.subscribers.credentials.update({ providerId: 'fcm', credentials: { deviceTokens: ['new-token'] } }, subscriberId),
      );
      const entry = result.channels?.find((c) => c.providerId === 'fcm');
      assert.deepEqual(entry?.credentials.deviceTokens, ['new-token']);
      assert.equal(entry?.integrationId, integration._id);
    });

    it('integrations.create: 201 with the Integration as sent', async () => {
      const identifier = uid('sendgrid');
      const { result } = await accepted(
        'integrations.create',
        novu.integrations.create({
          providerId: 'sendgrid',
          channel: 'email',
          name: 'Transactional mail',
          identifier,
          credentials: { apiKey: 'SG.secret-value-0123', from: 'no-reply@example.test', senderName: 'Acme' },
          active: true,
          check: false,
        }),
      );
      assert.equal(result.providerId, 'sendgrid');
      assert.equal(result.channel, 'email');
      assert.equal(result.name, 'Transactional mail');
      assert.equal(result.identifier, identifier);
      assert.equal(result.active, true);
      assert.equal(result.credentials?.from, 'no-reply@example.test');
      const listed = (await httpOk(server, 'GET', '/v1/integrations')) as { _id: string; identifier: string }[];
      assert.equal(listed.find((i) => i.identifier === identifier)?._id, result.id);
    });

    it('integrations.list: the organization\'s integrations', async () => {
      const identifier = uid('postmark');
      const made = await httpOk(server, 'POST', '/v1/integrations', {
        providerId: 'postmark',
        channel: 'email',
        name: 'Listed mail',
        identifier,
        credentials: { apiKey: 'pm-secret-value-0123', from: 'list@example.test' },
        active: true,
      });
      const { result } = await accepted('integrations.list', novu.integrations.list());
      const found = result.find((i) => i.identifier === identifier);
      assert.ok(found, 'the integration is listed');
      assert.equal(found.id, made._id);
      assert.equal(found.name, 'Listed mail');
      assert.equal(found.providerId, 'postmark');
      assert.equal(found.channel, 'email');
      assert.equal(found.active, true);
    });

    it('integrations.update: the changed fields', async () => {
      const made = await httpOk(server, 'POST', '/v1/integrations', {
        providerId: 'resend',
        channel: 'email',
        name: 'Before',
        identifier: uid('resend'),
        credentials: { apiKey: 're-secret-value-0123', from: 'before@example.test' },
        active: false,
      });
      const { result } = await accepted(
        'integrations.update',
        novu.integrations.update({ name: 'After', active: true, credentials: { apiKey: 're-secret-value-4567', from: 'after@example.test' } }, made._id),
      );
      assert.equal(result.id, made._id);
      assert.equal(result.name, 'After');
      assert.equal(result.active, true);
      assert.equal(result.credentials?.from, 'after@example.test');
      const listed = (await httpOk(server, 'GET', '/v1/integrations')) as { _id: string; name: string }[];
      assert.equal(listed.find((i) => i._id === made._id)?.name, 'After');
    });

    it('subscribers.messages.markAll: the number changed, and the feed shows it', async () => {
      const subscriberId = uid('mark-all');
      for (let i = 0; i < 3; i++) await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: `M-${i}` });
      const read = await accepted('subscribers.messages.markAll', novu.subscribers.messages.markAll({ markAs: 'read' }, subscriberId));
      assert.equal(read.result, 3);
      assert.ok((await getFeed(server, subscriberId)).data.every((m) => m.read === true));
      const unread = await accepted('subscribers.messages.markAll', novu.subscribers.messages.markAll({ markAs: 'unread' }, subscriberId));
      assert.equal(unread.result, 3);
      assert.ok((await getFeed(server, subscriberId)).data.every((m) => m.read === false));
    });

    it('subscribers.messages.markAllAs (mark-as): the marked messages', async () => {
      const subscriberId = uid('mark-as');
      const first = await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: 'R-1' });
      const second = await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: 'R-2' });
      const read = await accepted(
        'subscribers.messages.markAllAs',
        novu.subscribers.messages.markAllAs({ messageId: [first.messageId], markAs: 'read' }, subscriberId),
      );
      assert.deepEqual(read.result.map((m) => [m.id, m.read]), [[first.messageId, true]]);
      const seen = await accepted('subscribers.messages.markAllAs', novu.subscribers.messages.markAllAs({ messageId: second.messageId, markAs: 'seen' }, subscriberId));
      assert.deepEqual(seen.result.map((m) => [m.id, m.seen, m.read]), [[second.messageId, true, false]]);
    });

    it('subscribers.messages.updateAsSeen (message action): status and result set', async () => {
      const subscriberId = uid('action');
      const { messageId } = await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: 'C-1' });
      const { result } = await accepted(
        'subscribers.messages.updateAsSeen',
        novu.subscribers.messages.updateAsSeen({
          subscriberId,
          messageId,
          type: 'primary',
          // (The SDK's model of `payload` has no fields: whatever is given, it sends `{}`.)
          markMessageActionAsSeenDto: { status: 'done' },
        }),
      );
      assert.equal(result.id, messageId);
      assert.equal(result.cta.action?.status, 'done');
      assert.equal(result.cta.action?.result?.type, 'primary');
      const stored = (await getFeed(server, subscriberId)).data[0];
      assert.equal(stored.cta.action.status, 'done');
      assert.equal(stored.cta.action.result.type, 'primary');
    });

    it('subscribers.notifications.feed: the in-app messages with their rendered content', async () => {
      const subscriberId = uid('feed');
      const older = await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: 'F-1' });
      const newer = await deliver(server, subscriberId, INBOX, { name: 'Bob', orderId: 'F-2' });
      const { result } = await accepted('subscribers.notifications.feed', novu.subscribers.notifications.feed({ subscriberId }));
      assert.deepEqual(result.data.map((m) => m.id), [newer.messageId, older.messageId]);
      assert.equal(result.totalCount, 2);
      assert.equal(result.hasMore, false);
      assert.equal(result.page, 0);
      const item = result.data[0]!;
      assert.equal(item.content, 'Hello Bob, your order shipped');
      assert.equal(item.subject, 'Order F-2');
      assert.equal(item.transactionId, newer.transactionId);
      assert.equal(item.channel, 'in_app');
      assert.equal(item.read, false);
      assert.equal(item.seen, false);
      assert.equal(item.archived, false);
      assert.ok(item.jobId, 'a job id');
      assert.equal(item.cta.data?.url, '/orders/F-2');
      assert.deepEqual(item.cta.action?.buttons?.map((b) => [b.type, b.content]), [['primary', 'Track'], ['secondary', 'Dismiss']]);
      assert.deepEqual(item.payload, { name: 'Bob', orderId: 'F-2' });
    });

    it('subscribers.notifications.feed: page, limit, read, seen and payload filters', async () => {
      const subscriberId = uid('feed-filters');
      const sent = [];
      for (let i = 1; i <= 3; i++) sent.push(await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: `P-${i}` }));
      await httpOk(server, 'POST', `/v1/subscribers/${subscriberId}/messages/mark-as`, { messageId: sent[0]!.messageId, markAs: 'read' });
      const feed = (request: Omit<Parameters<Novu['subscribers']['notifications']['feed']>[0], 'subscriberId'>) =>
        accepted('subscribers.notifications.feed', novu.subscribers.notifications.feed({ subscriberId, ...request }));
      const unread = await feed({ read: false });
      assert.deepEqual(unread.result.data.map((m) => m.id), [sent[2]!.messageId, sent[1]!.messageId]);
      const read = await feed({ read: true, seen: true });
      assert.deepEqual(read.result.data.map((m) => m.id), [sent[0]!.messageId]);
      const byPayload = await feed({ payload: b64({ orderId: 'P-2' }) });
      assert.deepEqual(byPayload.result.data.map((m) => m.id), [sent[1]!.messageId]);
      const secondPage = await feed({ page: 1, limit: 1 });
      assert.deepEqual(secondPage.result.data.map((m) => m.id), [sent[1]!.messageId]);
      assert.equal(secondPage.result.hasMore, true);
      assert.equal(secondPage.result.pageSize, 1);
    });

    it('subscribers.notifications.unseenCount: unseen, seen and capped counts', async () => {
      const subscriberId = uid('unseen');
      const sent = [];
      for (let i = 0; i < 3; i++) sent.push(await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: `U-${i}` }));
      await httpOk(server, 'POST', `/v1/subscribers/${subscriberId}/messages/mark-as`, { messageId: sent[0]!.messageId, markAs: 'seen' });
      const unseen = await accepted('subscribers.notifications.unseenCount', novu.subscribers.notifications.unseenCount({ subscriberId }));
      assert.equal(unseen.result.count, 2);
      const seen = await accepted('subscribers.notifications.unseenCount', novu.subscribers.notifications.unseenCount({ subscriberId, seen: true }));
      assert.equal(seen.result.count, 1);
      const capped = await accepted('subscribers.notifications.unseenCount', novu.subscribers.notifications.unseenCount({ subscriberId, limit: 1 }));
      assert.equal(capped.result.count, 1);
    });

    it('messages.delete: acknowledged, and the message is gone', async () => {
      const subscriberId = uid('delete-message');
      const { messageId } = await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: 'D-1' });
      const { result } = await accepted('messages.delete', novu.messages.delete(messageId));
      assert.equal(result.acknowledged, true);
      assert.equal(result.status, 'deleted');
      assert.deepEqual((await getFeed(server, subscriberId)).data, []);
    });

    it('messages.deleteByTransactionId: the transaction\'s messages gone, with and without a channel', async () => {
      const subscriberId = uid('delete-transaction');
      const first = await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: 'T-1' });
      const second = await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: 'T-2' });
      await accepted('messages.deleteByTransactionId', novu.messages.deleteByTransactionId(first.transactionId));
      assert.deepEqual((await getFeed(server, subscriberId)).data.map((m) => m._id), [second.messageId]);
      await accepted('messages.deleteByTransactionId', novu.messages.deleteByTransactionId(second.transactionId, 'in_app'));
      assert.deepEqual((await getFeed(server, subscriberId)).data, []);
    });

    it('subscribers.preferences.list: global and per-workflow preferences as stored', async () => {
      const subscriberId = uid('preferences');
      await createSubscriberOverHttp(server, subscriberId);
      await httpOk(server, 'PATCH', `/v1/subscribers/${subscriberId}/preferences/${INBOX}`, { channels: { in_app: false } });
      const { result } = await accepted('subscribers.preferences.list', novu.subscribers.preferences.list({ subscriberId }));
      assert.equal(result.global.enabled, true);
      const inbox = result.workflows.find((w) => w.workflow.identifier === INBOX);
      assert.ok(inbox, `${INBOX} is listed`);
      assert.equal(inbox.workflow.name, INBOX);
      assert.equal(inbox.channels.inApp, false);
      const all = await accepted('subscribers.preferences.list', novu.subscribers.preferences.list({ subscriberId, criticality: 'all' }));
      assert.ok(all.result.workflows.some((w) => w.workflow.identifier === DELAYED));
    });

    it('notifications.list: filtered by transaction, subscriber and channel', async () => {
      const subscriberId = uid('activity');
      const { transactionId } = await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: 'N-1' });
      const byTransaction = await accepted('notifications.list', novu.notifications.list({ transactionId }));
      assert.equal(byTransaction.result.data.length, 1);
      const notification = byTransaction.result.data[0]!;
      assert.equal(notification.transactionId, transactionId);
      assert.equal(notification.subscriber?.subscriberId, subscriberId);
      assert.equal(notification.template?.name, INBOX);
      assert.deepEqual(notification.channels, ['in_app']);
      assert.deepEqual(notification.payload, { name: 'Ada', orderId: 'N-1' });
      const bySubscriber = await accepted(
        'notifications.list',
        novu.notifications.list({ subscriberIds: [subscriberId], channels: ['in_app'], page: 0, limit: 10 }),
      );
      assert.deepEqual(bySubscriber.result.data.map((n) => n.transactionId), [transactionId]);
      assert.equal(bySubscriber.result.hasMore, false);
    });

    it('notifications.retrieve: the Notification with its jobs', async () => {
      const subscriberId = uid('activity');
      const { transactionId } = await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: 'N-2' });
      const listed = await httpOk(server, 'GET', `/v1/notifications?transactionId=${transactionId}`);
      const id = listed.data[0]._id as string;
      const { result } = await accepted('notifications.retrieve', novu.notifications.retrieve(id));
      assert.equal(result.id, id);
      assert.equal(result.transactionId, transactionId);
      assert.equal(result.template?.triggers[0]?.identifier, INBOX);
      assert.deepEqual(result.jobs?.map((j) => j.type), ['in_app']);
    });

    it('notifications.retrieve: a run with a delay step and its cancelled jobs', async () => {
      const subscriberId = uid('activity');
      const { transactionId } = await triggerEvent(server, { name: DELAYED, to: subscriberId });
      await httpOk(server, 'DELETE', `/v1/events/trigger/${transactionId}`);
      const listed = await httpOk(server, 'GET', `/v1/notifications?transactionId=${transactionId}`);
      const { result } = await accepted('notifications.retrieve', novu.notifications.retrieve(listed.data[0]._id));
      assert.equal(result.transactionId, transactionId);
      assert.deepEqual(result.jobs?.map((j) => j.type), ['delay', 'in_app']);
      assert.deepEqual(result.jobs?.map((j) => j.status), ['canceled', 'canceled']);
    });

    it('cancel: true for a pending delay, then false', async () => {
      const subscriberId = uid('cancel');
      const { transactionId } = await triggerEvent(server, { name: DELAYED, to: subscriberId });
      const first = await accepted('cancel', novu.cancel(transactionId));
      assert.equal(first.result, true);
      const again = await accepted('cancel', novu.cancel(transactionId));
      assert.equal(again.result, false);
    });
  });

  describe('beyond the spec', () => {
    it('subscribers.patch: the sent fields changed, the others kept', async () => {
      const subscriberId = uid('patch');
      await createSubscriberOverHttp(server, subscriberId, { firstName: 'Ada', lastName: 'King', data: { plan: 'free', seats: 1 } });
      const { result } = await accepted('subscribers.patch', novu.subscribers.patch({ lastName: 'Lovelace', data: { plan: 'pro' } }, subscriberId));
      assert.equal(result.subscriberId, subscriberId);
      assert.equal(result.firstName, 'Ada');
      assert.equal(result.lastName, 'Lovelace');
      assert.deepEqual(result.data, { plan: 'pro' });
      const stored = await httpOk(server, 'GET', `/v2/subscribers/${subscriberId}`);
      assert.equal(stored.lastName, 'Lovelace');
      assert.equal(stored.firstName, 'Ada');
    });

    it('subscribers.delete: acknowledged; the subscriber and its messages are gone', async () => {
      const subscriberId = uid('remove');
      await deliver(server, subscriberId, INBOX, { name: 'Ada', orderId: 'X-1' });
      const { result } = await accepted('subscribers.delete', novu.subscribers.delete(subscriberId));
      assert.equal(result.acknowledged, true);
      assert.equal(result.status, 'deleted');
      const gone = await refusedWith('subscribers.retrieve', novu.subscribers.retrieve(subscriberId), ErrorDto);
      assert.equal(gone.statusCode, 404);
      assert.equal((await server.get(`/v1/subscribers/${subscriberId}/notifications/feed`)).status, 404);
    });

    it('subscribers.createBulk: created, updated and failed lists', async () => {
      const existing = uid('bulk');
      const fresh = uid('bulk');
      await createSubscriberOverHttp(server, existing, { firstName: 'Before' });
      const { result } = await accepted(
        'subscribers.createBulk',
        novu.subscribers.createBulk({
          subscribers: [
            { subscriberId: fresh, firstName: 'Fresh', email: 'fresh@example.test' },
            { subscriberId: existing, firstName: 'After' },
          ],
        }),
      );
      assert.deepEqual(result.created.map((s) => s.subscriberId), [fresh]);
      assert.deepEqual(result.updated.map((s) => s.subscriberId), [existing]);
      assert.deepEqual(result.failed, []);
      assert.equal((await httpOk(server, 'GET', `/v2/subscribers/${fresh}`)).email, 'fresh@example.test');
      assert.equal((await httpOk(server, 'GET', `/v2/subscribers/${existing}`)).firstName, 'After');
    });

    it('subscribers.preferences.update: global, then one workflow\'s (PATCH /v2)', async () => {
      const subscriberId = uid('preferences-update');
      await createSubscriberOverHttp(server, subscriberId);
      const global = await accepted('subscribers.preferences.update', novu.subscribers.preferences.update({ channels: { email: false } }, subscriberId));
      assert.equal(global.result.global.channels.email, false);
      const workflow = await accepted(
        'subscribers.preferences.update',
        novu.subscribers.preferences.update({ workflowId: INBOX, channels: { inApp: false } }, subscriberId),
      );
      assert.equal(workflow.result.workflows.find((w) => w.workflow.identifier === INBOX)?.channels.inApp, false);
      const stored = await httpOk(server, 'GET', `/v2/subscribers/${subscriberId}/preferences`);
      assert.equal(stored.global.channels.email, false);
      assert.equal(stored.workflows.find((w: any) => w.workflow.identifier === INBOX)?.channels.in_app, false);
    });

    it('subscribers.preferences.bulkUpdate: several workflows at once', async () => {
      const subscriberId = uid('preferences-bulk');
      await createSubscriberOverHttp(server, subscriberId);
      const { result } = await accepted(
        'subscribers.preferences.bulkUpdate',
        novu.subscribers.preferences.bulkUpdate(
          { preferences: [{ workflowId: INBOX, channels: { inApp: false } }, { workflowId: DELAYED, channels: { inApp: false } }] },
          subscriberId,
        ),
      );
      assert.deepEqual(result.map((p) => p.workflow?.identifier).sort(), [DELAYED, INBOX].sort());
      assert.ok(result.every((p) => p.level === 'template' && p.channels.inApp === false));
      const stored = await httpOk(server, 'GET', `/v2/subscribers/${subscriberId}/preferences?criticality=all`);
      for (const workflowId of [INBOX, DELAYED]) {
        assert.equal(stored.workflows.find((w: any) => w.workflow.identifier === workflowId)?.channels.in_app, false, workflowId);
      }
    });

    it('workflows.create (active): the workflow model, and a trigger delivers its step', async () => {
      const workflowId = uid('sdk-made');
      const { result } = await accepted(
        'workflows.create',
        novu.workflows.create({
          workflowId,
          name: 'Made by the SDK',
          description: 'Greets a new member',
          tags: ['onboarding'],
          active: true,
          steps: [{ name: 'Welcome', type: 'in_app', controlValues: { subject: 'Welcome', body: 'Hi {{payload.name}}' } }],
        }),
      );
      assert.equal(result.workflowId, workflowId);
      assert.equal(result.name, 'Made by the SDK');
      assert.equal(result.description, 'Greets a new member');
      assert.deepEqual(result.tags, ['onboarding']);
      assert.equal(result.active, true);
      assert.equal(result.status, 'ACTIVE');
      assert.equal(result.steps.length, 1);
      assert.equal(result.steps[0]!.type, 'in_app');
      assert.equal(result.steps[0]!.name, 'Welcome');
      assert.equal(stepBody(result.steps[0]), 'Hi {{payload.name}}');
      const subscriberId = uid('sdk-made');
      await triggerEvent(server, { name: workflowId, to: subscriberId, payload: { name: 'Ada' } });
      assert.deepEqual((await getFeed(server, subscriberId)).data.map((m) => m.subject), ['Welcome']);
    });

    it('workflows.create leaving active out: stored as the SDK sends it (inactive)', async () => {
      const workflowId = uid('sdk-default');
      const { result } = await accepted(
        'workflows.create',
        novu.workflows.create({ workflowId, name: 'Default activity', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'x' } }] }),
      );
      assert.equal(result.active, false);
      const listed = (await httpOk(server, 'GET', '/v2/workflows')) as unknown;
      const rows = Array.isArray(listed) ? listed : (listed as { workflows: unknown[] }).workflows;
      assert.equal((rows as { workflowId: string; active: boolean }[]).find((w) => w.workflowId === workflowId)?.active, false);
    });

    it('workflows.list: the environment\'s workflows, searchable by name', async () => {
      const marker = uid('listed');
      for (const name of ['alpha', 'beta']) {
        await createWorkflow(server, { workflowId: `${marker}-${name}`, name: `${marker} ${name}`, tags: [marker], steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: name } }] });
      }
      const all = await accepted('workflows.list', novu.workflows.list({ limit: 100 }));
      const ours = all.result.workflows.filter((w) => w.workflowId.startsWith(marker));
      assert.deepEqual(ours.map((w) => w.name).sort(), [`${marker} alpha`, `${marker} beta`]);
      assert.ok(all.result.totalCount >= 2);
      const searched = await accepted('workflows.list', novu.workflows.list({ query: `${marker} beta` }));
      assert.deepEqual(searched.result.workflows.map((w) => w.workflowId), [`${marker}-beta`]);
    });

    it('workflows.get: one workflow in the workflow model', async () => {
      const workflowId = uid('fetched');
      await createWorkflow(server, {
        workflowId,
        name: 'Fetched',
        tags: ['billing'],
        active: true,
        steps: [
          { name: 'inbox', type: 'in_app', controlValues: { body: 'Due {{payload.amount}}' } },
          { name: 'wait', type: 'delay', controlValues: { amount: 5, unit: 'minutes' } },
        ],
      });
      const { result } = await accepted('workflows.get', novu.workflows.get(workflowId));
      assert.equal(result.workflowId, workflowId);
      assert.equal(result.name, 'Fetched');
      assert.deepEqual(result.tags, ['billing']);
      assert.equal(result.active, true);
      assert.deepEqual(result.steps.map((s) => [s.name, s.type]), [['inbox', 'in_app'], ['wait', 'delay']]);
      assert.equal(stepBody(result.steps[0]), 'Due {{payload.amount}}');
    });

    it('workflows.update: the new definition, used by the next trigger', async () => {
      const workflowId = uid('updated');
      await inAppWorkflow(server, workflowId, { body: 'Before' });
      const { result } = await accepted(
        'workflows.update',
        novu.workflows.update(
          { name: 'Updated', active: true, preferences: {}, steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'After {{payload.n}}' } }] },
          workflowId,
        ),
      );
      assert.equal(result.workflowId, workflowId);
      assert.equal(result.name, 'Updated');
      assert.equal(stepBody(result.steps[0]), 'After {{payload.n}}');
      const subscriberId = uid('updated');
      await triggerEvent(server, { name: workflowId, to: subscriberId, payload: { n: 1 } });
      assert.deepEqual((await getFeed(server, subscriberId)).data.map((m) => m.content), ['After 1']);
    });

    it('workflows.delete: the workflow is gone', async () => {
      const workflowId = uid('deleted');
      await inAppWorkflow(server, workflowId, { body: 'Bye' });
      await accepted('workflows.delete', novu.workflows.delete(workflowId));
      const gone = await refusedWith('workflows.get', novu.workflows.get(workflowId), ErrorDto);
      assert.equal(gone.statusCode, 404);
      assert.equal((await server.post('/v1/events/trigger', { name: workflowId, to: uid('deleted') })).status, 422);
    });

    it('trigger of an inactive workflow: 201 trigger_not_active, nothing delivered', async () => {
      const workflowId = uid('inactive');
      await createWorkflow(server, { workflowId, name: 'Inactive', active: false, steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'never' } }] });
      const subscriberId = uid('inactive');
      await createSubscriberOverHttp(server, subscriberId);
      const { result } = await accepted('trigger', novu.trigger({ workflowId, to: subscriberId }));
      assert.equal(result.acknowledged, true);
      assert.equal(result.status, 'trigger_not_active');
      assert.deepEqual((await getFeed(server, subscriberId)).data, []);
    });

    it('triggerBulk: one answer per event, each delivered', async () => {
      const [first, second] = [uid('bulk-trigger'), uid('bulk-trigger')];
      const { result } = await accepted(
        'triggerBulk',
        novu.triggerBulk({
          events: [
            { workflowId: INBOX, to: first, payload: { name: 'One', orderId: 'B-1' } },
            { workflowId: INBOX, to: { subscriberId: second }, payload: { name: 'Two', orderId: 'B-2' } },
          ],
        }),
      );
      assert.equal(result.length, 2);
      assert.ok(result.every((r) => r.acknowledged && r.status === 'processed' && r.transactionId));
      assert.deepEqual((await getFeed(server, first)).data.map((m) => m.transactionId), [result[0]!.transactionId]);
      assert.deepEqual((await getFeed(server, second)).data.map((m) => m.transactionId), [result[1]!.transactionId]);
    });

    it('topics.create: made, then updated by key', async () => {
      const key = uid('topic');
      const made = await accepted('topics.create', novu.topics.create({ key, name: 'Release notes' }));
      assert.equal(made.result.key, key);
      assert.equal(made.result.name, 'Release notes');
      assert.ok(made.result.id);
      const again = await accepted('topics.create', novu.topics.create({ key, name: 'Product news' }));
      assert.equal(again.result.id, made.result.id);
      assert.equal(again.result.name, 'Product news');
      assert.equal((await httpOk(server, 'GET', `/v2/topics/${key}`)).name, 'Product news');
    });

    it('topics.create with failIfExists on an existing key: the 409 the SDK parses', async () => {
      const key = uid('topic');
      await httpOk(server, 'POST', '/v2/topics', { key, name: 'Taken' });
      const conflict = await refusedWith('topics.create', novu.topics.create({ key, name: 'Again' }, true), TopicConflict);
      assert.equal(conflict.statusCode, 409);
      assert.equal(conflict.key, key);
    });

    it('topics.list: filtered by key, in cursor pages', async () => {
      const marker = uid('topic-list');
      for (const suffix of ['a', 'b', 'c']) await httpOk(server, 'POST', '/v2/topics', { key: `${marker}-${suffix}`, name: `${marker} ${suffix}` });
      const exact = await accepted('topics.list', novu.topics.list({ key: `${marker}-b` }));
      assert.deepEqual(exact.result.data.map((t) => t.key), [`${marker}-b`]);
      const first = await accepted('topics.list', novu.topics.list({ name: marker, limit: 2 }));
      assert.equal(first.result.data.length, 2);
      assert.ok(first.result.next, 'a next cursor');
      const second = await accepted('topics.list', novu.topics.list({ name: marker, limit: 2, after: first.result.next! }));
      const keys = [...first.result.data, ...second.result.data].map((t) => t.key).sort();
      assert.deepEqual(keys, [`${marker}-a`, `${marker}-b`, `${marker}-c`]);
    });

    it('topics.get: the topic by key', async () => {
      const key = uid('topic');
      const made = await httpOk(server, 'POST', '/v2/topics', { key, name: 'Fetched topic' });
      const { result } = await accepted('topics.get', novu.topics.get(key));
      assert.equal(result.id, made._id);
      assert.equal(result.key, key);
      assert.equal(result.name, 'Fetched topic');
    });

    it('topics.update: the new name', async () => {
      const key = uid('topic');
      await httpOk(server, 'POST', '/v2/topics', { key, name: 'Old name' });
      const { result } = await accepted('topics.update', novu.topics.update({ name: 'New name' }, key));
      assert.equal(result.key, key);
      assert.equal(result.name, 'New name');
      assert.equal((await httpOk(server, 'GET', `/v2/topics/${key}`)).name, 'New name');
    });

    it('topics.delete: acknowledged, and the topic is gone', async () => {
      const key = uid('topic');
      await httpOk(server, 'POST', '/v2/topics', { key, name: 'Doomed' });
      const { result } = await accepted('topics.delete', novu.topics.delete(key));
      assert.equal(result.acknowledged, true);
      const gone = await refusedWith('topics.get', novu.topics.get(key), ErrorDto);
      assert.equal(gone.statusCode, 404);
    });

    it('topics.subscriptions.create: each subscriber subscribed', async () => {
      const key = uid('topic');
      await httpOk(server, 'POST', '/v2/topics', { key, name: 'Subscribed' });
      const members = [uid('member'), uid('member')];
      for (const subscriberId of members) await createSubscriberOverHttp(server, subscriberId);
      const { result } = await accepted('topics.subscriptions.create', novu.topics.subscriptions.create({ subscriptions: members }, key));
      assert.deepEqual(result.data.map((s) => s.subscriber?.subscriberId).sort(), [...members].sort());
      assert.ok(result.data.every((s) => s.topic.key === key));
      assert.deepEqual(result.meta, { totalCount: 2, successful: 2, failed: 0 });
    });

    it('topics.subscriptions.list: the topic\'s subscribers', async () => {
      const key = uid('topic');
      const members = [uid('member'), uid('member')];
      for (const subscriberId of members) await createSubscriberOverHttp(server, subscriberId);
      await httpOk(server, 'POST', '/v2/topics', { key, name: 'Listed' });
      await httpOk(server, 'POST', `/v2/topics/${key}/subscriptions`, { subscriptions: members });
      const { result } = await accepted('topics.subscriptions.list', novu.topics.subscriptions.list({ topicKey: key }));
      assert.deepEqual(result.data.map((s) => s.subscriber.subscriberId).sort(), [...members].sort());
      assert.ok(result.data.every((s) => s.topic.key === key));
      assert.equal(result.totalCount, 2);
    });

    it('topics.subscriptions.delete: the named subscribers unsubscribed', async () => {
      const key = uid('topic');
      const [leaving, staying] = [uid('member'), uid('member')];
      for (const subscriberId of [leaving, staying]) await createSubscriberOverHttp(server, subscriberId);
      await httpOk(server, 'POST', '/v2/topics', { key, name: 'Shrinking' });
      await httpOk(server, 'POST', `/v2/topics/${key}/subscriptions`, { subscriptions: [leaving, staying] });
      const { result } = await accepted('topics.subscriptions.delete', novu.topics.subscriptions.delete({ subscriptions: [leaving] }, key));
      assert.deepEqual(result.data.map((s) => s.subscriber?.subscriberId), [leaving]);
      assert.equal(result.meta.successful, 1);
      const listed = await httpOk(server, 'GET', `/v2/topics/${key}/subscriptions`);
      assert.deepEqual(listed.data.map((s: any) => s.subscriber.subscriberId), [staying]);
    });

    it('trigger to a topic: each subscriber of the topic gets the message once', async () => {
      const key = uid('topic');
      const members = [uid('member'), uid('member'), uid('member')];
      const outsider = uid('outsider');
      for (const subscriberId of [...members, outsider]) await createSubscriberOverHttp(server, subscriberId);
      await httpOk(server, 'POST', '/v2/topics', { key, name: 'Fan-out' });
      await httpOk(server, 'POST', `/v2/topics/${key}/subscriptions`, { subscriptions: members });
      const { result } = await accepted(
        'trigger',
        novu.trigger({ workflowId: INBOX, to: [{ type: 'Topic', topicKey: key }, members[0]!], payload: { name: 'all', orderId: 'T-ALL' } }),
      );
      assert.equal(result.status, 'processed');
      for (const subscriberId of members) {
        const delivered = await waitFor(`${subscriberId}'s message`, async () => {
          const feed = await getFeed(server, subscriberId);
          return feed.data.length > 0 ? feed.data : undefined;
        });
        assert.deepEqual(delivered.map((m) => m.transactionId), [result.transactionId], subscriberId);
      }
      assert.deepEqual((await getFeed(server, outsider)).data, []);
    });

    it('subscribers.create with failIfExists on an existing subscriber: the 409 the SDK parses, with the error body', async () => {
      const subscriberId = uid('exists');
      await createSubscriberOverHttp(server, subscriberId, { firstName: 'First' });
      const conflict = await refusedWith('subscribers.create', novu.subscribers.create({ subscriberId, firstName: 'Second' }, true), SubscriberConflict);
      assert.equal(conflict.statusCode, 409);
      assert.equal(conflict.subscriberId, subscriberId);
      const body = JSON.parse(conflict.body);
      for (const field of ['statusCode', 'error', 'message', 'timestamp', 'path']) assert.ok(field in body, `error body has '${field}'`);
      assert.equal((await httpOk(server, 'GET', `/v2/subscribers/${subscriberId}`)).firstName, 'First');
    });

    it('credentials for a provider with no active integration: a 400 naming it, and the subscriber stays readable', async () => {
      const subscriberId = uid('no-integration');
      await createSubscriberOverHttp(server, subscriberId);
      const refusal = await refusedWith(
        'subscribers.credentials.append',
        novu.subscribers.credentials.append({ providerId: 'pushpad', credentials: { deviceTokens: ['orphan'] } }, subscriberId),
        ErrorDto,
      );
      assert.equal(refusal.statusCode, 400);
      assert.match(refusal.message, /pushpad/);
      const { result } = await accepted('subscribers.retrieve', novu.subscribers.retrieve(subscriberId));
      assert.deepEqual(result.channels ?? [], []);
    });

    it('errors the SDK types: an unknown subscriber is a 404 ErrorDto', async () => {
      const refusal = await refusedWith('subscribers.retrieve', novu.subscribers.retrieve(uid('nobody')), ErrorDto);
      assert.equal(refusal.statusCode, 404);
      assert.ok(refusal.timestamp && refusal.path);
    });

    it('errors the SDK types: a trigger of an unknown workflow is a 422 ValidationErrorDto', async () => {
      const refusal = await refusedWith('trigger', novu.trigger({ workflowId: uid('no-such-workflow'), to: uid('nobody') }), ValidationErrorDto);
      assert.equal(refusal.statusCode, 422);
      assert.equal(typeof refusal.errors, 'object');
    });
  });

  describe('notifications family', () => {
    before(async () => {
      await createWorkflow(server, {
        workflowId: INVOICE,
        name: 'Invoice ready',
        tags: ['billing'],
        severity: 'high',
        steps: [
          {
            name: 'inbox',
            type: 'in_app',
            controlValues: {
              subject: 'Invoice {{payload.n}}',
              body: 'Invoice {{payload.n}} is ready',
              primaryAction: { label: 'Pay', redirect: { url: '/pay' } },
              secondaryAction: { label: 'Later' },
              data: { kind: 'invoice' },
            },
          },
        ],
      });
      await createWorkflow(server, {
        workflowId: COMMENT,
        name: 'New comment',
        tags: ['social'],
        severity: 'low',
        steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Comment {{payload.n}}', data: { kind: 'comment' } } }],
      });
    });

    type ListRequest = Omit<Parameters<Novu['subscribers']['notifications']['list']>[0], 'subscriberId'>;
    const list = (subscriberId: string, request: ListRequest = {}) =>
      accepted('subscribers.notifications.list', novu.subscribers.notifications.list({ subscriberId, ...request }));
    /** The ids the family lists for a subscriber, over plain HTTP (fixtures and read-backs). */
    async function listedIds(subscriberId: string, query: Record<string, string> = {}): Promise<string[]> {
      const r = await server.get(`/v2/subscribers/${subscriberId}/notifications`, { query });
      assert.equal(r.status, 200, `GET /v2/subscribers/${subscriberId}/notifications: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.data.map((n: { id: string }) => n.id);
    }

    it('subscribers.notifications.list: newest first, in the inbox model', async () => {
      const subscriberId = uid('family');
      const invoice = await deliver(server, subscriberId, INVOICE, { n: 1 });
      const comment = await deliver(server, subscriberId, COMMENT, { n: 2 });
      const { result } = await list(subscriberId);
      assert.deepEqual(result.data.map((n) => n.id), [comment.messageId, invoice.messageId]);
      assert.equal(result.hasMore, false);
      const item = result.data[1]!;
      assert.equal(item.transactionId, invoice.transactionId);
      assert.equal(item.subject, 'Invoice 1');
      assert.equal(item.body, 'Invoice 1 is ready');
      assert.equal(item.to.subscriberId, subscriberId);
      assert.equal(item.isRead, false);
      assert.equal(item.isSeen, false);
      assert.equal(item.isArchived, false);
      assert.equal(item.isSnoozed, false);
      assert.equal(item.channelType, 'in_app');
      assert.equal(item.severity, 'high');
      assert.deepEqual(item.tags, ['billing']);
      assert.deepEqual(item.data, { kind: 'invoice' });
      assert.equal(item.workflow?.identifier, INVOICE);
      assert.equal(item.primaryAction?.label, 'Pay');
      assert.equal(item.primaryAction?.isCompleted, false);
      assert.equal(item.primaryAction?.redirect?.url, '/pay');
      assert.equal(item.secondaryAction?.label, 'Later');
    });

    it('subscribers.notifications.list: read, severity, data and time filters, cursor and offset', async () => {
      const subscriberId = uid('family-filters');
      const startedAt = Date.now();
      const first = await deliver(server, subscriberId, INVOICE, { n: 1 });
      const second = await deliver(server, subscriberId, INVOICE, { n: 2 });
      const third = await deliver(server, subscriberId, COMMENT, { n: 3 });
      await httpOk(server, 'POST', `/v1/subscribers/${subscriberId}/messages/mark-as`, { messageId: first.messageId, markAs: 'read' });
      const ids = async (request: ListRequest) => (await list(subscriberId, request)).result.data.map((n) => n.id);
      assert.deepEqual(await ids({ read: false }), [third.messageId, second.messageId]);
      assert.deepEqual(await ids({ read: true }), [first.messageId]);
      assert.deepEqual(await ids({ seen: false }), [third.messageId, second.messageId]);
      assert.deepEqual(await ids({ severity: ['high'] }), [second.messageId, first.messageId]);
      assert.deepEqual(await ids({ data: JSON.stringify({ kind: 'comment' }) }), [third.messageId]);
      assert.deepEqual(await ids({ createdGte: startedAt, createdLte: Date.now() }), [third.messageId, second.messageId, first.messageId]);
      assert.deepEqual(await ids({ createdGte: Date.now() + SNOOZE_MS }), []);
      const page = await list(subscriberId, { limit: 1 });
      assert.equal(page.result.hasMore, true);
      assert.deepEqual(await ids({ limit: 1, after: page.result.data[0]!.id }), [second.messageId]);
      assert.deepEqual(await ids({ limit: 1, offset: 2 }), [first.messageId]);
    });

    it('subscribers.notifications.count: one count per filter', async () => {
      const subscriberId = uid('family-count');
      const read = await deliver(server, subscriberId, INVOICE, { n: 1 });
      await deliver(server, subscriberId, INVOICE, { n: 2 });
      await deliver(server, subscriberId, COMMENT, { n: 3 });
      await httpOk(server, 'POST', `/v1/subscribers/${subscriberId}/messages/mark-as`, { messageId: read.messageId, markAs: 'read' });
      const filters = [{ read: false }, { read: true }, { tags: ['billing'] }, { severity: 'low' }, { archived: true }, {}];
      const { result } = await accepted('subscribers.notifications.count', novu.subscribers.notifications.count(subscriberId, JSON.stringify(filters)));
      assert.deepEqual(result.map((c) => c.count), [2, 1, 2, 1, 0, 3]);
      assert.equal(result[0]!.filter.read, false);
      assert.deepEqual(result[2]!.filter.tags, ['billing']);
    });

    it('subscribers.notifications.markAsRead: read and seen', async () => {
      const subscriberId = uid('family-read');
      const { messageId } = await deliver(server, subscriberId, INVOICE, { n: 1 });
      const { result } = await accepted('subscribers.notifications.markAsRead', novu.subscribers.notifications.markAsRead({ subscriberId, notificationId: messageId }));
      assert.equal(result.id, messageId);
      assert.equal(result.isRead, true);
      assert.equal(result.isSeen, true);
      assert.ok(result.readAt, 'readAt set');
      const stored = (await getFeed(server, subscriberId)).data[0];
      assert.equal(stored.read, true);
      assert.equal(stored.seen, true);
    });

    it('subscribers.notifications.markAsUnread: unread again', async () => {
      const subscriberId = uid('family-unread');
      const { messageId } = await deliver(server, subscriberId, INVOICE, { n: 1 });
      await httpOk(server, 'POST', `/v1/subscribers/${subscriberId}/messages/mark-as`, { messageId, markAs: 'read' });
      const { result } = await accepted('subscribers.notifications.markAsUnread', novu.subscribers.notifications.markAsUnread({ subscriberId, notificationId: messageId }));
      assert.equal(result.isRead, false);
      assert.equal((await getFeed(server, subscriberId)).data[0].read, false);
    });

    it('subscribers.notifications.archive: archived, out of the default list, feed and unseen count', async () => {
      const subscriberId = uid('family-archive');
      const kept = await deliver(server, subscriberId, INVOICE, { n: 1 });
      const archived = await deliver(server, subscriberId, INVOICE, { n: 2 });
      const { result } = await accepted('subscribers.notifications.archive', novu.subscribers.notifications.archive({ subscriberId, notificationId: archived.messageId }));
      assert.equal(result.id, archived.messageId);
      assert.equal(result.isArchived, true);
      assert.equal(result.isRead, false);
      assert.ok(result.archivedAt, 'archivedAt set');
      assert.deepEqual(await listedIds(subscriberId), [kept.messageId]);
      assert.deepEqual(await listedIds(subscriberId, { archived: 'true' }), [archived.messageId]);
      assert.deepEqual((await getFeed(server, subscriberId)).data.map((m) => m._id), [kept.messageId]);
      assert.equal(await unseenCount(server, subscriberId), 1);
    });

    it('subscribers.notifications.unarchive: back in the default list', async () => {
      const subscriberId = uid('family-unarchive');
      const { messageId } = await deliver(server, subscriberId, INVOICE, { n: 1 });
      await httpOk(server, 'PATCH', `/v2/subscribers/${subscriberId}/notifications/${messageId}/archive`);
      const { result } = await accepted('subscribers.notifications.unarchive', novu.subscribers.notifications.unarchive({ subscriberId, notificationId: messageId }));
      assert.equal(result.isArchived, false);
      assert.deepEqual(await listedIds(subscriberId), [messageId]);
    });

    it('subscribers.notifications.snooze: hidden until the given time', async () => {
      const subscriberId = uid('family-snooze');
      const kept = await deliver(server, subscriberId, INVOICE, { n: 1 });
      const snoozed = await deliver(server, subscriberId, INVOICE, { n: 2 });
      const until = new Date(Date.now() + SNOOZE_MS);
      const { result } = await accepted(
        'subscribers.notifications.snooze',
        novu.subscribers.notifications.snooze({ subscriberId, notificationId: snoozed.messageId, snoozeSubscriberNotificationDto: { snoozeUntil: until } }),
      );
      assert.equal(result.isSnoozed, true);
      assert.equal(Date.parse(result.snoozedUntil ?? ''), until.getTime());
      assert.deepEqual(await listedIds(subscriberId), [kept.messageId]);
      assert.deepEqual(await listedIds(subscriberId, { snoozed: 'true' }), [snoozed.messageId]);
      assert.deepEqual((await getFeed(server, subscriberId)).data.map((m) => m._id), [kept.messageId]);
      assert.equal(await unseenCount(server, subscriberId), 1);
    });

    it('subscribers.notifications.unsnooze: back at once', async () => {
      const subscriberId = uid('family-unsnooze');
      const { messageId } = await deliver(server, subscriberId, INVOICE, { n: 1 });
      await httpOk(server, 'PATCH', `/v2/subscribers/${subscriberId}/notifications/${messageId}/snooze`, { snoozeUntil: new Date(Date.now() + SNOOZE_MS).toISOString() });
      const { result } = await accepted('subscribers.notifications.unsnooze', novu.subscribers.notifications.unsnooze({ subscriberId, notificationId: messageId }));
      assert.equal(result.isSnoozed, false);
      assert.deepEqual(await listedIds(subscriberId), [messageId]);
    });

    it('subscribers.notifications.completeAction: the primary action completed', async () => {
      const subscriberId = uid('family-complete');
      const { messageId } = await deliver(server, subscriberId, INVOICE, { n: 1 });
      const { result } = await accepted(
        'subscribers.notifications.completeAction',
        novu.subscribers.notifications.completeAction({ subscriberId, notificationId: messageId, actionType: 'primary' }),
      );
      assert.equal(result.primaryAction?.isCompleted, true);
      assert.equal(result.secondaryAction?.isCompleted, false);
      const stored = (await getFeed(server, subscriberId)).data[0];
      assert.equal(stored.cta.action.status, 'done');
      assert.equal(stored.cta.action.result.type, 'primary');
    });

    it('subscribers.notifications.revertAction: the action pending again', async () => {
      const subscriberId = uid('family-revert');
      const { messageId } = await deliver(server, subscriberId, INVOICE, { n: 1 });
      await httpOk(server, 'POST', `/v1/subscribers/${subscriberId}/messages/${messageId}/actions/primary`, { status: 'done' });
      const { result } = await accepted(
        'subscribers.notifications.revertAction',
        novu.subscribers.notifications.revertAction({ subscriberId, notificationId: messageId, actionType: 'primary' }),
      );
      assert.equal(result.primaryAction?.isCompleted, false);
      assert.equal((await getFeed(server, subscriberId)).data[0].cta.action.status, 'pending');
    });

    it('subscribers.notifications.delete: the notification is gone', async () => {
      const subscriberId = uid('family-delete');
      const kept = await deliver(server, subscriberId, INVOICE, { n: 1 });
      const deleted = await deliver(server, subscriberId, INVOICE, { n: 2 });
      await accepted('subscribers.notifications.delete', novu.subscribers.notifications.delete({ subscriberId, notificationId: deleted.messageId }));
      assert.deepEqual(await listedIds(subscriberId), [kept.messageId]);
      assert.deepEqual((await getFeed(server, subscriberId)).data.map((m) => m._id), [kept.messageId]);
    });

    it('subscribers.notifications.markAllAsRead: all, or those matching data', async () => {
      const subscriberId = uid('family-read-all');
      const invoice = await deliver(server, subscriberId, INVOICE, { n: 1 });
      const comment = await deliver(server, subscriberId, COMMENT, { n: 2 });
      await accepted(
        'subscribers.notifications.markAllAsRead',
        novu.subscribers.notifications.markAllAsRead({ data: JSON.stringify({ kind: 'invoice' }) }, subscriberId),
      );
      assert.deepEqual(await listedIds(subscriberId, { read: 'true' }), [invoice.messageId]);
      await accepted('subscribers.notifications.markAllAsRead', novu.subscribers.notifications.markAllAsRead({}, subscriberId));
      assert.deepEqual(await listedIds(subscriberId, { read: 'true' }), [comment.messageId, invoice.messageId]);
    });

    it('subscribers.notifications.markAsSeen: the named notifications seen', async () => {
      const subscriberId = uid('family-seen');
      const seen = await deliver(server, subscriberId, INVOICE, { n: 1 });
      const unseen = await deliver(server, subscriberId, INVOICE, { n: 2 });
      await accepted('subscribers.notifications.markAsSeen', novu.subscribers.notifications.markAsSeen({ notificationIds: [seen.messageId] }, subscriberId));
      assert.deepEqual(await listedIds(subscriberId, { seen: 'true' }), [seen.messageId]);
      assert.deepEqual(await listedIds(subscriberId, { seen: 'false' }), [unseen.messageId]);
    });

    it('subscribers.notifications.archiveAll: every notification archived', async () => {
      const subscriberId = uid('family-archive-all');
      const first = await deliver(server, subscriberId, INVOICE, { n: 1 });
      const second = await deliver(server, subscriberId, COMMENT, { n: 2 });
      await accepted('subscribers.notifications.archiveAll', novu.subscribers.notifications.archiveAll({}, subscriberId));
      assert.deepEqual(await listedIds(subscriberId), []);
      assert.deepEqual(await listedIds(subscriberId, { archived: 'true' }), [second.messageId, first.messageId]);
    });

    it('subscribers.notifications.archiveAllRead: only the read ones archived', async () => {
      const subscriberId = uid('family-archive-read');
      const read = await deliver(server, subscriberId, INVOICE, { n: 1 });
      const unread = await deliver(server, subscriberId, INVOICE, { n: 2 });
      await httpOk(server, 'POST', `/v1/subscribers/${subscriberId}/messages/mark-as`, { messageId: read.messageId, markAs: 'read' });
      await accepted('subscribers.notifications.archiveAllRead', novu.subscribers.notifications.archiveAllRead({}, subscriberId));
      assert.deepEqual(await listedIds(subscriberId), [unread.messageId]);
      assert.deepEqual(await listedIds(subscriberId, { archived: 'true' }), [read.messageId]);
    });

    it('subscribers.notifications.deleteAll: every notification gone', async () => {
      const subscriberId = uid('family-delete-all');
      await deliver(server, subscriberId, INVOICE, { n: 1 });
      await deliver(server, subscriberId, COMMENT, { n: 2 });
      await accepted('subscribers.notifications.deleteAll', novu.subscribers.notifications.deleteAll({}, subscriberId));
      assert.deepEqual(await listedIds(subscriberId), []);
      assert.deepEqual((await getFeed(server, subscriberId)).data, []);
    });
  });
});
