import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import { expectErrorBody, KEYS, sqlOn, startServer, type TestServer } from './helpers.ts';
import { allMessages, createWorkflow, ensureSubscriber, getFeed, inAppWorkflow, triggerEvent } from './fixtures.ts';
import { waitFor } from './engine-fixtures.ts';
import { openStream } from './stream-fixtures.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /v1/events/trigger', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await inAppWorkflow(server, 'comment', {
      subject: '{{payload.author}} commented on {{payload.post.title}}',
      body: 'Hi {{subscriber.firstName}}, {{payload.author}} wrote: {{ payload.text }}{{payload.missing}}',
      avatar: '{{payload.avatar}}',
      redirect: { url: '/posts/{{payload.post.id}}' },
    });
    await inAppWorkflow(server, 'invite', {
      subject: 'Invitation to {{payload.project}}',
      body: 'Join {{payload.project}}?',
      primaryAction: { label: 'Accept', resultContent: 'Joined {{payload.project}}', redirect: { url: 'https://app.example.com/p/{{payload.id}}' } },
      secondaryAction: { label: 'Decline', resultContent: 'Declined' },
    });
    await inAppWorkflow(server, 'invoice', { body: 'Invoice {{payload.n}} paid', feedIdentifier: 'billing' });
    await inAppWorkflow(server, 'receipt', { body: 'Receipt {{payload.n}}', feedIdentifier: 'billing' });
    await inAppWorkflow(server, 'unsafe', { body: 'x', avatar: '{{payload.avatar}}', redirect: { url: '{{payload.url}}' } });
    await inAppWorkflow(server, 'echo', { subject: '{{payload.x}}'.repeat(76), body: 'a' + '{{payload.x}}'.repeat(700) });
  });
  after(() => server.dispose());

  it('answers 201 {acknowledged, status: processed, transactionId} and generates a transactionId', async () => {
    const r = await server.post('/v1/events/trigger', { name: 'comment', to: 'gen-tx', payload: { author: 'Grace' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.acknowledged, true);
    assert.equal(r.body.status, 'processed');
    assert.match(r.body.transactionId, UUID);
    const [m] = (await getFeed(server, 'gen-tx')).data;
    assert.equal(m.transactionId, r.body.transactionId);
  });

  it('keeps a given transactionId and puts it on the message', async () => {
    const r = await triggerEvent(server, { name: 'comment', to: 'given-tx', transactionId: 'tx-given-1' });
    assert.equal(r.transactionId, 'tx-given-1');
    const [m] = (await getFeed(server, 'given-tx')).data;
    assert.equal(m.transactionId, 'tx-given-1');
  });

  it('renders subject and body from payload and subscriber; missing placeholders render empty; text stays text', async () => {
    await ensureSubscriber(server, 'render-1', { firstName: 'Ada' });
    const payload = { author: 'Grace <b>Hopper</b>', text: 'Nice & "quoted"', post: { id: 42, title: 'Engines' }, avatar: 'https://cdn.example.com/g.png' };
    const t = await triggerEvent(server, { name: 'comment', to: 'render-1', payload, overrides: { note: 1 } });
    const { data } = await getFeed(server, 'render-1');
    assert.equal(data.length, 1);
    const m = data[0];
    assert.equal(m.channel, 'in_app');
    assert.equal(m.subject, 'Grace <b>Hopper</b> commented on Engines');
    assert.equal(m.content, 'Hi Ada, Grace <b>Hopper</b> wrote: Nice & "quoted"');
    assert.equal(m.avatar, 'https://cdn.example.com/g.png');
    assert.deepEqual(m.cta, { type: 'redirect', data: { url: '/posts/42' } });
    assert.deepEqual(m.payload, payload);
    assert.deepEqual(m.overrides, { note: 1 });
    assert.equal(m.status, 'sent');
    assert.equal(m.read, false);
    assert.equal(m.seen, false);
    assert.equal(m.templateIdentifier, 'comment');
    assert.equal(m.transactionId, t.transactionId);
    assert.match(m._notificationId, /^[0-9a-f]{24}$/);
    const workflows = (await server.get('/v2/workflows')).body.workflows;
    const comment = workflows.find((w: any) => w.workflowId === 'comment');
    assert.equal(m._templateId, comment._id);
    assert.equal(m._messageTemplateId, comment.steps[0]._id);
    assert.equal(m.template._id, comment._id);
    assert.equal(m.subscriber.subscriberId, 'render-1');
    assert.equal(m.subscriber.firstName, 'Ada');
    assert.equal(m._subscriberId, m.subscriber._id);
    assert.equal(m._feedId, undefined);
  });

  it('renders a subject or body of at most 65,536 characters, cut between characters, however the placeholders repeat the payload', async () => {
    // 76 and 700 placeholders of a 1,000-character value: 76,000 and 700,000 characters, before the cut.
    await triggerEvent(server, { name: 'echo', to: 'render-big', payload: { x: 'y'.repeat(1000) } });
    const [m] = (await getFeed(server, 'render-big')).data;
    assert.equal(m.subject.length, 65_536);
    assert.equal(m.content, 'a' + 'y'.repeat(65_535));
    // A cut that would fall inside a surrogate pair (the body's 'a' shifts the emoji by one) keeps the pair whole.
    await triggerEvent(server, { name: 'echo', to: 'render-emoji', payload: { x: '\u{1F600}'.repeat(1000) } });
    const [e] = (await getFeed(server, 'render-emoji')).data;
    assert.equal(e.subject, '\u{1F600}'.repeat(32_768));
    assert.equal(e.content, 'a' + '\u{1F600}'.repeat(32_767));
  });

  it('builds cta buttons from primary and secondary actions', async () => {
    await triggerEvent(server, { name: 'invite', to: 'cta-1', payload: { project: 'Apollo', id: 'p7' } });
    const [m] = (await getFeed(server, 'cta-1')).data;
    assert.deepEqual(m.cta, {
      type: 'redirect',
      data: {},
      action: {
        status: 'pending',
        buttons: [
          { type: 'primary', content: 'Accept', resultContent: 'Joined Apollo', url: 'https://app.example.com/p/p7' },
          { type: 'secondary', content: 'Decline', resultContent: 'Declined' },
        ],
      },
    });
  });

  it('drops rendered URLs that are not http(s) or relative', async () => {
    await triggerEvent(server, { name: 'unsafe', to: 'unsafe-1', payload: { url: 'javascript:alert(1)', avatar: 'data:image/png;base64,AAAA' } });
    await triggerEvent(server, { name: 'unsafe', to: 'unsafe-1', payload: { url: '//evil.example/x', avatar: ' ' } });
    await triggerEvent(server, { name: 'unsafe', to: 'unsafe-1', payload: { url: 'https://ok.example/x', avatar: '/img/a.png' } });
    const [ok, evil, js] = (await getFeed(server, 'unsafe-1')).data;
    assert.deepEqual(js.cta.data, {});
    assert.equal(js.avatar, undefined);
    assert.deepEqual(evil.cta.data, {});
    assert.equal(evil.avatar, undefined);
    assert.deepEqual(ok.cta.data, { url: 'https://ok.example/x' });
    assert.equal(ok.avatar, '/img/a.png');
  });

  it('sets _feedId when the step names a feed, one feed per identifier', async () => {
    await triggerEvent(server, { name: 'invoice', to: 'feed-1', payload: { n: 1 } });
    await triggerEvent(server, { name: 'receipt', to: 'feed-1', payload: { n: 2 } });
    await triggerEvent(server, { name: 'comment', to: 'feed-1' });
    const [comment, receipt, invoice] = (await getFeed(server, 'feed-1')).data;
    assert.match(invoice._feedId, /^[0-9a-f]{24}$/);
    assert.equal(receipt._feedId, invoice._feedId);
    assert.equal(comment._feedId, undefined);
    assert.equal(invoice.content, 'Invoice 1 paid');
  });

  it('accepts `to` as a subscriber object, creating it, and updates the fields it gives', async () => {
    await triggerEvent(server, { name: 'comment', to: { subscriberId: 'obj-1', firstName: 'Katherine', email: 'k@example.com' } });
    await triggerEvent(server, { name: 'comment', to: { subscriberId: 'obj-1', firstName: 'Kathy' } });
    const { data } = await getFeed(server, 'obj-1');
    assert.equal(data.length, 2);
    assert.match(data[1].content, /^Hi Katherine,/);
    assert.match(data[0].content, /^Hi Kathy,/);
    assert.equal(data[0].subscriber.firstName, 'Kathy');
    assert.equal(data[0].subscriber.email, 'k@example.com');
  });

  it('accepts `to` as an array of strings and objects, one message each, duplicates once', async () => {
    const t = await triggerEvent(server, {
      name: 'comment',
      to: ['arr-1', { subscriberId: 'arr-2', firstName: 'Two' }, 'arr-1'],
      payload: { author: 'Linus' },
    });
    const one = (await getFeed(server, 'arr-1')).data;
    const two = (await getFeed(server, 'arr-2')).data;
    assert.equal(one.length, 1);
    assert.equal(two.length, 1);
    assert.equal(one[0].transactionId, t.transactionId);
    assert.equal(two[0].transactionId, t.transactionId);
    assert.match(two[0].content, /^Hi Two, Linus wrote/);
    assert.notEqual(one[0]._notificationId, two[0]._notificationId);
  });

  it('has written every message when it answers a trigger to at most 25 recipients; a larger one answers first, and each message follows once, told on its stream', async () => {
    const messagesOf = async (transactionId: string) => {
      const rows = await sqlOn(server, `select subscriber_id from messages where transaction_id = ? and channel = 'in_app'`, [transactionId]);
      return { count: rows.length, subscribers: new Set(rows.map((row) => row.subscriber_id)).size };
    };
    // 25: a read right after the answer finds every message.
    const small = await triggerEvent(server, { name: 'comment', to: Array.from({ length: 25 }, (_, i) => `written-${i}`), payload: { author: 'Ada' } });
    assert.deepEqual(await messagesOf(small.transactionId), { count: 25, subscribers: 25 });

    // 26: written after the answer, and every subscriber's stream hears of it.
    const to = Array.from({ length: 26 }, (_, i) => `after-${i}`);
    await ensureSubscriber(server, to.at(-1)!);
    const stream = await openStream(server, to.at(-1)!);
    try {
      await stream.next((e) => e.event === 'unseen', 'the first count');
      const large = await triggerEvent(server, { name: 'comment', to, payload: { author: 'Ada' } });
      const heard = await stream.next((e) => e.event === 'message' && e.data.transactionId === large.transactionId, 'the large trigger\'s message', 10_000);
      assert.equal(heard.data.transactionId, large.transactionId);
      const written = await waitFor('every message of the large trigger', async () => {
        const found = await messagesOf(large.transactionId);
        return found.count >= to.length ? found : undefined;
      });
      assert.deepEqual(written, { count: 26, subscribers: 26 }, 'one message per recipient, none twice');
    } finally {
      stream.close();
    }
  });

  it('creates an unknown subscriber given as a string', async () => {
    expectErrorBody(await server.get('/v1/subscribers/brand-new/notifications/feed'), 404);
    await triggerEvent(server, { name: 'comment', to: 'brand-new' });
    const body = await getFeed(server, 'brand-new');
    assert.equal(body.totalCount, 1);
    assert.equal(body.data[0].subscriber.subscriberId, 'brand-new');
  });

  it('answers 422 for an unknown workflow, and for another environment\'s', async () => {
    const r = await server.post('/v1/events/trigger', { name: 'no-such-workflow', to: 'x' });
    const b = expectErrorBody(r, 422);
    assert.match(b.message, /no-such-workflow/);
    assert.ok(b.errors.name);
    expectErrorBody(await server.post('/v1/events/trigger', { name: 'comment', to: 'x' }, { key: KEYS.b }), 422);
    expectErrorBody(await server.get('/v1/subscribers/x/notifications/feed'), 404);
  });

  it('answers 201 trigger_not_active for an inactive workflow, and delivers nothing (as Novu)', async () => {
    await createWorkflow(server, { workflowId: 'paused', name: 'Paused', active: false, steps: [{ name: 'i', type: 'in_app', controlValues: { body: 'b' } }] });
    const r = await server.post('/v1/events/trigger', { name: 'paused', to: 'p-1' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body, { acknowledged: true, status: 'trigger_not_active' });
    expectErrorBody(await server.get('/v1/subscribers/p-1/notifications/feed'), 404);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['name missing', { to: 'x' }, 'name'],
    ['to missing', { name: 'comment' }, 'to'],
    ['to an empty array', { name: 'comment', to: [] }, 'to'],
    ['to an object without subscriberId', { name: 'comment', to: { firstName: 'A' } }, 'to'],
    ['to an empty string', { name: 'comment', to: '' }, 'to'],
    ['payload not an object', { name: 'comment', to: 'x', payload: 'text' }, 'payload'],
    ['transactionId empty', { name: 'comment', to: 'x', transactionId: '' }, 'transactionId'],
  ];
  for (const [title, body, field] of invalid) {
    it(`answers 422 when ${title}`, async () => {
      const b = expectErrorBody(await server.post('/v1/events/trigger', body), 422);
      assert.ok(Object.keys(b.errors).some((k) => k === field || k.startsWith(`${field}.`)), JSON.stringify(b.errors));
    });
  }

  it('writes one Notification and one Job per step; runs in-app steps and stops at the first step that waits', { skip: (process.env.TEST_DATABASE_URL ?? '').startsWith('postgres') }, async () => {
    await createWorkflow(server, {
      workflowId: 'multi',
      name: 'Multi',
      tags: ['t1'],
      steps: [
        { name: 'first', type: 'in_app', controlValues: { body: 'one' } },
        { name: 'wait', type: 'delay', controlValues: { amount: 1, unit: 'hours' } },
        { name: 'second', type: 'in_app', controlValues: { body: 'two' } },
      ],
    });
    const t = await triggerEvent(server, { name: 'multi', to: 'jobs-1', payload: { a: 1 } });
    const messages = await allMessages(server, 'jobs-1');
    assert.deepEqual(messages.map((m) => m.content), ['one']);

    const sqlite = new SQLite(server.dbPath, { readonly: true });
    try {
      const notifications = sqlite.prepare('select * from notifications where transaction_id = ?').all(t.transactionId) as any[];
      assert.equal(notifications.length, 1);
      const n = notifications[0];
      assert.equal(n.id, messages[0]._notificationId);
      assert.deepEqual(JSON.parse(n.channels), ['in_app']);
      // The payload is stored once for the trigger; the notification and its jobs refer to it.
      const stored = sqlite.prepare('select payload from payloads where id = ?').get(n.payload_id) as { payload: string };
      assert.deepEqual(JSON.parse(stored.payload), { a: 1 });
      assert.deepEqual(JSON.parse(n.tags), ['t1']);
      const jobs = sqlite.prepare('select * from jobs where notification_id = ? order by step_index').all(n.id) as any[];
      assert.deepEqual(jobs.map((j) => [j.step_index, j.type, j.status]), [[0, 'in_app', 'completed'], [1, 'delay', 'delayed'], [2, 'in_app', 'pending']]);
      const [detail] = JSON.parse(jobs[0].execution_details);
      assert.equal(detail.status, 'Success');
      assert.equal(detail.detail, 'Message created');
      assert.equal(detail.providerId, 'novu');
      assert.equal(detail.source, 'Internal');
      assert.equal(detail.isRetry, false);
      assert.equal(detail.isTest, false);
      assert.equal(detail.raw, '');
      assert.match(detail._id, /^[0-9a-f]{24}$/);
      assert.deepEqual(JSON.parse(jobs[1].execution_details).map((d: any) => d.status), ['Pending']);
      assert.equal(JSON.parse(jobs[0].step)._id, messages[0]._messageTemplateId);
      for (const j of jobs) assert.equal(j.transaction_id, t.transactionId);
      for (const j of jobs) assert.equal(j.payload_id, n.payload_id);
    } finally {
      sqlite.close();
    }
  });
});
