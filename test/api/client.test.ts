import { expect } from '@open-wc/testing';
import { NotifApiError, NotifClient, encodePayload, unwrap } from '../../src/api/client.ts';
import type { ErrorBody, Message } from '../../src/api/types.ts';
import { api, createWorkflow, injectFault, testServer, trigger, triggerMany, uniqueId, uniqueSubscriber } from '../components/server.ts';

/** Calls `fn` and returns what it throws (fails when it resolves). */
async function failure(fn: () => Promise<unknown>): Promise<NotifApiError> {
  try {
    await fn();
  } catch (e) {
    return e as NotifApiError;
  }
  throw new Error('expected the call to fail');
}

/** A fetch that records every request and response, passing everything through to the real server. */
function recordingFetch() {
  const calls: { url: string; method: string; headers: Headers; response: Response }[] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    calls.push({ url: String(input), method: init?.method ?? 'GET', headers: new Headers(init?.headers), response: response.clone() });
    return response;
  };
  return { calls, fetch: recording };
}

describe('NotifClient', () => {
  describe('envelope rule (decisions.md)', () => {
    it('unwraps an object whose only key is data, and nothing else', () => {
      expect(unwrap({ data: { count: 3 } })).to.deep.equal({ count: 3 });
      expect(unwrap({ data: 5 })).to.equal(5);
      const page = { data: [], hasMore: false, page: 0, pageSize: 10, totalCount: 0 };
      expect(unwrap(page)).to.equal(page);
      expect(unwrap([{ data: 1 }])).to.deep.equal([{ data: 1 }]);
      expect(unwrap(true)).to.equal(true);
      expect(unwrap(null)).to.equal(null);
    });

    it('reads Novu-enveloped answers of the real server as the bare ones', async () => {
      const { baseUrl, apiKey } = await testServer();
      // The real server's answers, wrapped the way a Novu deployment sends non-paginated bodies.
      const novuLike: typeof fetch = async (input, init) => {
        const r = await fetch(input, init);
        const text = await r.text();
        return new Response(text ? JSON.stringify({ data: JSON.parse(text) }) : null, { status: r.status, headers: r.headers });
      };
      const subscriberId = await uniqueSubscriber({ firstName: 'Ada' });
      const bare = new NotifClient({ baseUrl, apiKey });
      const wrapped = new NotifClient({ baseUrl, apiKey, fetch: novuLike });
      expect(await wrapped.getSubscriber(subscriberId)).to.deep.equal(await bare.getSubscriber(subscriberId));
      expect(await wrapped.unseenCount(subscriberId)).to.deep.equal({ count: 0 });
      // A wrapped paginated body: {data: {data: [...], hasMore...}} unwraps once, to the page.
      const feed = await wrapped.feed(subscriberId);
      expect(feed.data).to.be.an('array');
      expect(feed).to.include.keys('hasMore', 'page', 'pageSize', 'totalCount');
    });
  });

  describe('errors', () => {
    it('401 for an unknown key, as a NotifApiError with the error body', async () => {
      const err = await failure(async () => (await api('not-a-key')).getSubscriber('anyone'));
      expect(err).to.be.instanceOf(NotifApiError);
      expect(err.name).to.equal('NotifApiError');
      expect(err.status).to.equal(401);
      const body = err.body as ErrorBody;
      expect(body.statusCode).to.equal(401);
      expect(body.error).to.equal('Unauthorized');
      expect(err.message).to.equal(body.message);
    });

    it('404 for an unknown subscriber, and for one of another environment', async () => {
      const subscriberId = await uniqueSubscriber();
      const err = await failure(async () => (await api()).getSubscriber(uniqueId('nobody')));
      expect(err.status).to.equal(404);
      expect((err.body as ErrorBody).path).to.include('/v2/subscribers/');
      const { otherKey } = await testServer();
      const other = await failure(async () => (await api(otherKey)).getSubscriber(subscriberId));
      expect(other.status).to.equal(404);
    });

    it('422 with field errors for invalid input', async () => {
      const subscriberId = await uniqueSubscriber();
      const client = await api();
      const err = await failure(() => client.markAll(subscriberId, { markAs: 'everything' as 'read' }));
      expect(err.status).to.equal(422);
      expect((err.body as ErrorBody).errors).to.have.property('markAs');
    });

    it('retryAfter from the Retry-After header', async () => {
      const subscriberId = await uniqueSubscriber();
      await injectFault({ path: `/subscribers/${subscriberId}/notifications/unseen`, status: 429, retryAfter: 7 });
      const err = await failure(async () => (await api()).unseenCount(subscriberId));
      expect(err.status).to.equal(429);
      expect(err.retryAfter).to.equal(7);
      expect(await (await api()).unseenCount(subscriberId)).to.deep.equal({ count: 0 });
    });

    it('status 0 when the service cannot be reached', async () => {
      const client = new NotifClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'x' });
      const err = await failure(() => client.unseenCount('s'));
      expect(err).to.be.instanceOf(NotifApiError);
      expect(err.status).to.equal(0);
    });
  });

  it('aborts through the AbortSignal', async () => {
    const subscriberId = await uniqueSubscriber();
    const client = await api();
    const ctrl = new AbortController();
    const pending = client.feed(subscriberId, {}, { signal: ctrl.signal });
    ctrl.abort();
    const err = await failure(() => pending);
    expect((err as unknown as Error).name).to.equal('AbortError');
    const already = await failure(() => client.unseenCount(subscriberId, {}, { signal: AbortSignal.abort() }));
    expect((already as unknown as Error).name).to.equal('AbortError');
  });

  describe('idempotency-key', () => {
    it('is sent on every mutation, new each time, never on reads', async () => {
      const { baseUrl, apiKey } = await testServer();
      const rec = recordingFetch();
      const client = new NotifClient({ baseUrl, apiKey, fetch: rec.fetch });
      const subscriberId = uniqueId('sub');
      await client.createSubscriber({ subscriberId });
      await client.createSubscriber({ subscriberId, firstName: 'B' });
      await client.getSubscriber(subscriberId);
      const [a, b, get] = rec.calls;
      expect(a!.headers.get('idempotency-key')).to.match(/^[0-9a-f-]{32,36}$/);
      expect(b!.headers.get('idempotency-key')).to.match(/^[0-9a-f-]{32,36}$/);
      expect(a!.headers.get('idempotency-key')).not.to.equal(b!.headers.get('idempotency-key'));
      expect(get!.headers.has('idempotency-key')).to.equal(false);
      expect(a!.headers.get('authorization')).to.equal(`ApiKey ${apiKey}`);
    });

    it('a retry with the same key is answered by a replay', async () => {
      const { baseUrl, apiKey } = await testServer();
      const rec = recordingFetch();
      const client = new NotifClient({ baseUrl, apiKey, fetch: rec.fetch });
      const subscriberId = uniqueId('sub');
      const idempotencyKey = crypto.randomUUID();
      const first = await client.createSubscriber({ subscriberId }, {}, { idempotencyKey });
      const again = await client.createSubscriber({ subscriberId }, {}, { idempotencyKey });
      expect(again).to.deep.equal(first);
      expect(rec.calls[0]!.headers.get('idempotency-key')).to.equal(idempotencyKey);
      expect(rec.calls[0]!.response.headers.get('idempotency-replay')).to.equal(null);
      expect(rec.calls[1]!.response.headers.get('idempotency-replay')).to.equal('true');
      expect(rec.calls[1]!.response.headers.get('idempotency-key')).to.equal(idempotencyKey);
      // Same key, different body: refused.
      const err = await failure(() => client.createSubscriber({ subscriberId, firstName: 'X' }, {}, { idempotencyKey }));
      expect(err.status).to.equal(422);
    });
  });

  it('app-supplied fetch authorises itself (no Authorization header of ours)', async () => {
    const { baseUrl, apiKey } = await testServer();
    const subscriberId = await uniqueSubscriber();
    const seen: (string | null)[] = [];
    const appFetch: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      seen.push(headers.get('authorization'));
      headers.set('authorization', `ApiKey ${apiKey}`);
      return fetch(input, { ...init, headers });
    };
    const client = new NotifClient({ baseUrl: `${baseUrl}/`, fetch: appFetch, headers: { 'accept-language': 'en' } });
    expect((await client.getSubscriber(subscriberId)).subscriberId).to.equal(subscriberId);
    expect(seen).to.deep.equal([null]);
  });

  describe('subscribers and credentials', () => {
    it('create, get, search, failIfExists, append and replace credentials', async () => {
      const client = await api();
      const subscriberId = uniqueId('sub');
      const email = `${subscriberId}@example.com`;
      const created = await client.createSubscriber({ subscriberId, firstName: 'Grace', lastName: 'Hopper', email });
      expect(created.subscriberId).to.equal(subscriberId);
      expect(created._id).to.match(/^[0-9a-f]{24}$/);
      expect((await client.getSubscriber(subscriberId)).email).to.equal(email);
      const found = await client.searchSubscribers({ email: email.toUpperCase(), limit: 5 });
      expect(found.data.map((s) => s.subscriberId)).to.deep.equal([subscriberId]);
      expect(found).to.include.keys('next', 'previous', 'totalCount');
      const clash = await failure(() => client.createSubscriber({ subscriberId }, { failIfExists: true }));
      expect(clash.status).to.equal(409);

      // Credentials belong to an active integration of their provider (a 400 otherwise, as Novu answers).
      const refused = await failure(() => client.appendCredentials(subscriberId, { providerId: 'pushpad', credentials: { deviceTokens: ['a'] } }));
      expect(refused.status).to.equal(400);
      await client.createIntegration({ providerId: 'fcm', channel: 'push', identifier: uniqueId('fcm'), active: true, credentials: { serviceAccount: '{"project_id":"test"}' } });
      await client.appendCredentials(subscriberId, { providerId: 'fcm', credentials: { deviceTokens: ['a', 'b'] } });
      const appended = await client.appendCredentials(subscriberId, { providerId: 'fcm', credentials: { deviceTokens: ['b', 'c'] } });
      expect(appended.channels?.find((c) => c.providerId === 'fcm')?.credentials.deviceTokens).to.deep.equal(['a', 'b', 'c']);
      const replaced = await client.replaceCredentials(subscriberId, { providerId: 'fcm', credentials: { deviceTokens: ['z'] } });
      expect(replaced.channels?.find((c) => c.providerId === 'fcm')?.credentials.deviceTokens).to.deep.equal(['z']);
    });

    it('preferences', async () => {
      const subscriberId = await uniqueSubscriber();
      const prefs = await (await api()).preferences(subscriberId, { criticality: 'all' });
      expect(prefs.global).to.have.property('enabled');
      expect(prefs.workflows).to.be.an('array');
    });
  });

  describe('integrations', () => {
    it('create, update, list; validation of active credentials', async () => {
      const client = await api();
      const identifier = uniqueId('int');
      const created = await client.createIntegration({ providerId: 'slack', channel: 'chat', name: 'Slack', identifier });
      expect(created.identifier).to.equal(identifier);
      const updated = await client.updateIntegration(created._id, { name: 'Renamed' });
      expect(updated.name).to.equal('Renamed');
      const list = await client.listIntegrations();
      expect(list.map((i) => i._id)).to.include(created._id);
      const clash = await failure(() => client.createIntegration({ providerId: 'slack', channel: 'chat', identifier }));
      expect(clash.status).to.equal(409);
    });
  });

  describe('messages and the feed', () => {
    let workflowId: string;
    before(async () => {
      workflowId = await createWorkflow({
        inApp: {
          subject: '{{payload.title}}',
          body: '{{payload.body}}',
          primaryAction: { label: 'Accept' },
          secondaryAction: { label: 'Decline' },
        },
      });
    });

    it('feed pages, unseen count, read filter', async () => {
      const subscriberId = await uniqueSubscriber();
      await triggerMany(workflowId, subscriberId, 3);
      const client = await api();
      expect(await client.unseenCount(subscriberId)).to.deep.equal({ count: 3 });
      const page0 = await client.feed(subscriberId, { limit: 2 });
      expect(page0.data.map((m) => m.subject)).to.deep.equal(['Message 2', 'Message 1']);
      expect(page0).to.include({ hasMore: true, totalCount: 3, page: 0, pageSize: 2 });
      const page1 = await client.feed(subscriberId, { limit: 2, page: 1 });
      expect(page1.data.map((m) => m.subject)).to.deep.equal(['Message 0']);
      expect(page1.hasMore).to.equal(false);
      expect((await client.feed(subscriberId, { read: true })).data).to.have.length(0);
    });

    it('payload filter: base64 of UTF-8 JSON', async () => {
      expect(atob(encodePayload({ a: 1 }))).to.equal('{"a":1}');
      const subscriberId = await uniqueSubscriber();
      await trigger(workflowId, subscriberId, { title: 'café ✓', body: 'x', tag: 'ünïcödé 🎉' });
      await trigger(workflowId, subscriberId, { title: 'other', body: 'y', tag: 'plain' });
      const feed = await (await api()).feed(subscriberId, { payload: { tag: 'ünïcödé 🎉' } });
      expect(feed.data.map((m) => m.subject)).to.deep.equal(['café ✓']);
      expect(feed.totalCount).to.equal(1);
    });

    it('mark-all, mark-as, action, delete, delete by transaction', async () => {
      const subscriberId = await uniqueSubscriber();
      const client = await api();
      const t1 = await trigger(workflowId, subscriberId, { title: 'one', body: '1' });
      await trigger(workflowId, subscriberId, { title: 'two', body: '2' });
      expect(await client.markAll(subscriberId, { markAs: 'seen' })).to.equal(2);
      expect(await client.unseenCount(subscriberId)).to.deep.equal({ count: 0 });

      const [two, one] = (await client.feed(subscriberId)).data as [Message, Message];
      const marked = await client.markAs(subscriberId, { messageId: two._id, markAs: 'read' });
      expect(marked).to.have.length(1);
      expect(marked[0]).to.include({ _id: two._id, read: true });
      const unmarked = await client.markAs(subscriberId, { messageId: [two._id], markAs: 'unread' });
      expect(unmarked[0]!.read).to.equal(false);

      expect(two.cta?.action?.buttons?.map((b) => b.type)).to.deep.equal(['primary', 'secondary']);
      const acted = await client.messageAction(subscriberId, two._id, 'primary', { status: 'done', payload: { ok: 1 } });
      expect(acted.cta?.action?.status).to.equal('done');
      expect(acted.cta?.action?.result).to.deep.include({ type: 'primary' });

      expect(await client.deleteMessage(two._id)).to.deep.equal({ acknowledged: true, status: 'deleted' });
      expect((await client.feed(subscriberId)).data.map((m) => m._id)).to.deep.equal([one._id]);

      expect(await client.deleteMessagesByTransaction(t1.transactionId, { channel: 'in_app' })).to.equal(undefined);
      expect((await client.feed(subscriberId)).data).to.have.length(0);
      const none = await failure(() => client.deleteMessagesByTransaction(t1.transactionId));
      expect(none.status).to.equal(404);
    });
  });

  describe('notifications, workflows and cancelling', () => {
    it('trigger, list with repeated query arrays, get, cancel', async () => {
      const client = await api();
      const workflowId = await createWorkflow();
      const [a, b, c] = [await uniqueSubscriber(), await uniqueSubscriber(), await uniqueSubscriber()];
      const ta = await trigger(workflowId, a);
      await trigger(workflowId, b);
      await trigger(workflowId, c);
      expect(ta).to.include({ acknowledged: true });
      expect(ta.transactionId).to.be.a('string');

      const list = await client.listNotifications({ subscriberIds: [a, b], limit: 50 });
      expect(list.data.map((n) => n.subscriber?.subscriberId).sort()).to.deep.equal([a, b].sort());
      expect(list).to.include.keys('hasMore', 'page', 'pageSize');

      const one = await client.listNotifications({ transactionId: ta.transactionId });
      expect(one.data).to.have.length(1);
      const notification = await client.getNotification(one.data[0]!._id);
      expect(notification.transactionId).to.equal(ta.transactionId);
      expect(notification.jobs?.length).to.be.greaterThan(0);

      const { workflows, totalCount } = await client.listWorkflows();
      expect(workflows.map((w) => w.workflowId)).to.include(workflowId);
      expect(totalCount).to.be.at.least(workflows.length);

      const unknown = await failure(() => client.cancelTrigger(uniqueId('tx')));
      expect(unknown.status).to.equal(404);
      expect(await client.cancelTrigger(ta.transactionId)).to.equal(false);
    });

    it('cancels a delayed run', async () => {
      const client = await api();
      const subscriberId = await uniqueSubscriber();
      const workflowId = await createWorkflow({
        steps: [
          { name: 'wait', type: 'delay', controlValues: { amount: 1, unit: 'hours' } },
          { name: 'in-app', type: 'in_app', controlValues: { subject: 'later', body: 'b' } },
        ],
      });
      const { transactionId } = await trigger(workflowId, subscriberId);
      expect(await client.cancelTrigger(transactionId)).to.equal(true);
      expect((await client.feed(subscriberId)).data).to.have.length(0);
    });

    it('unknown workflow: 422', async () => {
      const err = await failure(async () => (await api()).trigger({ name: uniqueId('nope'), to: 'x' }));
      expect(err.status).to.equal(422);
    });
  });
});
