import { expect } from '@open-wc/testing';
import sinon from 'sinon';
import type { NotifApiError } from '../../src/api/client.ts';
import { InboxStore, getInboxStore } from '../../src/store/index.ts';
import type { InboxConfig, InboxErrorDetail } from '../../src/store/types.ts';
import { api, createWorkflow, injectFault, testServer, trigger, triggerMany, uniqueSubscriber, until } from '../components/server.ts';

// The store against the real service. Fake timers drive the clock only (setTimeout, Date); every
// request is real HTTP. Each test uses its own subscriber.

type Clock = ReturnType<typeof sinon.useFakeTimers>;

/**
 * A fetch that passes through to the server and records `METHOD /path` of every call once the
 * store has read the answer's body: the store continues in the same microtasks (it schedules its
 * next poll there), so a test that waits for a count knows that is done before it moves the clock.
 * (Recorded when the response itself came, a count could be seen a moment before the store had
 * scheduled its next poll, and a clock moved a whole interval then passed by nothing: a flaky test.)
 * A call that fails is recorded when it does. (These tests poll: every answer's body is read.)
 */
function countingFetch() {
  const calls: string[] = [];
  const counting: typeof fetch = async (input, init) => {
    const call = `${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`;
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (e) {
      calls.push(call);
      throw e;
    }
    const text = response.text.bind(response);
    response.text = async () => {
      try {
        return await text();
      } finally {
        calls.push(call);
      }
    };
    return response;
  };
  return { calls, fetch: counting, count: (part: string) => calls.filter((c) => c.includes(part)).length };
}

function setVisibility(state: 'visible' | 'hidden') {
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
  document.dispatchEvent(new Event('visibilitychange', { bubbles: true })); // as the browser fires it
}

