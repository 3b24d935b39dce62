import { expect, fixture, fixtureCleanup, html, oneEvent } from '@open-wc/testing';
import '../../src/index.ts';
import type { NotifBell, NotifFeed } from '../../src/index.ts';
import { BellHarness, FeedHarness, LIVE_WAIT, pretendVisible, waitFor } from './harness.ts';
import { api, createWorkflow, testServer, trigger, triggerMany, uniqueSubscriber } from './server.ts';

// Each feed keeps its own tab: a bell's and a page's feed of one inbox (one store) switch one at a
// time, and a bell keeps its tab from one opening to the next. An app that wants them on one tab
// says so with `tab` and `notif-tab-change`.

describe('tabs: each feed its own, or shared', () => {
  let workflowId: string;
  let restoreVisibility: () => void;

  before(async () => {
    restoreVisibility = pretendVisible();
    workflowId = await createWorkflow();
  });
  after(() => restoreVisibility());
  afterEach(async () => {
    fixtureCleanup();
    await new Promise((r) => setTimeout(r, 0));
  });

  /** A subscriber with three messages, the newest read. */
  async function subscriber() {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 3);
    const client = await api();
    const newest = (await client.feed(sub)).data[0]!;
    await client.markAs(sub, { messageId: newest._id, markAs: 'read' });
    return sub;
  }

  async function page(sub: string) {
    const { baseUrl, apiKey } = await testServer();
    const wrap = await fixture<HTMLElement>(html`<div>
      <notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-bell>
      <notif-feed base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-feed>
    </div>`);
    return { bell: new BellHarness(wrap.querySelector<NotifBell>('notif-bell')!), feed: new FeedHarness(wrap.querySelector<NotifFeed>('notif-feed')!) };
  }

  it('a bell switched to Unread leaves the page\'s feed on All, and keeps Unread when opened again', async () => {
    const sub = await subscriber();
    const { bell, feed } = await page(sub);
    await feed.loaded(3);
    const popover = await bell.open();
    await popover.loaded(3);
    const told = oneEvent(bell.el, 'notif-tab-change');
    await popover.selectTab('Unread');
    expect((await told).detail.tab).to.equal('unread');
    await popover.loaded(2);
    expect(popover.selectedTab).to.equal('Unread');
    expect(feed.selectedTab, "the page's feed stays").to.equal('All');
    expect(feed.subjects).to.deep.equal(['Message 2', 'Message 1', 'Message 0']);
    expect(bell.el.tab).to.equal('unread');

    await bell.el.hide();
    const again = await bell.open();
    await again.loaded(2);
    expect(again.selectedTab, 'the bell keeps its tab').to.equal('Unread');

    // The page's feed switches alone too.
    await feed.selectTab('Unread');
    await feed.loaded(2);
    await again.selectTab('All');
    await again.loaded(3);
    expect(feed.selectedTab).to.equal('Unread');
  });

  it('both lists stay live: a new message reaches the Unread tab of one and the All tab of the other', async () => {
    const sub = await subscriber();
    const { bell, feed } = await page(sub);
    await feed.loaded(3);
    const popover = await bell.open();
    await popover.selectTab('Unread');
    await popover.loaded(2);
    await trigger(workflowId, sub, { title: 'Fresh', body: 'new' });
    await waitFor(() => feed.subjects[0] === 'Fresh', 'the All feed', LIVE_WAIT);
    await waitFor(() => popover.subjects[0] === 'Fresh', 'the Unread feed', LIVE_WAIT);
    // Marked read from the page's feed: read, or gone, in the bell's Unread list (it stays a moment only where it was read).
    await feed.message('Fresh').control('Mark as read');
    await waitFor(() => popover.messages.every((m) => m.subject != 'Fresh' || !m.unread), 'read in the other list');
  });

  it('a feed may start on Unread (tab="unread")', async () => {
    const sub = await subscriber();
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifFeed>(html`<notif-feed tab="unread" base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-feed>`);
    const feed = new FeedHarness(el);
    await feed.loaded(2);
    expect(feed.selectedTab).to.equal('Unread');
  });

  it("an app keeps the bell and the page's feed on one tab with notif-tab-change and tab", async () => {
    const sub = await subscriber();
    const { bell, feed } = await page(sub);
    // The app's three lines: whichever element's tab the user picks, the other shows it too.
    const follow = (event: Event) => {
      const { tab } = (event as CustomEvent<{ tab: 'all' | 'unread' }>).detail;
      bell.el.tab = tab;
      feed.el.tab = tab;
    };
    bell.el.parentElement!.addEventListener('notif-tab-change', follow);
    await feed.loaded(3);
    const popover = await bell.open();
    await popover.loaded(3);
    await popover.selectTab('Unread');
    await popover.loaded(2);
    await waitFor(() => feed.selectedTab === 'Unread', "the page's feed follows");
    await feed.loaded(2);
    await feed.selectTab('All');
    await waitFor(() => popover.selectedTab === 'All', 'the bell follows');
    await popover.loaded(3);
  });
});
