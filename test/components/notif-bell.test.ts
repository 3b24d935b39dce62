import { expect, fixture, html, oneEvent } from '@open-wc/testing';
import { setViewport } from '@web/test-runner-commands';
import sinon from 'sinon';
import '../../src/index.ts';
import type { NotifBell } from '../../src/index.ts';
import type { InboxStoreApi } from '../../src/store/types.ts';
import { BellHarness, LIVE_WAIT, animationsDone, pretendVisible, waitFor } from './harness.ts';
import { api, createWorkflow, injectFault, streamsOf, testServer, trigger, triggerMany, uniqueSubscriber } from './server.ts';

// <notif-bell> against the real service: each test has its own subscriber.

describe('<notif-bell>', () => {
  let workflowId: string;
  let clock: ReturnType<typeof sinon.useFakeTimers> | undefined;
  let restoreVisibility: () => void;

  before(async () => {
    restoreVisibility = pretendVisible();
    workflowId = await createWorkflow();
  });

  after(() => restoreVisibility());

  afterEach(() => {
    clock?.restore();
    clock = undefined;
  });

  async function bellFor(subscriberId: string, extra: { pollInterval?: number; noAutoSeen?: boolean; live?: 'poll' } = {}) {
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifBell>(html`<notif-bell
      base-url=${baseUrl}
      subscriber-id=${subscriberId}
      api-key=${apiKey}
      poll-interval=${extra.pollInterval ?? 15000}
      live=${extra.live ?? 'auto'}
      ?no-auto-seen=${extra.noAutoSeen ?? false}
    ></notif-bell>`);
    return new BellHarness(el);
  }

  it('shows the server\'s unseen count in the badge and in the accessible name', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 4);
    const client = await api();
    const [oldest] = (await client.feed(sub, { page: 0, limit: 10 })).data.slice(-1);
    await client.markAs(sub, { messageId: oldest!._id, markAs: 'seen' });
    const { count } = await client.unseenCount(sub);
    expect(count).to.equal(3);

    const bell = await bellFor(sub);
    await waitFor(() => bell.badge === String(count), `badge ${count}`);
    expect(bell.label).to.equal('Notifications, 3 unseen');
    await animationsDone();
    await expect(bell.el).to.be.accessible();
  });

  it('hides the badge at 0 and shows "99+" past 99', async () => {
    const empty = await bellFor(await uniqueSubscriber());
    await new Promise((r) => setTimeout(r, 300));
    expect(empty.badge).to.equal(null);
    expect(empty.label).to.equal('Notifications');

    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 100);
    expect((await (await api()).unseenCount(sub)).count).to.equal(100);
    const bell = await bellFor(sub);
    await waitFor(() => bell.badge === '99+', 'badge 99+', 8000);
    expect(bell.label).to.equal('Notifications, 99+ unseen');
  });

  it('shows a message triggered on the server within one poll interval (live="poll")', async () => {
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });
    const sub = await uniqueSubscriber();
    await trigger(workflowId, sub, { title: 'First', body: 'one' });
    const bell = await bellFor(sub, { pollInterval: 15000, live: 'poll' });
    await waitFor(() => bell.badge === '1', 'badge 1');

    await trigger(workflowId, sub, { title: 'Second', body: 'two' });
    await new Promise((r) => setTimeout(r, 300));
    expect(bell.badge, 'no request before the interval').to.equal('1');
    const changed = oneEvent(bell.el, 'notif-unseen-count-change');
    await clock.tickAsync(15000);
    await waitFor(() => bell.badge === '2', 'badge 2 after one interval');
    expect((await changed).detail.count).to.equal(2);

    const feed = await bell.open();
    await feed.loaded(2);
    expect(feed.subjects).to.deep.equal(['Second', 'First']);
  });

  it('opens a labelled dialog with the feed, clears the badge and marks the messages seen on the server', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 3);
    const bell = await bellFor(sub);
    await waitFor(() => bell.badge === '3', 'badge 3');

    const seen = oneEvent(bell.el, 'notif-seen-change');
    const feed = await bell.open();
    expect(bell.isOpen).to.equal(true);
    expect(bell.popover.getAttribute('role')).to.equal('dialog');
    expect(bell.popover.getAttribute('aria-label')).to.equal('Notifications');
    expect(bell.button.getAttribute('aria-expanded')).to.equal('true');
    expect((await seen).detail).to.deep.equal({ messageIds: 'all', seen: true });
    expect(bell.badge).to.equal(null);
    await feed.loaded(3);
    const client = await api();
    await waitFor(async () => (await client.unseenCount(sub)).count === 0, 'server unseen 0');
    expect((await client.unseenCount(sub)).count).to.equal(0);
    // Seen is not read: the messages stay unread.
    expect(feed.messages.every((m) => m.unread)).to.equal(true);
    await animationsDone();
    await expect(bell.el).to.be.accessible();
  });

  it('opening it asks for the first page once: the page answered while its "mark all seen" is in flight shows the messages seen', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 3);
    const { baseUrl, apiKey } = await testServer();
    const feedRequests: string[] = [];
    const counting = (input: RequestInfo | URL, init?: RequestInit) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url.includes('/notifications/feed')) feedRequests.push(url);
      return fetch(input, init);
    };
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} .fetch=${counting}></notif-bell>`);
    const bell = new BellHarness(el);
    await waitFor(() => bell.badge === '3', 'badge 3');
    // Open, the stream says "refetch" (it has no Last-Event-ID): that first page is not the one counted.
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the stream opened', LIVE_WAIT);
    const before = feedRequests.length;

    const feed = await bell.open();
    await feed.loaded(3);
    const store = (el as unknown as { inbox: InboxStoreApi }).inbox;
    const client = await api();
    await waitFor(async () => (await client.unseenCount(sub)).count === 0, 'server unseen 0');
    await waitFor(() => !store.state.messages.some((message) => !message.seen), 'every message seen');
    // Time for a request the end of the mark would start (it starts in the same task as the end).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(feedRequests.length - before).to.equal(1);
    expect(store.state.messages.map((message) => message.seen)).to.deep.equal([true, true, true]);
    expect(bell.badge).to.equal(null);
  });

  it('its feed fills the popover\'s width in every state (loading, empty, error, short messages), at 375 px and on a desktop', async () => {
    const { baseUrl, apiKey } = await testServer();
    /** Every piece that spans the feed (the frame, the tabs' divider, skeleton rows, states, rows) is as wide as the popover. */
    const spans = (bell: BellHarness, state: string) => {
      const width = bell.popover.clientWidth;
      const root = bell.feed.root;
      const pieces = [bell.feed.el, ...root.querySelectorAll('[part~="base"], [part~="tabs"], .skeleton, [part~="empty"], [part~="error"], [part~="item"]')];
      expect(pieces.length, state).to.be.greaterThan(2);
      for (const piece of pieces) expect(piece.getBoundingClientRect().width, `${state}: ${piece.getAttribute('part') ?? piece.className}`).to.be.closeTo(width, 1);
    };
    for (const [width, height] of [[375, 700], [1280, 800]] as const) {
      await setViewport({ width, height });
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const slow: typeof fetch = async (input, init) => {
        if (String(input).includes('/feed')) await held;
        return fetch(input, init);
      };
      const empty = await uniqueSubscriber();
      const loading = new BellHarness(await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${empty} api-key=${apiKey} .fetch=${slow}></notif-bell>`));
      await loading.open();
      await waitFor(() => loading.feed.skeleton, 'the skeleton');
      await animationsDone();
      spans(loading, `loading, ${width} px`);
      release();
      await waitFor(() => loading.feed.empty, 'the empty state');
      spans(loading, `empty, ${width} px`);

      const failing = await uniqueSubscriber();
      await injectFault({ path: `/v1/subscribers/${failing}/notifications/feed`, method: 'GET', status: 500, times: 3 });
      const error = await bellFor(failing, { live: 'poll' });
      await error.open();
      await waitFor(() => error.feed.error, 'the error state');
      await animationsDone();
      spans(error, `error, ${width} px`);

      const short = await uniqueSubscriber();
      await trigger(workflowId, short, { title: 'Hi', body: 'Ok' });
      const loaded = await bellFor(short);
      await (await loaded.open()).loaded(1);
      await animationsDone();
      spans(loaded, `short messages, ${width} px`);
    }
    await setViewport({ width: 800, height: 600 });
  });

  it('keeps the count with no-auto-seen', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 2);
    const bell = await bellFor(sub, { noAutoSeen: true });
    await waitFor(() => bell.badge === '2', 'badge 2');
    const feed = await bell.open();
    await feed.loaded(2);
    await new Promise((r) => setTimeout(r, 200));
    expect(bell.badge).to.equal('2');
    expect((await (await api()).unseenCount(sub)).count).to.equal(2);
  });

  it('closes on Escape and on an outside click, returning focus to the bell after Escape', async () => {
    const sub = await uniqueSubscriber();
    const bell = await bellFor(sub);
    await bell.open();
    expect(bell.el.shadowRoot!.activeElement === bell.popover, 'focus in the dialog').to.equal(true);
    await bell.pressEscape();
    expect(bell.isOpen).to.equal(false);
    expect(bell.el.open).to.equal(false);
    expect(bell.el.shadowRoot!.activeElement?.className, 'focus back on the bell').to.equal('button');
    expect(bell.button.getAttribute('aria-expanded')).to.equal('false');

    await bell.open();
    expect(bell.isOpen).to.equal(true);
    document.body.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, composed: true }));
    await bell.el.updateComplete;
    expect(bell.isOpen).to.equal(false);

    // A click inside the popover keeps it open.
    await bell.open();
    bell.popover.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, composed: true }));
    await bell.el.updateComplete;
    expect(bell.isOpen).to.equal(true);
  });
});
