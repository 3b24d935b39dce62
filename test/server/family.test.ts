import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInboxProxy, subscriberHash, toNodeListener } from '../../server/src/proxy.ts';
import { expectErrorBody, KEYS, startServer, type TestServer } from './helpers.ts';
import { createWorkflow, getFeed, triggerEvent, unseenCount } from './fixtures.ts';
import { sleep, waitFor } from './engine-fixtures.ts';
import { openStream } from './stream-fixtures.ts';

// The subscriber notifications family (/v2/subscribers/{id}/notifications/...) over plain HTTP, with
// the paths, bodies and status codes of Novu's published SDK: the list and its filters, the counts,
// each change of one message, the bulk changes, the default feed (endpoint 10) and the unseen count
// (13) agreeing, a snoozed message waking through the scheduler, the stream telling the changes, the
// proxy's allow-list, bad input and other environments.

/** A snooze may end this soon in these tests (NOTIF_SNOOZE_MIN_MS), instead of a minute. */
const SNOOZE_MIN_MS = 1000;
/** How far ahead a short snooze ends: past the minimum by enough for a loaded machine to answer the request. */
const SHORT_SNOOZE_MS = SNOOZE_MIN_MS + 2000;
const HMAC_KEY = 'family-hmac';

const family = (subscriberId: string, rest = '') => `/v2/subscribers/${encodeURIComponent(subscriberId)}/notifications${rest}`;

const BILLING_CONTROLS = {
  subject: 'Invoice {{payload.n}}',
  body: 'Your invoice {{payload.n}} is ready',
  data: { kind: 'invoice', number: '{{payload.n}}' },
  redirect: { url: '/invoices/{{payload.n}}' },
  primaryAction: { label: 'Pay', redirect: { url: '/pay' } },
  secondaryAction: { label: 'Later' },
};

