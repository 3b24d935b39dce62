import { expect, fixture, html } from '@open-wc/testing';
import sinon from 'sinon';
import '../../src/index.ts';
import type { NotifBell } from '../../src/index.ts';
import { ANNOUNCE_INTERVAL } from '../../src/internal/inbox-element.ts';
import { BellHarness, pretendVisible, waitFor } from './harness.ts';
import { api, createWorkflow, testServer, trigger, uniqueSubscriber } from './server.ts';

// New messages are announced politely through one live region per inbox, at most once per
// ANNOUNCE_INTERVAL; what arrives meanwhile is summed into the next announcement. Real service,
// fake timers for the clock only.

describe('live region', () => {
  let clock: ReturnType<typeof sinon.useFakeTimers>;
  let restoreVisibility: () => void;
  let workflowId: string;

  before(async () => {
    restoreVisibility = pretendVisible();
    workflowId = await createWorkflow();
  });
  after(() => restoreVisibility());
  afterEach(() => clock?.restore());

  it('announces "N new notifications" politely, once per interval, never the first count or a drop', async () => {
    expect(ANNOUNCE_INTERVAL).to.equal(5000);
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });
    const sub = await uniqueSubscriber();
    await trigger(workflowId, sub, { title: 'Old 1', body: 'x' });
    await trigger(workflowId, sub, { title: 'Old 2', body: 'x' });
    const { baseUrl, apiKey } = await testServer();
    // Two bells of one inbox (one store): still one voice.
    const wrap = await fixture<HTMLElement>(html`<div>
      <notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval="2000"></notif-bell>
      <notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval="2000"></notif-bell>
    </div>`);
    const [bell, twin] = [...wrap.querySelectorAll<NotifBell>('notif-bell')].map((el) => new BellHarness(el)) as [BellHarness, BellHarness];
    await waitFor(() => bell.badge === '2' && twin.badge === '2', 'badge 2');

    const heard: { text: string; at: number; region: Element }[] = [];
    const regions = [bell, twin].map((b) => b.root.querySelector('#live')!);
    for (const region of regions) {
      expect(region.getAttribute('role'), 'a polite live region').to.equal('status');
      new MutationObserver(() => {
        const text = region.textContent!.trim();
        if (text) heard.push({ text, at: Date.now(), region });
      }).observe(region, { childList: true, characterData: true, subtree: true });
    }
    expect(regions.every((r) => r.textContent === ''), 'the first count is not news').to.equal(true);

    await trigger(workflowId, sub, { title: 'New 1', body: 'x' });
    await clock.tickAsync(2000);
    await waitFor(() => bell.badge === '3', 'badge 3');
    await waitFor(() => heard.length === 1, 'first announcement');
    expect(heard[0]!.text).to.equal('1 new notification');

    // Two more within the interval: held back, then said together.
    await trigger(workflowId, sub, { title: 'New 2', body: 'x' });
    await trigger(workflowId, sub, { title: 'New 3', body: 'x' });
    await clock.tickAsync(2000);
    await waitFor(() => bell.badge === '5', 'badge 5');
    expect(heard.map((h) => h.text), 'quiet within the interval').to.deep.equal(['1 new notification']);
    await clock.tickAsync(3500);
    await waitFor(() => heard.length === 2, 'second announcement');
    expect(heard[1]!.text).to.equal('2 new notifications');
    expect(heard[1]!.at - heard[0]!.at).to.be.at.least(ANNOUNCE_INTERVAL);

    // Opening marks everything seen: the count drops, nothing is said; the region empties after the interval.
    await bell.open();
    await waitFor(() => bell.badge === null, 'badge gone');
    // The badge clears at once (optimistic); wait for the server too, or the next message could be
    // triggered before mark-all lands and be marked seen with the rest.
    const client = await api();
    await waitFor(async () => (await client.unseenCount(sub)).count === 0, 'seen on the server');
    await clock.tickAsync(ANNOUNCE_INTERVAL + 2500);
    expect(heard.map((h) => h.text)).to.deep.equal(['1 new notification', '2 new notifications']);
    expect(new Set(heard.map((h) => h.region)).size, 'one live region spoke').to.equal(1);
    expect(regions.map((r) => r.textContent)).to.deep.equal(['', '']);

    // A message arriving while the popover is open is announced too.
    await trigger(workflowId, sub, { title: 'New 4', body: 'x' });
    await clock.tickAsync(2000);
    await waitFor(() => heard.length === 3, 'third announcement');
    expect(heard[2]!.text).to.equal('1 new notification');
  });

  it('speaks the inbox locale and has no live region inside the bell (the feed there is not outermost)', async () => {
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });
    const sub = await uniqueSubscriber();
    const { baseUrl, apiKey } = await testServer();
    const { default: de } = await import('../../src/i18n/de.ts');
    const { registerTranslation } = await import('../../src/index.ts');
    registerTranslation(de);
    const bell = new BellHarness(
      // Polling: both messages arrive in one poll, announced together. (The fake clock also moves with
      // real time: a poll every minute cannot fall between the two triggers on a slow machine.)
      await fixture<NotifBell>(html`<notif-bell locale="de" base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval="60000" live="poll"></notif-bell>`),
    );
    await clock.tickAsync(100);
    const feed = await bell.open();
    await feed.loaded();
    expect(feed.root.querySelector('#live')).to.equal(null);
    expect(bell.el.shadowRoot!.querySelectorAll('#live')).to.have.length(1);
    // The first count answered before the messages come (the empty feed can show first): a first
    // count read after them would already hold them, and the first count is not announced.
    await waitFor(() => (bell.el as unknown as { inbox?: { counted?: boolean } }).inbox?.counted, 'the first count');
    await trigger(workflowId, sub, { title: 'Neu', body: 'x' });
    await trigger(workflowId, sub, { title: 'Neu 2', body: 'x' });
    await clock.tickAsync(60_000);
    await waitFor(() => bell.root.querySelector('#live')!.textContent === '2 neue Benachrichtigungen', 'German announcement');
  });
});
