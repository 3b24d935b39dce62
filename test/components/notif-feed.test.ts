import { expect, fixture, fixtureCleanup, html, oneEvent } from '@open-wc/testing';
import { nothing } from 'lit';
import '../../src/index.ts';
import type { NotifFeed } from '../../src/index.ts';
import { FeedHarness, animationsDone, waitFor } from './harness.ts';
import { api, createWorkflow, injectFault, testServer, trigger, triggerMany, uniqueSubscriber } from './server.ts';

// <notif-feed> on its own (a full-page feed) against the real service; one subscriber per test.

describe('<notif-feed>', () => {
  let workflowId: string;
  let ctaWorkflowId: string;

  before(async () => {
    workflowId = await createWorkflow();
    ctaWorkflowId = await createWorkflow({
      inApp: {
        subject: '{{payload.title}}',
        body: 'Join {{payload.project}}?',
        primaryAction: { label: 'Accept', resultContent: 'You joined {{payload.project}}' },
        secondaryAction: { label: 'Decline', resultContent: 'Declined' },
      } as never,
    });
  });

  async function feedFor(subscriberId: string, attrs: { pageSize?: number; live?: 'poll' } = {}) {
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifFeed>(html`<notif-feed
      base-url=${baseUrl}
      subscriber-id=${subscriberId}
      api-key=${apiKey}
      page-size=${attrs.pageSize ?? 20}
      live=${attrs.live ?? nothing}
    ></notif-feed>`);
    return new FeedHarness(el);
  }

  /** Removes the fixture and lets the store registry drop its store, so the next fixture starts fresh. */
  async function teardown() {
    fixtureCleanup();
    await new Promise((r) => setTimeout(r, 0));
  }

  it('shows the loading skeleton, then the messages newest first', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 3);
    const feed = await feedFor(sub);
    expect(feed.skeleton, 'skeleton on the first load').to.equal(true);
    await feed.loaded(3);
    expect(feed.skeleton).to.equal(false);
    expect(feed.subjects).to.deep.equal(['Message 2', 'Message 1', 'Message 0']);
    expect(feed.messages[0]!.body).to.equal('body 2');
    expect(feed.messages.every((m) => m.unread)).to.equal(true);
    expect(feed.selectedTab).to.equal('All');
    await animationsDone();
    await expect(feed.el).to.be.accessible();
  });

  it('shows the empty state, with the slot replacing it', async () => {
    const feed = await feedFor(await uniqueSubscriber());
    await feed.loaded();
    expect(feed.messages).to.have.length(0);
    expect(feed.empty!.textContent).to.contain('No notifications yet');
    await expect(feed.el).to.be.accessible();

    const { baseUrl, apiKey } = await testServer();
    const custom = await fixture<NotifFeed>(html`<notif-feed base-url=${baseUrl} subscriber-id=${await uniqueSubscriber()} api-key=${apiKey}
      ><p slot="empty" id="mine">Nothing here</p></notif-feed
    >`);
    const h = new FeedHarness(custom);
    await h.loaded();
    const slot = h.empty!.querySelector('slot')!;
    expect(slot.assignedElements().map((e) => e.id)).to.deep.equal(['mine']);
  });

  it('marks all as read, and it persists across a new fixture', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 3);
    let feed = await feedFor(sub);
    await feed.loaded(3);
    const changed = oneEvent(feed.el, 'notif-read-change');
    await feed.markAllRead();
    expect((await changed).detail).to.deep.equal({ messageIds: 'all', read: true });
    await waitFor(() => feed.messages.every((m) => !m.unread), 'all read in the UI');
    const client = await api();
    await waitFor(async () => (await client.feed(sub, { read: false })).totalCount === 0, 'no unread on the server');

    await teardown();
    feed = await feedFor(sub);
    await feed.loaded(3);
    expect(feed.messages.map((m) => m.unread)).to.deep.equal([false, false, false]);
    expect(feed.markAllButton.disabled).to.equal(true);
  });

  it('filters to unread messages in the Unread tab, with keyboard tabs', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 3);
    const client = await api();
    const { data } = await client.feed(sub, {});
    await client.markAs(sub, { messageId: data[1]!._id, markAs: 'read' });
    const feed = await feedFor(sub);
    await feed.loaded(3);
    await feed.selectTab('Unread');
    await feed.loaded(2);
    expect(feed.selectedTab).to.equal('Unread');
    expect(feed.subjects).to.deep.equal(['Message 2', 'Message 0']);

    feed.tabs[1]!.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowLeft', bubbles: true, composed: true }));
    await feed.loaded(3);
    expect(feed.selectedTab).to.equal('All');
    expect(feed.tabs.map((t) => t.tabIndex)).to.deep.equal([0, -1]);
  });

  it('marks one message read on click, fires a cancelable notif-message-click, and read/unread from its control', async () => {
    const sub = await uniqueSubscriber();
    const wf = await createWorkflow({ inApp: { subject: '{{payload.title}}', body: 'b', redirect: { url: '/somewhere?x=1' } } as never });
    await trigger(wf, sub, { title: 'Go' });
    const feed = await feedFor(sub);
    await feed.loaded(1);
    const message = feed.message('Go');
    expect(message.link.getAttribute('href')).to.equal('/somewhere?x=1');

    const clicked = new Promise<CustomEvent>((resolve) =>
      feed.el.addEventListener('notif-message-click', (e) => {
        e.preventDefault(); // keep the test page
        resolve(e);
      }, { once: true }),
    );
    message.click();
    const event = await clicked;
    expect(event.detail.url).to.equal('/somewhere?x=1');
    expect(event.cancelable).to.equal(true);
    expect(location.pathname).not.to.equal('/somewhere');
    await waitFor(() => !feed.message('Go').unread, 'read in the UI');
    const client = await api();
    await waitFor(async () => (await client.feed(sub, {})).data[0]!.read === true, 'read on the server');

    await feed.message('Go').control('Mark as unread');
    await waitFor(async () => (await client.feed(sub, {})).data[0]!.read === false, 'unread on the server');
    expect(feed.message('Go').unread).to.equal(true);
  });

  it('runs a CTA action: status done on the server, the result shown, still after a new fixture', async () => {
    const sub = await uniqueSubscriber();
    await trigger(ctaWorkflowId, sub, { title: 'Invitation', project: 'Apollo' });
    let feed = await feedFor(sub);
    await feed.loaded(1);
    let message = feed.message('Invitation');
    expect(message.buttons.map((b) => b.textContent?.trim())).to.deep.equal(['Accept', 'Decline']);
    expect(message.buttons[0]!.getAttribute('part')).to.contain('button-primary');

    const action = oneEvent(feed.el, 'notif-action');
    await message.pressButton('Accept');
    expect((await action).detail.button).to.equal('primary');
    await waitFor(() => feed.message('Invitation').result === 'You joined Apollo', 'result text');
    expect(feed.message('Invitation').buttons).to.have.length(0);
    const client = await api();
    await waitFor(async () => (await client.feed(sub, {})).data[0]!.cta?.action?.status === 'done', 'done on the server');
    expect((await client.feed(sub, {})).data[0]!.cta?.action?.result?.type).to.equal('primary');

    await teardown();
    feed = await feedFor(sub);
    await feed.loaded(1);
    message = feed.message('Invitation');
    expect(message.result).to.equal('You joined Apollo');
    expect(message.buttons).to.have.length(0);
  });

  it('a CTA button with a URL follows it once the server recorded the action, unless notif-action is prevented', async () => {
    const sub = await uniqueSubscriber();
    // This page with a fragment: following it keeps the test page (same-document navigation).
    const here = location.pathname + location.search;
    const wf = await createWorkflow({ inApp: { subject: '{{payload.title}}', body: 'b', primaryAction: { label: 'Open', redirect: { url: `${here}#cta-{{payload.title}}` } } } as never });
    await trigger(wf, sub, { title: 'kept' });
    await trigger(wf, sub, { title: 'followed' });
    const feed = await feedFor(sub);
    await feed.loaded(2);
    const client = await api();
    const status = async (subject: string) => (await client.feed(sub, {})).data.find((m) => m.subject === subject)!.cta?.action?.status;
    const start = location.href;
    try {
      const action = oneEvent(feed.el, 'notif-action');
      const arrived = new Promise((r) => addEventListener('hashchange', r, { once: true }));
      await feed.message('followed').pressButton('Open');
      const e = await action;
      expect([e.detail.url, e.cancelable]).to.deep.equal([`${here}#cta-followed`, true]);
      await arrived;
      expect(location.hash).to.equal('#cta-followed');
      expect(await status('followed'), 'recorded before the page moved on').to.equal('done');

      // Prevented (an app's router): the action runs, the page stays.
      feed.el.addEventListener('notif-action', (ev) => ev.preventDefault(), { once: true });
      await feed.message('kept').pressButton('Open');
      await waitFor(async () => (await status('kept')) === 'done', 'done on the server');
      await new Promise((r) => setTimeout(r, 900));
      expect(location.hash).to.equal('#cta-followed');
    } finally {
      history.replaceState(null, '', start);
    }
  });

  it('deletes a message on the server from its control', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 2);
    const feed = await feedFor(sub);
    await feed.loaded(2);
    expect(feed.message('Message 1').controlNames).to.deep.equal(['Mark as read', 'Delete']);
    await feed.message('Message 1').control('Delete');
    await feed.loaded(1);
    expect(feed.subjects).to.deep.equal(['Message 0']);
    const client = await api();
    await waitFor(async () => (await client.feed(sub, {})).totalCount === 1, 'deleted on the server');
    expect((await client.feed(sub, {})).data.map((m) => m.subject)).to.deep.equal(['Message 0']);
  });

  it('pages by scrolling to the last message with no duplicates', async function () {
    // Five pages, each a real request and a re-render. It once timed out under load while it slept
    // fixed times between scrolls; now every wait is on a condition (the loaded list growing, the
    // store settling), and a slow machine only makes it slower.
    this.timeout(60_000);
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 45);
    const feed = await feedFor(sub, { pageSize: 10 });
    await feed.loaded();
    const state = () => (feed.el as unknown as { inbox: { state: { hasMore: boolean; loadingMore: boolean } } }).inbox.state;
    let scrolls = 0;
    while (feed.loadedIds.length < 45) {
      const before = feed.loadedIds.length;
      scrolls++;
      await feed.scrollToEnd();
      await waitFor(() => feed.loadedIds.length > before, `more than ${before} of 45 messages after scrolling`, 20_000);
    }
    expect(scrolls, 'took several scrolls').to.be.greaterThan(1);
    // Nothing further arrives at the end: the store says there is no more and loads nothing.
    await waitFor(() => !state().hasMore && !state().loadingMore, 'the end of the list');
    const ids = feed.loadedIds;
    expect(ids).to.have.length(45);
    expect(new Set(ids).size).to.equal(45);
    const client = await api();
    expect(ids).to.deep.equal((await client.feed(sub, { limit: 100 })).data.map((m) => m._id));
    // The rows rendered at the end: the last message, announced as 45 of 45, no row twice.
    await waitFor(async () => (await feed.scrollToEnd(), feed.positions.at(-1)?.[0] === 45), 'the last row rendered');
    expect(feed.subjects.at(-1)).to.equal('Message 0');
    expect(feed.positions.at(-1)).to.deep.equal([45, 45]);
    expect(new Set(feed.ids).size).to.equal(feed.ids.length);
  });

  it('keeps paging when the view jumps to the end right after each page renders', async function () {
    // The loop looks at the sentinel just after a page renders (far below: it stops); the jump
    // brings the sentinel back before the observer's next look, so the observer sees no change.
    this.timeout(30_000);
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 35);
    window.scrollTo(0, 0); // an earlier test may have left the page scrolled down
    const feed = await feedFor(sub, { pageSize: 10 });
    await feed.loaded();
    // The first pages fill the view and stop short of the end.
    await new Promise((r) => setTimeout(r, 500));
    expect(feed.loadedIds.length).to.be.within(10, 25);
    const jump = () => window.scrollTo(0, document.documentElement.scrollHeight);
    const renders = new MutationObserver(() => setTimeout(jump, 0));
    renders.observe(feed.root, { childList: true, subtree: true });
    try {
      jump();
      await waitFor(() => feed.loadedIds.length >= 35, 'all 35 messages without another scroll', 15_000);
    } finally {
      renders.disconnect();
    }
    expect(new Set(feed.loadedIds).size).to.equal(35);
  });

  it('rolls back a mutation the server refuses (500) and fires notif-error', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 2);
    const feed = await feedFor(sub);
    await feed.loaded(2);
    await injectFault({ path: `/v1/subscribers/${sub}/messages/mark-all`, method: 'POST', status: 500 });
    const failed = oneEvent(feed.el, 'notif-error');
    feed.markAllButton.click();
    await feed.el.updateComplete;
    await new Promise((r) => setTimeout(r, 0));
    const optimistic = feed.messages.map((m) => m.unread);
    const { detail } = await failed;
    expect(detail.action).to.equal('markAllRead');
    expect(detail.error.message).to.be.a('string');
    await waitFor(() => feed.messages.every((m) => m.unread), 'rolled back');
    expect(optimistic, 'applied at once before the answer').to.deep.equal([false, false]);
    expect((await (await api()).feed(sub, { read: false })).totalCount).to.equal(2);
  });

  it('shows an error state with a Retry that recovers', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 2);
    await injectFault({ path: `/v1/subscribers/${sub}/notifications/feed`, method: 'GET', status: 500 });
    // Polled: a stream asks for the page again as it opens, which ends an error of one request at once (live.test.ts).
    const feed = await feedFor(sub, { live: 'poll' });
    await waitFor(() => feed.retryButton, 'the error state');
    expect(feed.error!.getAttribute('role')).to.equal('alert');
    expect(feed.error!.textContent).to.contain("Couldn't load notifications");
    expect(feed.messages).to.have.length(0);
    await expect(feed.el).to.be.accessible();
    feed.retryButton!.click();
    await feed.loaded(2);
    expect(feed.error).to.equal(null);
  });

  it('shows the loading state, not a blank element, until it is configured (configuration.test.ts: what follows)', async () => {
    const el = await fixture<NotifFeed>(html`<notif-feed></notif-feed>`);
    const feed = new FeedHarness(el);
    expect(feed.skeleton).to.equal(true);
    expect(feed.error).to.equal(null);
  });
});