async function setUp(server: TestServer, key: string = KEYS.a) {
  await createWorkflow(server, { workflowId: 'billing', name: 'Billing', tags: ['billing'], steps: [{ name: 'inbox', type: 'in_app', controlValues: BILLING_CONTROLS }] }, key);
  await createWorkflow(server, { workflowId: 'social', name: 'Social', tags: ['social'], severity: 'low', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Someone liked {{payload.n}}' } }] }, key);
}

/** Sends subscriber `to`: invoice 1 (high, the trigger's override), invoice 2 (no severity), a like (low, the workflow's); returns their ids, oldest first. */
async function threeMessages(server: TestServer, to: string, key: string = KEYS.a): Promise<string[]> {
  await triggerEvent(server, { name: 'billing', to, payload: { n: 1 }, overrides: { severity: 'high' } }, key);
  await triggerEvent(server, { name: 'billing', to, payload: { n: 2 } }, key);
  await triggerEvent(server, { name: 'social', to, payload: { n: 3 } }, key);
  const list = await server.get(family(to), { key, query: { limit: 10 } });
  assert.equal(list.status, 200, JSON.stringify(list.body));
  return list.body.data.map((item: any) => item.id).reverse();
}

const ids = (body: any) => body.data.map((item: any) => item.id);

describe('the subscriber notifications family', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ NOTIF_SNOOZE_MIN_MS: String(SNOOZE_MIN_MS), NOTIF_SCHEDULER_POLL_MS: '50' });
    await setUp(server);
  });
  after(() => server.dispose());

  it('lists newest first, each item in the SDK model, with tags from the workflow, severity and data', async () => {
    const [first, second, third] = await threeMessages(server, 'list-a');
    const r = await server.get(family('list-a'), { query: { limit: 10 } });
    assert.equal(r.status, 200);
    assert.deepEqual(ids(r.body), [third, second, first]);
    assert.equal(r.body.hasMore, false);
    assert.deepEqual(r.body.filter, {});
    const invoice = r.body.data[2];
    assert.equal(invoice.subject, 'Invoice 1');
    assert.equal(invoice.body, 'Your invoice 1 is ready');
    assert.equal(typeof invoice.transactionId, 'string');
    assert.equal(invoice.to.subscriberId, 'list-a');
    assert.deepEqual([invoice.isRead, invoice.isSeen, invoice.isArchived, invoice.isSnoozed], [false, false, false, false]);
    assert.equal(invoice.channelType, 'in_app');
    assert.equal(invoice.severity, 'high');
    assert.deepEqual(invoice.tags, ['billing']);
    assert.deepEqual(invoice.data, { kind: 'invoice', number: '1' });
    assert.deepEqual(invoice.redirect, { url: '/invoices/1' });
    assert.deepEqual(invoice.primaryAction, { label: 'Pay', isCompleted: false, redirect: { url: '/pay' } });
    assert.deepEqual(invoice.secondaryAction, { label: 'Later', isCompleted: false });
    assert.equal(invoice.workflow.identifier, 'billing');
    assert.equal(invoice.deliveredAt.length, 1);
    assert.equal(r.body.data[1].severity, 'none');
    assert.equal(r.body.data[0].severity, 'low', "the workflow's severity");
    assert.equal(r.body.data[0].workflow.severity, 'low');
    assert.deepEqual(r.body.data[0].tags, ['social']);
    assert.equal('data' in r.body.data[0], false, 'no data control: no data');
    for (const item of r.body.data) for (const [name, value] of Object.entries(item)) {
      if (!['snoozedUntil', 'readAt', 'firstSeenAt', 'archivedAt'].includes(name)) assert.notEqual(value, null, `${name} is not null`);
    }
  });

  it('filters the list by read, seen, severity, tags, data and creation time, and pages with after or offset', async () => {
    const [first, second, third] = await threeMessages(server, 'list-b');
    await server.patch(family('list-b', `/${first}/read`));
    const list = async (query: Record<string, any>) => {
      const r = await server.get(family('list-b'), { query: { limit: 10, ...query } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return ids(r.body);
    };
    assert.deepEqual(await list({ read: true }), [first]);
    assert.deepEqual(await list({ read: false }), [third, second]);
    assert.deepEqual(await list({ seen: true }), [first]);
    assert.deepEqual(await list({ severity: ['high', 'low'] }), [third, first]);
    assert.deepEqual(await list({ severity: 'none' }), [second]);
    assert.deepEqual(await list({ tags: ['billing'] }), [second, first]);
    assert.deepEqual(await list({ tags: ['social', 'nothing'] }), [third]);
    assert.deepEqual(await list({ data: JSON.stringify({ kind: 'invoice', number: '2' }) }), [second]);
    const all = (await server.get(family('list-b'), { query: { limit: 10 } })).body.data;
    const secondCreated = Date.parse(all[1].createdAt);
    assert.deepEqual(await list({ createdGte: secondCreated }), [third, second]);
    assert.deepEqual(await list({ createdLte: secondCreated }), [second, first]);
    const page = await server.get(family('list-b'), { query: { limit: 1 } });
    assert.deepEqual(ids(page.body), [third]);
    assert.equal(page.body.hasMore, true);
    assert.deepEqual(await list({ limit: 1, after: third }), [second]);
    assert.deepEqual(await list({ limit: 2, after: second }), [first]);
    assert.deepEqual(await list({ offset: 2 }), [first]);
  });

  it('counts up to 30 filters in one answer, in order, each exactly what the same list filter returns', async () => {
    await threeMessages(server, 'count-a');
    const [, second] = (await server.get(family('count-a'), { query: { limit: 10 } })).body.data.map((item: any) => item.id).reverse();
    await server.patch(family('count-a', `/${second}/read`));
    const filters = [{ read: false }, { read: true }, { tags: ['billing'] }, { severity: 'low' }, { archived: true }, {}, { data: { kind: 'invoice' } }, { severity: ['high', 'none'], read: false }];
    const r = await server.get(family('count-a', '/count'), { query: { filters: JSON.stringify(filters) } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      r.body.map((entry: any) => entry.count),
      [2, 1, 2, 1, 0, 3, 2, 1],
    );
    assert.deepEqual(r.body[3].filter, { severity: ['low'] });
    for (const [index, filter] of filters.entries()) {
      const query: Record<string, any> = { limit: 100, ...filter };
      if ('data' in filter) query.data = JSON.stringify(filter.data);
      const listed = await server.get(family('count-a'), { query });
      assert.equal(listed.body.data.length, r.body[index].count, `filter ${JSON.stringify(filter)}`);
    }
    const thirty = await server.get(family('count-a', '/count'), { query: { filters: JSON.stringify(Array.from({ length: 30 }, () => ({ read: false }))) } });
    assert.equal(thirty.status, 200);
    assert.equal(thirty.body.length, 30);
  });

  it('count refuses filters that are not JSON (400), more than 30 or unknown keys (422), with the error body', async () => {
    await server.post('/v1/events/trigger', { name: 'social', to: 'count-bad', payload: { n: 1 } });
    expectErrorBody(await server.get(family('count-bad', '/count'), { query: { filters: 'not json' } }), 400);
    expectErrorBody(await server.get(family('count-bad', '/count'), { query: { filters: JSON.stringify(Array.from({ length: 31 }, () => ({}))) } }), 422);
    const unknown = expectErrorBody(await server.get(family('count-bad', '/count'), { query: { filters: JSON.stringify([{ colour: 'red' }]) } }), 422);
    assert.ok(unknown.errors['filters.0.colour'], JSON.stringify(unknown));
    expectErrorBody(await server.get(family('count-bad', '/count'), { query: { filters: JSON.stringify({ read: true }) } }), 422);
    expectErrorBody(await server.get(family('count-bad', '/count'), { query: { filters: JSON.stringify([{ severity: 'urgent' }]) } }), 422);
    expectErrorBody(await server.get(family('count-bad', '/count')), 422);
  });

  it('read and unread change the message, and the default feed and the unseen count agree', async () => {
    const [first] = await threeMessages(server, 'read-a');
    const read = await server.patch(family('read-a', `/${first}/read`));
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.id, first);
    assert.equal(read.body.isRead, true);
    assert.equal(read.body.isSeen, true);
    assert.equal(typeof read.body.readAt, 'string');
    const feed = await getFeed(server, 'read-a', { limit: 10 });
    const inFeed = feed.data.find((message) => message._id === first);
    assert.equal(inFeed.read, true);
    assert.equal(inFeed.archived, false);
    assert.equal(await unseenCount(server, 'read-a'), 2);
    const unread = await server.patch(family('read-a', `/${first}/unread`));
    assert.equal(unread.status, 200);
    assert.equal(unread.body.isRead, false);
    assert.equal(unread.body.readAt, null);
    assert.equal((await getFeed(server, 'read-a', { read: false })).totalCount, 3);
  });

  it('archive takes a message out of the default list, the feed and the unseen count; unarchive brings it back; read stays as it was', async () => {
    const [first, second, third] = await threeMessages(server, 'archive-a');
    const archived = await server.patch(family('archive-a', `/${second}/archive`));
    assert.equal(archived.status, 200, JSON.stringify(archived.body));
    assert.equal(archived.body.isArchived, true);
    assert.equal(archived.body.isRead, false, 'archiving changes neither read nor seen');
    assert.equal(typeof archived.body.archivedAt, 'string');
    assert.deepEqual(ids((await server.get(family('archive-a'))).body), [third, first]);
    assert.deepEqual(ids((await server.get(family('archive-a'), { query: { archived: true } })).body), [second]);
    assert.deepEqual(ids((await server.get(family('archive-a'), { query: { archived: true, read: false } })).body), [second], 'unread and archived is a filter of ours');
    const feed = await getFeed(server, 'archive-a', { limit: 10 });
    assert.deepEqual(feed.data.map((message) => message._id), [third, first]);
    assert.equal(feed.totalCount, 2);
    assert.equal(await unseenCount(server, 'archive-a'), 2);
    const back = await server.patch(family('archive-a', `/${second}/unarchive`));
    assert.equal(back.status, 200);
    assert.equal(back.body.isArchived, false);
    assert.equal(back.body.archivedAt, null);
    assert.equal(await unseenCount(server, 'archive-a'), 3);
    assert.deepEqual(ids((await server.get(family('archive-a'))).body), [third, second, first]);
  });

  it('snooze hides a message until unsnoozed; a snooze less than the minimum ahead is 422', async () => {
    const [first, second] = await threeMessages(server, 'snooze-a');
    const soon = new Date(Date.now() + SNOOZE_MIN_MS / 4).toISOString();
    const early = expectErrorBody(await server.patch(family('snooze-a', `/${second}/snooze`), { snoozeUntil: soon }), 422);
    assert.ok(early.errors.snoozeUntil, JSON.stringify(early));
    expectErrorBody(await server.patch(family('snooze-a', `/${second}/snooze`), { snoozeUntil: 'tomorrow' }), 422);
    expectErrorBody(await server.patch(family('snooze-a', `/${second}/snooze`), {}), 422);
    const until = new Date(Date.now() + 2 * 60 * 60 * 1000).toISOString();
    const snoozed = await server.patch(family('snooze-a', `/${second}/snooze`), { snoozeUntil: until });
    assert.equal(snoozed.status, 200, JSON.stringify(snoozed.body));
    assert.equal(snoozed.body.isSnoozed, true);
    assert.equal(snoozed.body.snoozedUntil, until);
    assert.equal(snoozed.body.isSeen, true, 'a snoozed message counts as seen');
    assert.equal(ids((await server.get(family('snooze-a'))).body).includes(second), false);
    assert.deepEqual(ids((await server.get(family('snooze-a'), { query: { snoozed: true } })).body), [second]);
    assert.equal((await getFeed(server, 'snooze-a')).data.some((message: any) => message._id === second), false);
    assert.equal(await unseenCount(server, 'snooze-a'), 2);
    const counts = await server.get(family('snooze-a', '/count'), { query: { filters: JSON.stringify([{}, { snoozed: true }]) } });
    assert.deepEqual(counts.body.map((entry: any) => entry.count), [2, 1]);
    const woken = await server.patch(family('snooze-a', `/${second}/unsnooze`));
    assert.equal(woken.status, 200);
    assert.equal(woken.body.isSnoozed, false);
    assert.equal(woken.body.snoozedUntil, null);
    assert.ok(ids((await server.get(family('snooze-a'))).body).includes(second));
    assert.ok(first);
  });

  it('a snoozed message wakes when due: on top, unread, unseen, deliveredAt appended, told over the stream once', async () => {
    const [first] = await threeMessages(server, 'wake-a');
    await server.patch(family('wake-a', `/${first}/read`));
    const stream = await openStream(server, 'wake-a');
    try {
      await stream.next((event) => event.event === 'unseen', 'the first count');
      const until = new Date(Date.now() + SHORT_SNOOZE_MS).toISOString();
      const snoozed = await server.patch(family('wake-a', `/${first}/snooze`), { snoozeUntil: until });
      assert.equal(snoozed.status, 200, JSON.stringify(snoozed.body));
      await stream.next((event) => event.event === 'changed' && event.data.changed === 'snooze' && event.data.messageId === first, 'the snooze told');
      const told = await stream.next((event) => event.event === 'message' && event.data._id === first, 'the woken message', 15_000);
      assert.ok(Date.now() >= Date.parse(until) - 50, 'not before it was due');
      assert.equal(told.data.read, false);
      const top = (await server.get(family('wake-a'))).body.data[0];
      assert.equal(top.id, first);
      assert.deepEqual([top.isRead, top.isSeen, top.isSnoozed], [false, false, false]);
      assert.equal(top.deliveredAt.length, 2);
      assert.ok(Date.parse(top.deliveredAt[1]) >= Date.parse(until));
      assert.equal((await getFeed(server, 'wake-a', { limit: 1 })).data[0]._id, first);
      assert.equal(await unseenCount(server, 'wake-a'), 3);
      await stream.next((event) => event.event === 'changed' && event.data.changed === 'wake', 'the wake told');
      await sleep(500);
      assert.equal(stream.events.filter((event) => event.event === 'message' && event.data._id === first).length, 1, 'told once');
    } finally {
      stream.close();
    }
  });

  it('re-snoozing moves the wake-up; unsnoozing removes it', async () => {
    const [first, second, witness] = await threeMessages(server, 'wake-b');
    const later = new Date(Date.now() + 60 * 60 * 1000).toISOString();
    const soon = new Date(Date.now() + SHORT_SNOOZE_MS).toISOString();
    for (const id of [first, second, witness]) assert.equal((await server.patch(family('wake-b', `/${id}/snooze`), { snoozeUntil: soon })).status, 200);
    assert.equal((await server.patch(family('wake-b', `/${first}/snooze`), { snoozeUntil: later })).status, 200);
    assert.equal((await server.patch(family('wake-b', `/${second}/unsnooze`))).status, 200);
    // The witness, due at the same moment, wakes in the same round as the others would have.
    await waitFor('the witness to wake', async () => ((await server.get(family('wake-b'))).body.data[0]?.id === witness ? true : undefined), 15_000);
    const snoozed = (await server.get(family('wake-b'), { query: { snoozed: true } })).body.data;
    assert.deepEqual(snoozed.map((item: any) => [item.id, item.snoozedUntil]), [[first, later]]);
    const back = (await server.get(family('wake-b'))).body.data.find((item: any) => item.id === second);
    assert.equal(back.deliveredAt.length, 1, 'an unsnoozed message never wakes');
  });

  it('completes and reverts an action; the v1 feed shows the same action', async () => {
    const [first] = await threeMessages(server, 'action-a');
    const done = await server.patch(family('action-a', `/${first}/actions/primary/complete`));
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.primaryAction.isCompleted, true);
    assert.equal(done.body.secondaryAction.isCompleted, false);
    assert.equal(done.body.isRead, true, 'completing an action reads the message');
    let message = (await getFeed(server, 'action-a', { limit: 10 })).data.find((item: any) => item._id === first);
    assert.equal(message.cta.action.status, 'done');
    assert.equal(message.cta.action.result.type, 'primary');
    const reverted = await server.patch(family('action-a', `/${first}/actions/primary/revert`));
    assert.equal(reverted.body.primaryAction.isCompleted, false);
    message = (await getFeed(server, 'action-a', { limit: 10 })).data.find((item: any) => item._id === first);
    assert.equal(message.cta.action.status, 'pending');
    expectErrorBody(await server.patch(family('action-a', `/${first}/actions/tertiary/complete`)), 422);
  });

  it('DELETE answers 204 with no body and the message is gone; again, 404', async () => {
    const [first, second, third] = await threeMessages(server, 'delete-a');
    const r = await server.delete(family('delete-a', `/${second}`));
    assert.equal(r.status, 204);
    assert.equal(r.body, '');
    assert.deepEqual(ids((await server.get(family('delete-a'))).body), [third, first]);
    assert.equal((await getFeed(server, 'delete-a')).totalCount, 2);
    expectErrorBody(await server.delete(family('delete-a', `/${second}`)), 404);
  });

  it('bulk read by data, seen by ids, archive by tags, archive of the read, delete: 204 each', async () => {
    const [first, second, third] = await threeMessages(server, 'bulk-a');
    const readByData = await server.post(family('bulk-a', '/read'), { data: JSON.stringify({ number: '2' }) });
    assert.equal(readByData.status, 204, JSON.stringify(readByData.body));
    assert.deepEqual(ids((await server.get(family('bulk-a'), { query: { read: true } })).body), [second]);
    assert.equal((await server.post(family('bulk-a', '/seen'), { notificationIds: [third] })).status, 204);
    assert.deepEqual(ids((await server.get(family('bulk-a'), { query: { seen: true } })).body), [third, second]);
    assert.equal((await server.post(family('bulk-a', '/seen'), { notificationIds: [] })).status, 204);
    assert.equal((await server.post(family('bulk-a', '/read-archive'), {})).status, 204);
    assert.deepEqual(ids((await server.get(family('bulk-a'), { query: { archived: true } })).body), [second]);
    assert.equal((await server.post(family('bulk-a', '/archive'), { tags: ['social'] })).status, 204);
    assert.deepEqual(ids((await server.get(family('bulk-a'), { query: { archived: true } })).body), [third, second]);
    assert.deepEqual(ids((await server.get(family('bulk-a'))).body), [first]);
    assert.equal((await server.post(family('bulk-a', '/read'), { tags: {} })).status, 204, "the SDK's empty tags object filters nothing");
    assert.equal((await server.get(family('bulk-a'), { query: { read: false } })).body.data.length, 0);
    assert.equal((await server.post(family('bulk-a', '/delete'), {})).status, 204);
    const left = await server.get(family('bulk-a', '/count'), { query: { filters: JSON.stringify([{}, { archived: true }]) } });
    assert.deepEqual(left.body.map((entry: any) => entry.count), [0, 0]);
    expectErrorBody(await server.post(family('bulk-a', '/read'), { data: '[1, 2]' }), 400);
    expectErrorBody(await server.post(family('bulk-a', '/archive'), { tags: 'billing' }), 422);
  });

  it('tells other browser tabs what changed over the stream', async () => {
    const [first] = await threeMessages(server, 'stream-a');
    const stream = await openStream(server, 'stream-a');
    try {
      await stream.next((event) => event.event === 'unseen', 'the first count');
      await server.patch(family('stream-a', `/${first}/archive`));
      await stream.next((event) => event.event === 'changed' && event.data.changed === 'archive' && event.data.messageId === first, 'archive told');
      await stream.next((event) => event.event === 'unseen' && event.data.count === 2, 'the count without the archived message');
      await server.patch(family('stream-a', `/${first}/unarchive`));
      await stream.next((event) => event.event === 'changed' && event.data.changed === 'unarchive', 'unarchive told');
      await server.post(family('stream-a', '/read'), {});
      await stream.next((event) => event.event === 'changed' && event.data.changed === 'read' && event.data.messageId === undefined, 'bulk read told');
      await server.delete(family('stream-a', `/${first}`));
      await stream.next((event) => event.event === 'changed' && event.data.changed === 'delete' && event.data.messageId === first, 'delete told');
    } finally {
      stream.close();
    }
  });

  it("refuses bad input with the error body, and never finds another subscriber's or environment's messages", async () => {
    const [first] = await threeMessages(server, 'bad-a');
    await setUp(server, KEYS.b);
    await threeMessages(server, 'bad-a', KEYS.b);
    expectErrorBody(await server.get(family('bad-a'), { query: { limit: 0 } }), 422);
    expectErrorBody(await server.get(family('bad-a'), { query: { limit: 101 } }), 422);
    expectErrorBody(await server.get(family('bad-a'), { query: { severity: 'urgent' } }), 422);
    expectErrorBody(await server.get(family('bad-a'), { query: { read: 'maybe' } }), 422);
    expectErrorBody(await server.get(family('bad-a'), { query: { data: '{not json' } }), 400);
    expectErrorBody(await server.get(family('bad-a'), { query: { data: JSON.stringify({ list: [1] }) } }), 400);
    expectErrorBody(await server.get(family('bad-a'), { query: { after: 'no-such-message' } }), 400);
    expectErrorBody(await server.patch(family('bad-a', '/no-such-message/read')), 404);
    expectErrorBody(await server.get(family('nobody-at-all')), 404);
    // The same subscriber id in another environment: its own messages only.
    const other = await server.get(family('bad-a'), { key: KEYS.b });
    assert.equal(other.status, 200);
    assert.equal(ids(other.body).includes(first), false);
    expectErrorBody(await server.patch(family('bad-a', `/${first}/archive`), undefined, { key: KEYS.b }), 404);
    expectErrorBody(await server.delete(family('bad-a', `/${first}`), { key: KEYS.b }), 404);
    expectErrorBody(await server.patch(family('bad-a', `/${first}/read`), undefined, { key: KEYS.other }), 404);
    // Another subscriber of the same environment.
    await threeMessages(server, 'bad-b');
    expectErrorBody(await server.patch(family('bad-b', `/${first}/read`)), 404);
    assert.equal((await server.get(family('bad-a'))).body.data.find((item: any) => item.id === first).isRead, false);
  });
});