describe('InboxStore', () => {
  let workflowId: string;
  let clock: Clock | undefined;
  const stores: InboxStore[] = [];

  before(async () => {
    workflowId = await createWorkflow();
  });

  beforeEach(() => {
    // Pages of a concurrent run may sit in background tabs: fix what the store sees.
    setVisibility('visible');
  });

  afterEach(() => {
    for (const s of stores.splice(0)) while (s.connected) s.disconnect();
    clock?.restore();
    clock = undefined;
    delete (document as { visibilityState?: unknown }).visibilityState;
  });

  async function config(extra: Partial<InboxConfig> = {}): Promise<InboxConfig> {
    const { baseUrl, apiKey } = await testServer();
    // These tests are of polling (the stream has its own, test/components/live.test.ts).
    return { baseUrl, apiKey, subscriberId: extra.subscriberId ?? (await uniqueSubscriber()), live: 'poll', ...extra };
  }

  function track(store: InboxStore) {
    stores.push(store);
    return store;
  }

  /** A store of `c`, connected, its first page and count loaded. */
  async function connected(c: InboxConfig) {
    const store = track(new InboxStore(c));
    store.connect();
    await store.refresh();
    return store;
  }

  function fakeClock() {
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });
    return clock;
  }

  it('loads the first page newest first with the unseen count', async () => {
    const c = await config();
    await triggerMany(workflowId, c.subscriberId, 3);
    const store = track(new InboxStore(c));
    const states: string[] = [];
    store.subscribe((s) => states.push(s.status));
    store.connect();
    store.feedOpened();
    expect(store.state.status).to.equal('loading');
    await until(() => store.state.loaded && store.state.unseenCount === 3, 'first page');
    expect(store.state.messages.map((m) => m.subject)).to.deep.equal(['Message 2', 'Message 1', 'Message 0']);
    expect(store.state.status).to.equal('idle');
    expect(store.state.hasMore).to.equal(false);
    expect(states).to.include('loading');
  });

  it('picks up a message triggered on the server within one poll interval', async () => {
    const c = await config();
    const clk = fakeClock();
    const store = track(new InboxStore({ ...c, pollInterval: 15_000 }));
    store.connect();
    store.feedOpened();
    // The count too: a count read on the service after the trigger would already be 1, the same as
    // the next poll's, and a page loaded before it is then not refetched (CI saw that, once).
    await until(() => store.state.loaded && store.counted, 'first page and count');
    await trigger(workflowId, c.subscriberId, { title: 'Fresh', body: 'news' });
    await clk.tickAsync(1000);
    expect(store.state.messages).to.have.length(0);
    await clk.tickAsync(14_000);
    await until(() => store.state.messages.length === 1 && store.state.unseenCount === 1, 'the new message');
    expect(store.state.messages[0]!.subject).to.equal('Fresh');
  });

  it('refetches the first page only when the count changed', async () => {
    const c = await config();
    const clk = fakeClock();
    const net = countingFetch();
    const store = track(new InboxStore({ ...c, fetch: net.fetch }));
    store.connect();
    store.feedOpened();
    await until(() => store.state.loaded && net.count('/unseen') >= 1, 'first load');
    const feedsBefore = net.count('/feed');
    await clk.tickAsync(15_000);
    await until(() => net.count('/unseen') >= 2, 'second poll');
    await clk.tickAsync(100);
    expect(net.count('/feed')).to.equal(feedsBefore);

    await trigger(workflowId, c.subscriberId);
    await clk.tickAsync(15_000);
    await until(() => store.state.messages.length === 1, 'refetched first page');
    expect(net.count('/feed')).to.equal(feedsBefore + 1);
  });

  it('a first page the server read before a mutation, answered after it, does not undo the mutation', async () => {
    const c = await config();
    await triggerMany(workflowId, c.subscriberId, 2);
    // The feed's answers can be held back: the server has read the page, the store gets it later.
    let held: Promise<unknown> | undefined;
    const slow: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (held && String(input).includes('/notifications/feed')) await held;
      return res;
    };
    const store = track(new InboxStore({ ...c, fetch: slow }));
    store.connect();
    store.feedOpened();
    await until(() => store.state.loaded && store.state.messages.length === 2, 'first page');
    const id = store.state.messages[0]!._id;
    let release!: () => void;
    held = new Promise<void>((r) => (release = r));
    const refreshed = store.refresh();
    // Read by the server (unread), then the message is marked read; then the old page arrives.
    await new Promise((r) => setTimeout(r, 300));
    await store.markRead(id);
    expect(store.state.messages.find((m) => m._id === id)!.read).to.equal(true);
    held = undefined;
    release();
    await refreshed;
    await until(() => !store.state.loadingMore && store.state.status === 'idle', 'settled');
    await new Promise((r) => setTimeout(r, 300));
    expect(store.state.messages.find((m) => m._id === id)!.read, 'still read').to.equal(true);
  });

  it('a first page answered while a mutation is in flight gets its change; refused after, the list is fetched again as a feed opens', async () => {
    const c = await config();
    await triggerMany(workflowId, c.subscriberId, 2);
    // The mark all read can be held back before it reaches the server.
    let markHeld: Promise<void> | undefined;
    const holding: typeof fetch = async (input, init) => {
      if (markHeld && String(input).includes('/messages/mark-all')) await markHeld;
      return fetch(input, init);
    };
    const store = track(new InboxStore({ ...c, fetch: holding }));
    store.connect();
    store.feedOpened();
    await until(() => store.state.loaded && store.state.messages.length === 2, 'first page');
    let release!: () => void;
    markHeld = new Promise<void>((r) => (release = r));
    await injectFault({ path: `/subscribers/${c.subscriberId}/messages/mark-all`, status: 500 });
    const errors: string[] = [];
    store.addEventListener('error', (e) => errors.push((e as CustomEvent<InboxErrorDetail>).detail.action));
    const marking = store.markAllRead();
    // A third message, in the Unread tab's first page read while the mark is held (the page alone,
    // no count): read here, as the mark says.
    await trigger(workflowId, c.subscriberId, { title: 'third', body: 'b' });
    store.feedOpened('unread');
    await until(() => store.state.lists.unread.loaded, 'the Unread page');
    expect(store.state.lists.unread.messages).to.have.length(3);
    expect(store.state.lists.unread.messages.every((m) => m.read), 'every message read while the mark is in flight').to.equal(true);

    release();
    await marking;
    expect(errors).to.deep.equal(['markAllRead']);
    // The server refused: the two messages the mark changed here are back; the third, which only
    // the page had, is set right as a feed shows the list again.
    store.feedClosed('unread');
    store.feedOpened('unread');
    await until(() => store.state.lists.unread.messages.length === 3 && store.state.lists.unread.messages.every((m) => !m.read), 'every message unread', 5000);
    expect(await (await api()).unseenCount(c.subscriberId)).to.deep.equal({ count: 3 });
  });

  it('makes no request while the page is hidden, and refreshes at once when visible again', async () => {
    const c = await config();
    const clk = fakeClock();
    const net = countingFetch();
    const store = track(new InboxStore({ ...c, fetch: net.fetch }));
    store.connect();
    store.feedOpened();
    await until(() => store.state.loaded && net.count('/unseen') >= 1, 'first load');
    setVisibility('hidden');
    const before = net.calls.length;
    await clk.tickAsync(10 * 60_000);
    expect(net.calls.length).to.equal(before);

    await trigger(workflowId, c.subscriberId);
    setVisibility('visible');
    await until(() => store.state.messages.length === 1 && store.state.unseenCount === 1, 'refresh on visible');
  });

  it('pages to the last message with no duplicates, also when messages arrive meanwhile', async function () {
    this.timeout(30_000);
    const c = await config({ pageSize: 20 });
    await triggerMany(workflowId, c.subscriberId, 45);
    const store = track(new InboxStore(c));
    store.connect();
    store.feedOpened();
    await until(() => store.state.loaded, 'first page');
    expect(store.state.messages).to.have.length(20);
    await store.loadMore();
    expect(store.state.messages).to.have.length(40);
    // A new message moves every server page by one.
    await trigger(workflowId, c.subscriberId, { title: 'Newest', body: 'n' });
    await store.refresh();
    expect(store.state.messages[0]!.subject).to.equal('Newest');
    let guard = 0;
    while (store.state.hasMore && guard++ < 10) await store.loadMore();
    const ids = store.state.messages.map((m) => m._id);
    expect(new Set(ids).size).to.equal(ids.length);
    const all = await (await api()).feed(c.subscriberId, { limit: 100 });
    expect(ids).to.deep.equal(all.data.map((m) => m._id));
    expect(ids).to.have.length(46);
  });

  it('a first-page refresh does not cancel the page being loaded', async () => {
    const c = await config({ pageSize: 5 });
    await triggerMany(workflowId, c.subscriberId, 12);
    const store = track(new InboxStore(c));
    store.connect();
    store.feedOpened();
    await until(() => store.state.loaded, 'first page');
    await Promise.all([store.loadMore(), store.refresh()]);
    expect(store.state.messages).to.have.length(10);
    expect(store.state.loadingMore).to.equal(false);
    await store.loadMore();
    expect(store.state.messages).to.have.length(12);
    expect(store.state.hasMore).to.equal(false);
  });

  it('a first-page refresh keeps the object of every message that did not change', async () => {
    const c = await config();
    await triggerMany(workflowId, c.subscriberId, 3);
    const store = track(new InboxStore(c));
    store.connect();
    store.feedOpened();
    await until(() => store.state.loaded && store.state.messages.length === 3, 'first page');
    const [newest, middle, oldest] = store.state.messages;
    // On the server: one message read, one new.
    await (await api()).markAs(c.subscriberId, { messageId: middle!._id, markAs: 'read' });
    await trigger(workflowId, c.subscriberId, { title: 'Fresh', body: 'news' });
    await store.refresh();
    const after = store.state.messages;
    expect(after.map((m) => m.subject)).to.deep.equal(['Fresh', 'Message 2', 'Message 1', 'Message 0']);
    expect(after[1], 'unchanged: the same object').to.equal(newest);
    expect(after[3], 'unchanged: the same object').to.equal(oldest);
    expect(after[2], 'read on the server: a new object').to.not.equal(middle);
    expect(after[2]!.read).to.equal(true);
  });

  it('clamps the page size to 1..100', async () => {
    const c = await config();
    await triggerMany(workflowId, c.subscriberId, 2);
    const store = track(new InboxStore({ ...c, pageSize: 0.5 }));
    store.connect();
    store.feedOpened();
    await until(() => store.state.loaded, 'first page');
    expect(store.state.messages).to.have.length(1);
    expect(store.state.hasMore).to.equal(true);
    const big = track(new InboxStore({ ...c, pageSize: 1000 }));
    big.connect();
    await big.refresh();
    expect(big.state.messages).to.have.length(2);
  });

  it('the unread tab shows read=false messages', async () => {
    const c = await config();
    await triggerMany(workflowId, c.subscriberId, 3);
    const client = await api();
    const first = (await client.feed(c.subscriberId)).data[0]!;
    await client.markAs(c.subscriberId, { messageId: first._id, markAs: 'read' });
    const store = track(new InboxStore(c));
    store.connect();
    store.feedOpened();
    await until(() => store.state.loaded, 'first page');
    expect(store.state.messages).to.have.length(3);
    store.setTab('unread');
    expect(store.state.loaded).to.equal(false);
    await until(() => store.state.loaded, 'unread page');
    expect(store.state.tab).to.equal('unread');
    expect(store.state.messages.map((m) => m._id)).not.to.include(first._id);
    expect(store.state.messages).to.have.length(2);
  });

  it('keeps a list per tab: both fresh while feeds show them, a mutation changes both, setTab picks the store\'s tab', async () => {
    const c = await config();
    await triggerMany(workflowId, c.subscriberId, 3);
    const client = await api();
    const first = (await client.feed(c.subscriberId)).data[0]!;
    await client.markAs(c.subscriberId, { messageId: first._id, markAs: 'read' });
    const store = track(new InboxStore(c));
    store.connect();
    store.feedOpened('all');
    store.feedOpened('unread');
    await until(() => store.state.lists.all.loaded && store.state.lists.unread.loaded, 'both lists');
    expect(store.state.lists.all.messages).to.have.length(3);
    expect(store.state.lists.unread.messages.map((m) => m._id)).not.to.include(first._id);
    expect(store.state.lists.unread.messages).to.have.length(2);
    expect(store.state.tab, 'feeds of their own tabs leave the store\'s tab').to.equal('all');
    expect(store.state.messages).to.equal(store.state.lists.all.messages);

    const second = store.state.lists.unread.messages[0]!;
    await store.markRead(second._id);
    for (const tab of ['all', 'unread'] as const) expect(store.state.lists[tab].messages.find((m) => m._id === second._id)?.read, tab).to.equal(true);

    await trigger(workflowId, c.subscriberId, { title: 'Fresh' });
    await store.refresh();
    for (const tab of ['all', 'unread'] as const) expect(store.state.lists[tab].messages[0]!.subject, tab).to.equal('Fresh');

    store.setTab('unread');
    expect(store.state.tab).to.equal('unread');
    expect(store.state.messages).to.equal(store.state.lists.unread.messages);
  });

  it('markAllRead applies at once and persists on the server', async () => {
    const c = await config();
    await triggerMany(workflowId, c.subscriberId, 3);
    const store = await connected(c);
    expect(store.state.unseenCount).to.equal(3);
    const done = store.markAllRead();
    expect(store.state.unseenCount).to.equal(0);
    expect(store.state.messages.every((m) => m.read && m.seen)).to.equal(true);
    await done;
    const client = await api();
    expect(await client.unseenCount(c.subscriberId)).to.deep.equal({ count: 0 });
    expect((await client.feed(c.subscriberId, { read: false })).totalCount).to.equal(0);
    expect(store.state.error).to.equal(null);
  });

  it('markRead, markUnread, action and remove persist on the server', async () => {
    const c = await config();
    const wf = await createWorkflow({ inApp: { subject: 's', body: 'b', primaryAction: { label: 'Yes' } } });
    await trigger(wf, c.subscriberId);
    await trigger(wf, c.subscriberId);
    const store = await connected(c);
    const [a, b] = store.state.messages.map((m) => m._id) as [string, string];
    const client = await api();

    const read = store.markRead(a);
    expect(store.state.messages[0]).to.include({ read: true, seen: true });
    expect(store.state.unseenCount).to.equal(1);
    await read;
    expect((await client.feed(c.subscriberId, { read: true })).data.map((m) => m._id)).to.deep.equal([a]);
    await store.markUnread(a);
    expect((await client.feed(c.subscriberId, { read: true })).data).to.have.length(0);

    const acting = store.action(b, 'primary');
    expect(store.state.messages[1]!.cta?.action?.status).to.equal('done');
    await acting;
    const onServer = (await client.feed(c.subscriberId)).data.find((m) => m._id === b)!;
    expect(onServer.cta?.action?.status).to.equal('done');
    expect(onServer.cta?.action?.result?.type).to.equal('primary');

    const removing = store.remove(a);
    expect(store.state.messages.map((m) => m._id)).to.deep.equal([b]);
    await removing;
    expect((await client.feed(c.subscriberId)).data.map((m) => m._id)).to.deep.equal([b]);
  });

  it('a refused mutation rolls back and fires error', async () => {
    const c = await config();
    await triggerMany(workflowId, c.subscriberId, 2);
    const store = await connected(c);
    const before = store.state.messages;
    const [a] = before.map((m) => m._id) as [string];
    const errors: InboxErrorDetail[] = [];
    store.addEventListener('error', (e) => errors.push((e as CustomEvent<InboxErrorDetail>).detail));

    await injectFault({ path: `/v1/messages/${a}`, method: 'DELETE', status: 500 });
    const removing = store.remove(a);
    expect(store.state.messages).to.have.length(1);
    await removing;
    expect(store.state.messages.map((m) => m._id)).to.deep.equal(before.map((m) => m._id));
    expect(errors).to.have.length(1);
    expect(errors[0]).to.include({ action: 'remove', messageId: a });
    expect((errors[0]!.error as NotifApiError).status).to.equal(500);
    expect(store.state.error).to.equal(errors[0]!.error);

    await injectFault({ path: `/subscribers/${c.subscriberId}/messages/mark-all`, status: 500 });
    const marking = store.markAllRead();
    expect(store.state.unseenCount).to.equal(0);
    await marking;
    expect(store.state.unseenCount).to.equal(2);
    expect(store.state.messages.every((m) => !m.read)).to.equal(true);
    expect(errors.map((e) => e.action)).to.deep.equal(['remove', 'markAllRead']);
    expect(await (await api()).unseenCount(c.subscriberId)).to.deep.equal({ count: 2 });
    expect((await (await api()).feed(c.subscriberId)).data).to.have.length(2);
  });

  it('retries a mutation with the same idempotency key while the server is unavailable', async () => {
    const c = await config();
    await trigger(workflowId, c.subscriberId);
    const keys: (string | null)[] = [];
    const recording: typeof fetch = (input, init) => {
      if (init?.method === 'POST') keys.push(new Headers(init.headers).get('idempotency-key'));
      return fetch(input, init);
    };
    const store = await connected({ ...c, fetch: recording });
    await injectFault({ path: `/subscribers/${c.subscriberId}/messages/mark-all`, status: 503, retryAfter: 0 });
    await store.markAllSeen();
    expect(keys).to.have.length(2);
    expect(keys[0]).to.be.a('string');
    expect(keys[1]).to.equal(keys[0]);
    expect(store.state.error).to.equal(null);
    expect(await (await api()).unseenCount(c.subscriberId)).to.deep.equal({ count: 0 });
  });

  it('mark-as answering 404 turns markAsSupported off', async () => {
    const c = await config();
    await trigger(workflowId, c.subscriberId);
    const store = await connected(c);
    const id = store.state.messages[0]!._id;
    await injectFault({ path: `/subscribers/${c.subscriberId}/messages/mark-as`, status: 404 });
    await store.markRead(id);
    expect(store.state.markAsSupported).to.equal(false);
    expect(store.state.messages[0]!.read).to.equal(false);
    expect(store.state.unseenCount).to.equal(1);
  });

  it('a mark or an action on a message deleted elsewhere removes it here, with no error, and keeps the read toggles', async () => {
    const c = await config();
    await triggerMany(workflowId, c.subscriberId, 3);
    const store = await connected(c);
    const [a, b, d] = store.state.messages.map((m) => m._id) as [string, string, string];
    const errors: InboxErrorDetail[] = [];
    store.addEventListener('error', (e) => errors.push((e as CustomEvent<InboxErrorDetail>).detail));
    // Deleted on another device: this store has not heard of it yet.
    for (const id of [a, b]) expect((await fetch(`${c.baseUrl}/v1/messages/${id}`, { method: 'DELETE', headers: { authorization: `ApiKey ${c.apiKey}` } })).status).to.equal(200);
    await store.markRead(a);
    await store.action(b, 'primary');
    expect(store.state.messages.map((m) => m._id)).to.deep.equal([d]);
    expect(store.state.markAsSupported).to.equal(true);
    expect(store.state.error).to.equal(null);
    expect(errors).to.deep.equal([]);
    expect(store.state.unseenCount).to.equal(1);
  });

  it('ignores the late answer of a superseded request', async () => {
    const c = await config();
    await triggerMany(workflowId, c.subscriberId, 2);
    const client = await api();
    const first = (await client.feed(c.subscriberId)).data[0]!;
    await client.markAs(c.subscriberId, { messageId: first._id, markAs: 'read' });

    // The unread-tab request is answered only after the next one, and ignores its abort signal.
    let releaseUnread!: () => void;
    const unreadHeld = new Promise<void>((r) => (releaseUnread = r));
    let unreadAnswered = false;
    let unreadAsked = false;
    const slow: typeof fetch = async (input, init) => {
      if (String(input).includes('read=false')) {
        unreadAsked = true;
        const response = await fetch(input, { ...init, signal: undefined });
        await unreadHeld;
        unreadAnswered = true;
        return response;
      }
      return fetch(input, init);
    };
    const store = track(new InboxStore({ ...c, fetch: slow }));
    store.connect();
    store.feedOpened();
    await until(() => store.state.loaded, 'first page');
    store.setTab('unread');
    // (Tabs switched twice in one turn ask the server once: the second switch waits for the first's request.)
    await until(() => unreadAsked, 'the unread tab asked for');
    store.setTab('all');
    await until(() => store.state.loaded, 'all tab');
    releaseUnread();
    await until(() => unreadAnswered, 'the late answer');
    await new Promise((r) => setTimeout(r, 50));
    expect(store.state.tab).to.equal('all');
    expect(store.state.messages).to.have.length(2);
  });

  it('stops polling on 401 and says why', async () => {
    const c = await config();
    const clk = fakeClock();
    const net = countingFetch();
    const store = track(new InboxStore({ ...c, apiKey: 'revoked-key', fetch: net.fetch }));
    const errors: InboxErrorDetail[] = [];
    store.addEventListener('error', (e) => errors.push((e as CustomEvent<InboxErrorDetail>).detail));
    store.connect();
    await until(() => store.state.status === 'error', 'error state');
    expect((store.state.error as NotifApiError).status).to.equal(401);
    expect(errors[0]!.action).to.equal('poll');
    const calls = net.calls.length;
    await clk.tickAsync(10 * 60_000);
    expect(net.calls.length).to.equal(calls);
  });

  it('honours Retry-After when the poll is throttled', async () => {
    const c = await config();
    const clk = fakeClock();
    const net = countingFetch();
    await injectFault({ path: `/subscribers/${c.subscriberId}/notifications/unseen`, status: 429, retryAfter: 60 });
    const store = track(new InboxStore({ ...c, fetch: net.fetch }));
    store.connect();
    await until(() => net.count('/unseen') === 1, 'first poll');
    await trigger(workflowId, c.subscriberId);
    await clk.tickAsync(50_000);
    expect(net.count('/unseen')).to.equal(1);
    await clk.tickAsync(11_000);
    await until(() => store.state.unseenCount === 1, 'poll after Retry-After');
    expect(net.count('/unseen')).to.equal(2);
  });

  it('one store per configuration on a page', async () => {
    const c = await config();
    const a = track(getInboxStore(c));
    const b = track(getInboxStore({ ...c }));
    expect(a).to.equal(b);
    expect(getInboxStore({ ...c, subscriberId: `${c.subscriberId}-2` })).not.to.equal(a);
    expect(getInboxStore({ ...c, feedIdentifier: 'news' })).not.to.equal(a);
    a.connect();
    b.connect();
    a.disconnect();
    await Promise.resolve();
    expect(getInboxStore(c)).to.equal(a);
    // Moved in the DOM: disconnected and connected in one task, still the same store.
    b.disconnect();
    b.connect();
    await Promise.resolve();
    expect(getInboxStore(c)).to.equal(a);
    b.disconnect();
    await Promise.resolve();
    expect(getInboxStore(c)).not.to.equal(a);
  });

  describe('across tabs', () => {
    it('one leader polls; followers get its results and every mutation; a follower takes over', async () => {
      const c = await config();
      const clk = fakeClock();
      const netA = countingFetch();
      const netB = countingFetch();
      const a = track(new InboxStore({ ...c, fetch: netA.fetch }));
      const b = track(new InboxStore({ ...c, fetch: netB.fetch }));
      a.connect();
      await until(() => netA.count('/unseen') === 1, 'leader poll');
      b.connect();
      await trigger(workflowId, c.subscriberId);
      await clk.tickAsync(15_000);
      await until(() => a.state.unseenCount === 1 && b.state.unseenCount === 1, 'count shared');
      for (let n = 3; n <= 5; n++) {
        await clk.tickAsync(15_000);
        await until(() => netA.count('/unseen') >= n, `leader poll ${n}`);
      }
      expect(netB.count('/unseen')).to.equal(0);

      // A follower's mutation reaches the leader without a request of the leader's.
      b.feedOpened();
      await until(() => b.state.messages.length === 1, 'follower page');
      const leaderCalls = netA.calls.length;
      await b.markAllSeen();
      await until(() => a.state.unseenCount === 0, 'mutation shared');
      expect(netA.calls.length).to.equal(leaderCalls);

      // The leader leaves: the follower polls.
      a.disconnect();
      await until(() => netB.count('/unseen') >= 1, 'follower took over');
      await trigger(workflowId, c.subscriberId);
      await clk.tickAsync(15_000);
      await until(() => b.state.unseenCount === 1, 'new leader polls');
    });

    it('a hidden tab resigns and makes no requests; visible again, it polls', async () => {
      const c = await config();
      const clk = fakeClock();
      const net = countingFetch();
      const a = track(new InboxStore({ ...c, fetch: net.fetch }));
      a.connect();
      await until(() => net.count('/unseen') === 1, 'poll');
      setVisibility('hidden');
      const before = net.calls.length;
      await clk.tickAsync(5 * 60_000);
      expect(net.calls.length).to.equal(before);
      setVisibility('visible');
      await until(() => net.count('/unseen') === 2, 'poll when visible');
    });
  });
});