describe('the family through the proxy', () => {
  let service: TestServer;
  let proxy: { server: Server; url: string };
  const as = (subscriberId: string) => ({ 'x-subscriber-id': encodeURIComponent(subscriberId), 'x-subscriber-hash': subscriberHash(subscriberId, HMAC_KEY) });
  const call = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) => fetch(`${proxy.url}/notif${path}`, init);

  before(async () => {
    service = await startServer();
    await setUp(service);
    const handler = toNodeListener(createInboxProxy({ serviceUrl: service.url, apiKey: KEYS.a, hmacKey: HMAC_KEY }));
    const server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  });
  after(async () => {
    proxy?.server.close();
    await service.dispose();
  });

  it("allows every call of the family for the hashed subscriber, and refuses another subscriber's (403)", async () => {
    const [first, second, third] = await threeMessages(service, 'ada');
    const [graceMessage] = await threeMessages(service, 'grace');
    const list = await call(family('ada'), { headers: as('ada') });
    assert.equal(list.status, 200);
    assert.deepEqual(ids(await list.json()), [third, second, first]);
    const count = await call(`${family('ada', '/count')}?filters=${encodeURIComponent(JSON.stringify([{ read: false }]))}`, { headers: as('ada') });
    assert.equal(count.status, 200);
    assert.deepEqual(((await count.json()) as any)[0].count, 3);
    const json = { ...as('ada'), 'content-type': 'application/json' };
    for (const change of ['read', 'unread', 'archive', 'unarchive', 'unsnooze', 'actions/primary/complete', 'actions/primary/revert']) {
      const r = await call(family('ada', `/${first}/${change}`), { method: 'PATCH', headers: as('ada') });
      assert.equal(r.status, 200, `${change}: ${await r.text()}`);
    }
    const snooze = await call(family('ada', `/${first}/snooze`), { method: 'PATCH', headers: json, body: JSON.stringify({ snoozeUntil: new Date(Date.now() + 3_600_000).toISOString() }) });
    assert.equal(snooze.status, 200);
    for (const action of ['read', 'seen', 'archive', 'read-archive']) {
      const r = await call(family('ada', `/${action}`), { method: 'POST', headers: json, body: '{}' });
      assert.equal(r.status, 204, action);
    }
    assert.equal((await call(family('ada', `/${second}`), { method: 'DELETE', headers: as('ada') })).status, 204);
    assert.equal((await call(family('ada', '/delete'), { method: 'POST', headers: json, body: '{}' })).status, 204);

    // Another subscriber's path, with ada's proof: refused before it reaches the service.
    for (const [method, path] of [
      ['GET', family('grace')],
      ['GET', `${family('grace', '/count')}?filters=[]`],
      ['PATCH', family('grace', `/${graceMessage}/archive`)],
      ['DELETE', family('grace', `/${graceMessage}`)],
      ['POST', family('grace', '/delete')],
    ] as const) {
      const r = await call(path, { method, headers: json, body: method === 'POST' ? '{}' : undefined });
      assert.equal(r.status, 403, `${method} ${path}`);
    }
    assert.equal((await service.get(family('grace'))).body.data.length, 3, "grace's messages are untouched");
  });
});
