import { expect, fixture, html } from '@open-wc/testing';
import { executeServerCommand } from '@web/test-runner-commands';
import sinon from 'sinon';
import '../../src/index.ts';
import type { InboxStoreApi, Message, NotifBell, NotifFeed } from '../../src/index.ts';
import { BellHarness, FeedHarness, pretendVisible, LIVE_WAIT, waitFor } from './harness.ts';
import { api, createWorkflow, injectFault, streamsOf, subscriberHash, testServer, trigger, triggerMany, uniqueSubscriber } from './server.ts';

// Live: the service's stream (GET …/notifications/stream) held by one tab of the browser and relayed
// to the others. Tabs are same-origin iframes here: each has its own document, modules and store, and
// they share BroadcastChannel and navigator.locks as tabs do. The poll interval is ten minutes
// throughout, so whatever arrives within a test came by the stream.

const NO_POLL = 600_000;

interface Tab {
  frame: HTMLIFrameElement;
  /** URLs this tab fetched. */
  calls: string[];
  /** `_id`s of the notif-message-received events this tab fired. */
  received: string[];
  bell: BellHarness;
}

/** A "tab": an iframe with its own copy of the elements and a bell on `subscriberId`; `prelude` runs before them. */
async function openTab(subscriberId: string, attributes = '', prelude = ''): Promise<Tab> {
  const { baseUrl, apiKey } = await testServer();
  const frame = document.createElement('iframe');
  frame.srcdoc = `<!doctype html><script>
    Object.defineProperty(document, 'visibilityState', { get: () => 'visible' });
    Object.defineProperty(document, 'hidden', { get: () => false });
    const f = fetch; window.calls = []; window.received = [];
    window.fetch = (u, i) => (calls.push(String(u)), f(u, i));
    addEventListener('notif-message-received', (e) => received.push(e.detail.message._id));
    ${prelude}
  </script><script type="module" src="/src/index.ts"></script>
  <notif-bell base-url="${baseUrl}" subscriber-id="${subscriberId}" api-key="${apiKey}" poll-interval="${NO_POLL}" ${attributes}></notif-bell>`;
  document.body.append(frame);
  await waitFor(() => frame.contentWindow?.customElements?.get('notif-bell') && frame.contentDocument!.querySelector('notif-bell')?.shadowRoot, 'the tab to load', 10_000);
  const win = frame.contentWindow as unknown as { calls: string[]; received: string[] };
  return { frame, calls: win.calls, received: win.received, bell: new BellHarness(frame.contentDocument!.querySelector('notif-bell') as NotifBell) };
}

const streamCalls = (tab: Tab) => tab.calls.filter((u) => u.includes('/notifications/stream')).length;
const countCalls = (tab: Tab) => tab.calls.filter((u) => u.includes('/notifications/unseen')).length;

describe('live: the stream', () => {
  let workflowId: string;
  let restoreVisibility: () => void;
  const tabs: Tab[] = [];

  before(async () => {
    restoreVisibility = pretendVisible();
    workflowId = await createWorkflow();
  });
  after(() => restoreVisibility());
  afterEach(() => {
    for (const tab of tabs.splice(0)) tab.frame.remove();
  });

  it('a triggered message reaches the badge and an open feed, with no poll', async () => {
    const sub = await uniqueSubscriber();
    const { baseUrl, apiKey } = await testServer();
    const requests: string[] = [];
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval=${NO_POLL} no-auto-seen
      .fetch=${(u: RequestInfo | URL, i?: RequestInit) => (requests.push(String(u)), fetch(u, i))}></notif-bell>`);
    const bell = new BellHarness(el);
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the stream to open');
    await trigger(workflowId, sub, { title: 'Live one', body: 'b' });
    await waitFor(() => bell.badge === '1', 'badge 1', LIVE_WAIT);
    await bell.open();
    const feed = bell.feed;
    await waitFor(() => feed.messages.length === 1, 'the message in the feed');
    const pages = () => requests.filter((u) => u.includes('/notifications/feed')).length;
    const before = pages();
    await trigger(workflowId, sub, { title: 'Live two', body: 'b' });
    await waitFor(() => feed.messages[0]?.subject === 'Live two', 'the second message at the top of the open feed', LIVE_WAIT);
    expect(bell.badge).to.equal('2');
    // The message and the count it raised come in one read of the stream: one first-page request for both.
    expect(pages() - before, 'first-page requests for the arrival').to.equal(1);
    expect(requests.filter((u) => u.includes('/notifications/unseen')).length, 'count requests').to.be.at.most(1);
    expect(requests.filter((u) => u.includes('/notifications/stream')).length, 'one stream').to.equal(1);
  });

  it('notif-message-received carries a long message whole, though the stream told only a preview of it', async () => {
    const sub = await uniqueSubscriber();
    const { baseUrl, apiKey } = await testServer();
    const received: Message[] = [];
    await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval=${NO_POLL} no-auto-seen
      @notif-message-received=${(e: CustomEvent) => received.push(e.detail.message)}></notif-bell>`);
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the stream to open');
    // A subject and body of 20,000 characters each: past what one stream event holds (16 KB by
    // default), so the event carries a cut preview and the store reads the message whole.
    const title = 'Long subject. '.repeat(1500).slice(0, 20_000);
    const body = 'Long body. '.repeat(2000).slice(0, 20_000);
    await trigger(workflowId, sub, { title, body });
    await waitFor(() => received.length === 1, 'notif-message-received', LIVE_WAIT);
    expect(received[0]!.subject).to.equal(title);
    // The whole body, as the feed item has it (the rendered text) or as content blocks.
    const content = received[0]!.content ?? '';
    const text = typeof content === 'string' ? content : content.map((block) => block.content).join('');
    expect(text).to.equal(body);
    expect(received[0]!.payload).to.deep.equal({ title, body });
  });

  it('a message that arrives between the first page and the first count shows in the open feed, with no poll', async () => {
    // The first page is read without it, the first count with it, and the stream opens after both:
    // its count is the one known, and it told of no message, so only the service saying "refetch"
    // on a stream opened without Last-Event-ID brings the message to the feed.
    const sub = await uniqueSubscriber();
    await trigger(workflowId, sub, { title: 'Before', body: 'b' });
    const { baseUrl, apiKey } = await testServer();
    const requests: string[] = [];
    let firstPage!: () => void;
    const pageRead = new Promise<void>((r) => (firstPage = r));
    const unseen = async () =>
      (await (await fetch(`${baseUrl}/v1/subscribers/${sub}/notifications/unseen`, { headers: { authorization: `ApiKey ${apiKey}` } })).json()).count;
    const held = async (u: RequestInfo | URL, i?: RequestInit) => {
      const url = String(u);
      requests.push(url);
      if (url.includes('/notifications/feed')) return fetch(u, i).finally(firstPage);
      if (url.includes('/notifications/unseen') && requests.filter((r) => r.includes('/notifications/unseen')).length === 1) {
        await pageRead;
        await trigger(workflowId, sub, { title: 'Between', body: 'b' });
        await waitFor(async () => (await unseen()) === 2, 'the message to be counted', LIVE_WAIT);
      }
      return fetch(u, i);
    };
    const feed = new FeedHarness(await fixture<NotifFeed>(html`<notif-feed base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval=${NO_POLL} .fetch=${held}></notif-feed>`));
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the stream to open');
    await waitFor(() => feed.subjects[0] === 'Between', 'the message in the feed', LIVE_WAIT);
    expect(feed.subjects).to.deep.equal(['Between', 'Before']);
    expect(requests.filter((u) => u.includes('/notifications/stream')).length, 'one stream').to.equal(1);
  });

  it('a first page that failed once is asked again as the stream opens: the feed recovers with no Retry and no poll', async () => {
    const sub = await uniqueSubscriber();
    await trigger(workflowId, sub, { title: 'Kept', body: 'b' });
    await injectFault({ path: `/v1/subscribers/${sub}/notifications/feed`, method: 'GET', status: 500 });
    const { baseUrl, apiKey } = await testServer();
    const feed = new FeedHarness(
      await fixture<NotifFeed>(html`<notif-feed base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval=${NO_POLL}></notif-feed>`),
    );
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the stream to open');
    await waitFor(() => feed.subjects[0] === 'Kept', 'the feed to recover', LIVE_WAIT);
    expect(feed.retryButton).to.equal(null);
  });

  it('three tabs share one stream; notif-message-received fires once for the three', async () => {
    const sub = await uniqueSubscriber();
    for (let i = 0; i < 3; i++) tabs.push(await openTab(sub));
    await waitFor(async () => (await streamsOf(sub)) === 1, 'one stream');
    await triggerMany(workflowId, sub, 3, 'Arrival');
    await waitFor(() => tabs.every((t) => t.bell.badge === '3'), 'badge 3 in every tab', LIVE_WAIT);
    await waitFor(() => tabs.flatMap((t) => t.received).length >= 3, 'the three arrivals told', LIVE_WAIT);
    // (A tab telling one twice would do so within moments.)
    await new Promise((r) => setTimeout(r, 300));
    const received = tabs.flatMap((t) => t.received);
    expect(received).to.have.length(3);
    expect(new Set(received).size).to.equal(3);
    expect(await streamsOf(sub), 'still one stream').to.equal(1);
    expect(tabs.map(streamCalls).reduce((a, b) => a + b)).to.equal(1);
  });

  it('the leader tab closing hands the stream to another tab, with nothing missed', async () => {
    const sub = await uniqueSubscriber();
    tabs.push(await openTab(sub));
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the first tab leads');
    tabs.push(await openTab(sub), await openTab(sub));
    await trigger(workflowId, sub, { title: 'Before', body: 'b' });
    await waitFor(() => tabs.every((t) => t.bell.badge === '1'), 'badge 1 everywhere', LIVE_WAIT);
    await waitFor(() => tabs.some((t) => t.received.length), 'the first arrival told');
    const leader = tabs.shift()!;
    leader.frame.remove();
    // Made while no tab holds the stream (or just as the next one opens it).
    await trigger(workflowId, sub, { title: 'Meanwhile', body: 'b' });
    await waitFor(() => tabs.every((t) => t.bell.badge === '2'), 'badge 2 in the remaining tabs', LIVE_WAIT);
    await waitFor(async () => (await streamsOf(sub)) === 1, 'one stream again');
    await trigger(workflowId, sub, { title: 'After', body: 'b' });
    await waitFor(() => tabs.every((t) => t.bell.badge === '3'), 'badge 3', LIVE_WAIT);
    const told = () => [...leader.received, ...tabs.flatMap((t) => t.received)];
    await waitFor(() => told().length >= 3, 'the three arrivals told', LIVE_WAIT);
    await new Promise((r) => setTimeout(r, 300));
    const received = told();
    expect(received, 'each message told once').to.have.length(3);
    expect(new Set(received).size).to.equal(3);
  });

  it('a tab that asks to tell of a message only after the tab that told of it closed does not tell again', async () => {
    const sub = await uniqueSubscriber();
    const teller = await openTab(sub);
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the first tab leads');
    // A busy tab: its requests for an arrival's lock ("notif:" and the message's id) wait until released.
    const busy = await openTab(
      sub,
      '',
      `const request = navigator.locks.request.bind(navigator.locks);
      window.heldRequests = [];
      navigator.locks.request = (name, options, callback) => name.startsWith('notif:')
        ? new Promise((resolve) => heldRequests.push(() => resolve(request(name, options, callback))))
        : request(name, options, callback);`,
    );
    tabs.push(teller, busy);
    const held = (busy.frame.contentWindow as unknown as { heldRequests: (() => Promise<unknown>)[] }).heldRequests;
    await trigger(workflowId, sub, { title: 'Told once', body: 'b' });
    await waitFor(() => teller.received.length === 1 && held.length === 1, 'the leader told, the busy tab asking');
    teller.frame.remove();
    // The message's lock went with the tab that held it: the busy tab's request now finds it free.
    await Promise.all(held.map((ask) => ask()));
    await new Promise((r) => setTimeout(r, 300));
    expect(busy.received, 'told again by the busy tab').to.deep.equal([]);
  });

  it('the service stopped mid-stream and started again on the same database: the inbox recovers, each message once', async function () {
    this.timeout(60_000);
    const { apiKey } = await testServer();
    const base = await executeServerCommand<string, { action: string }>('notif-restartable', { action: 'start' });
    try {
      const call = async (path: string, body: unknown) => {
        const r = await fetch(base + path, { method: 'POST', headers: { authorization: `ApiKey ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        expect(r.status, path).to.be.within(200, 201);
      };
      await call('/v2/workflows', { workflowId: 'restart', name: 'restart', steps: [{ name: 'in-app', type: 'in_app', controlValues: { subject: '{{payload.title}}', body: 'b' } }] });
      await call('/v2/subscribers', { subscriberId: 'ada' });
      const streams = async () => (await (await fetch(`${base}/__streams`)).json()).open as number;
      const received: string[] = [];
      const el = await fixture<NotifBell>(html`<notif-bell base-url=${base} subscriber-id="ada" api-key=${apiKey} poll-interval=${NO_POLL} no-auto-seen
        @notif-message-received=${(e: CustomEvent) => received.push(e.detail.message.subject)}></notif-bell>`);
      const bell = new BellHarness(el);
      await waitFor(async () => (await streams()) === 1, 'the stream');
      await call('/v1/events/trigger', { name: 'restart', to: 'ada', payload: { title: 'Before' } });
      await waitFor(() => bell.badge === '1', 'badge 1');

      const stopped = performance.now();
      await executeServerCommand('notif-restartable', { action: 'stop' });
      expect(await executeServerCommand('notif-restartable', { action: 'start' })).to.equal(base);
      // The inbox's reconnects back off, each wait up to twice the one before: the next one comes
      // within about twice the time the service was away (longer on a busy machine, where it starts slowly).
      const reconnectWait = 8000 + 2 * (performance.now() - stopped);
      // Made before the inbox is back on the stream (it waits about a second first).
      await call('/v1/events/trigger', { name: 'restart', to: 'ada', payload: { title: 'Meanwhile 1' } });
      await call('/v1/events/trigger', { name: 'restart', to: 'ada', payload: { title: 'Meanwhile 2' } });
      await waitFor(() => bell.badge === '3', 'badge 3 after the restart', reconnectWait);
      await waitFor(async () => (await streams()) === 1, 'the stream again', reconnectWait);
      await call('/v1/events/trigger', { name: 'restart', to: 'ada', payload: { title: 'After' } });
      await waitFor(() => bell.badge === '4', 'badge 4', LIVE_WAIT);
      await waitFor(() => received.length >= 4, 'four arrivals told', LIVE_WAIT);
      await new Promise((r) => setTimeout(r, 300));
      expect(received).to.deep.equal(['Before', 'Meanwhile 1', 'Meanwhile 2', 'After']);
      const feed = await bell.open();
      await feed.loaded(4);
      expect(feed.subjects).to.deep.equal(['After', 'Meanwhile 2', 'Meanwhile 1', 'Before']);
    } finally {
      await executeServerCommand('notif-restartable', { action: 'stop' });
    }
  });

  it('a service without the stream (404) is polled, with no error shown', async () => {
    const sub = await uniqueSubscriber();
    await injectFault({ path: `${sub}/notifications/stream`, status: 404, times: 5 });
    const { baseUrl, apiKey } = await testServer();
    const errors: Event[] = [];
    const requests: string[] = [];
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval="1000"
      .fetch=${(u: RequestInfo | URL, i?: RequestInit) => (requests.push(String(u)), fetch(u, i))} @notif-error=${(e: Event) => errors.push(e)}></notif-bell>`);
    const bell = new BellHarness(el);
    await waitFor(() => requests.some((u) => u.includes('/notifications/stream')), 'the stream asked for');
    await trigger(workflowId, sub);
    await waitFor(() => bell.badge === '1', 'badge 1 by polling', LIVE_WAIT);
    await bell.open();
    const feed = bell.feed;
    await waitFor(() => feed.messages.length === 1, 'the feed');
    expect(errors).to.have.length(0);
    expect(feed.error).to.equal(null);
    expect(requests.filter((u) => u.includes('/notifications/stream')).length, 'asked once').to.equal(1);
  });

  it('a stream refused (401) while counts are answered is not asked for again: the inbox polls', async () => {
    // As a 401/403 stops polling: a service (or a proxy) that refuses the stream is not asked again
    // with backoff. The count asked at once answers here, so the inbox goes on polling, with no error.
    const sub = await uniqueSubscriber();
    await injectFault({ path: `${sub}/notifications/stream`, status: 401, times: 5 });
    const { baseUrl, apiKey } = await testServer();
    const requests: string[] = [];
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval="1000"
      .fetch=${(u: RequestInfo | URL, i?: RequestInit) => (requests.push(String(u)), fetch(u, i))}></notif-bell>`);
    const bell = new BellHarness(el);
    const streams = () => requests.filter((u) => u.includes('/notifications/stream')).length;
    const counts = () => requests.filter((u) => u.includes('/notifications/unseen')).length;
    await waitFor(() => streams() === 1, 'the stream asked for');
    // A reconnect would come within its first backoff (1 s at most) and at every count after it.
    const after = counts();
    await waitFor(() => counts() >= after + 3, 'three more polls', LIVE_WAIT);
    expect(streams(), 'asked once').to.equal(1);
    await trigger(workflowId, sub);
    await waitFor(() => bell.badge === '1', 'badge 1 by polling', LIVE_WAIT);
  });

  it('back online, a stream waiting for its backoff reconnects at once', async () => {
    // Four refusals in a row (503) put the next attempt 4 to 8 s away; the network coming back
    // (the window's `online`) wakes the inbox: one count, and the stream reopens with it.
    const sub = await uniqueSubscriber();
    await injectFault({ path: `${sub}/notifications/stream`, status: 503, times: 4 });
    const { baseUrl, apiKey } = await testServer();
    const requests: string[] = [];
    await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval=${NO_POLL}
      .fetch=${(u: RequestInfo | URL, i?: RequestInit) => (requests.push(String(u)), fetch(u, i))}></notif-bell>`);
    const streams = () => requests.filter((u) => u.includes('/notifications/stream')).length;
    const counts = () => requests.filter((u) => u.includes('/notifications/unseen')).length;
    // A refusal asks for one count and sets the next attempt's timer together (a count came first,
    // at connect): the fourth refusal is handled once five counts were asked for.
    await waitFor(() => streams() === 4 && counts() === 5, 'four refused attempts, each followed by a count', 15_000);
    expect(streams(), 'no fifth attempt yet').to.equal(4);
    const woke = performance.now();
    dispatchEvent(new Event('online'));
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the stream reopened', 3000);
    expect(performance.now() - woke, 'sooner than the backoff (4 s at least)').to.be.below(3000);
  });

  it('a subscriber the service does not know yet goes live with its first message', async () => {
    // The service answers 404 for an unknown subscriber, to the count and the stream alike: a new
    // user's inbox polls at its usual pace (no backoff) until the first message makes the
    // subscriber, and then holds the stream.
    const sub = `newcomer-${Math.random().toString(36).slice(2)}`;
    const { baseUrl, apiKey } = await testServer();
    const requests: string[] = [];
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval="1000"
      .fetch=${(u: RequestInfo | URL, i?: RequestInit) => (requests.push(String(u)), fetch(u, i))}></notif-bell>`);
    const bell = new BellHarness(el);
    const counts = () => requests.filter((u) => u.includes('/notifications/unseen')).length;
    await waitFor(() => counts() >= 3, 'counts at the usual pace while the subscriber is unknown', LIVE_WAIT);
    expect(requests.filter((u) => u.includes('/notifications/stream')), 'no stream asked for before a count answered').to.have.length(0);
    await trigger(workflowId, sub);
    await waitFor(() => bell.badge === '1', 'badge 1 by polling', LIVE_WAIT);
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the stream opened', LIVE_WAIT);
    const polled = counts();
    await trigger(workflowId, sub);
    await waitFor(() => bell.badge === '2', 'badge 2 by the stream', LIVE_WAIT);
    expect(counts(), 'no poll once live').to.equal(polled);
  });

  it('every tab hidden: the stream closes after 60 s; shown again, one count request and it reopens', async () => {
    const clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], shouldAdvanceTime: true });
    const show = (state: 'visible' | 'hidden') => {
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
      document.dispatchEvent(new Event('visibilitychange', { bubbles: true })); // as the browser fires it
    };
    try {
      const sub = await uniqueSubscriber();
      const { baseUrl, apiKey } = await testServer();
      const requests: string[] = [];
      const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval=${NO_POLL}
        .fetch=${(u: RequestInfo | URL, i?: RequestInit) => (requests.push(String(u)), fetch(u, i))}></notif-bell>`);
      await waitFor(async () => (await streamsOf(sub)) === 1, 'the stream');
      show('hidden');
      await clock.tickAsync(30_000);
      expect(await streamsOf(sub), 'kept for a quick look elsewhere').to.equal(1);
      await clock.tickAsync(31_000);
      await waitFor(async () => (await streamsOf(sub)) === 0, 'closed after 60 s hidden');
      const before = requests.length;
      await trigger(workflowId, sub);
      await clock.tickAsync(5 * 60_000);
      expect(requests.length, 'no request while hidden').to.equal(before);
      show('visible');
      await waitFor(async () => (await streamsOf(sub)) === 1, 'reopened');
      await waitFor(() => new BellHarness(el).badge === '1', 'the count');
      const since = requests.slice(before);
      expect(since.filter((u) => u.includes('/notifications/unseen')), 'one count request').to.have.length(1);
      expect(since.filter((u) => u.includes('/notifications/stream'))).to.have.length(1);
    } finally {
      clock.restore();
      show('visible');
    }
  });

  it('live="poll" never opens the stream', async () => {
    const sub = await uniqueSubscriber();
    tabs.push(await openTab(sub, 'live="poll"'));
    await waitFor(() => countCalls(tabs[0]!) >= 1, 'the first count');
    await new Promise((r) => setTimeout(r, 300));
    expect(streamCalls(tabs[0]!)).to.equal(0);
    expect(await streamsOf(sub)).to.equal(0);
  });

  it('through the proxy: streams for the hashed subscriber, refuses another', async () => {
    const { proxyPath } = await testServer();
    const sub = await uniqueSubscriber();
    const other = await uniqueSubscriber();
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${proxyPath} subscriber-id=${sub} subscriber-hash=${await subscriberHash(sub)} poll-interval=${NO_POLL}></notif-bell>`);
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the stream through the proxy');
    await trigger(workflowId, sub);
    await waitFor(() => new BellHarness(el).badge === '1', 'badge 1 through the proxy', LIVE_WAIT);

    const errors: Event[] = [];
    await fixture<NotifBell>(html`<notif-bell base-url=${proxyPath} subscriber-id=${other} subscriber-hash=${await subscriberHash(sub)} poll-interval=${NO_POLL}
      @notif-error=${(e: Event) => errors.push(e)}></notif-bell>`);
    await waitFor(() => errors.length > 0, 'the refusal');
    expect(await streamsOf(other)).to.equal(0);
  });

  it('a feed filtered by feed identifier: arrivals it does not show raise the badge only (no pill, not seen); notif-message-received fires for every message', async () => {
    const sub = await uniqueSubscriber();
    const billing = await createWorkflow({ inApp: { subject: '{{payload.title}}', body: 'b', feedIdentifier: 'billing' } });
    const news = await createWorkflow({ inApp: { subject: '{{payload.title}}', body: 'n', feedIdentifier: 'news' } });
    await triggerMany(billing, sub, 20, 'Bill');
    const tab = await openTab(sub, 'feed-identifier="billing"');
    tabs.push(tab);
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the stream');
    await tab.bell.open();
    const feed = tab.bell.feed;
    await waitFor(() => feed.loadedIds.length === 20 && feed.messages.length > 3, '20 messages loaded, rows shown');
    await waitFor(() => tab.bell.badge === null, 'seen on open');
    const panel = feed.root.querySelector<HTMLElement>('#panel')!;
    panel.scrollTop = 600;
    await waitFor(() => panel.scrollTop > 0, 'scrolled');
    // The list window lays out a scroll in the next frame (and knows the list is scrolled from then).
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const pill = () => feed.root.querySelector<HTMLButtonElement>('[part~="new-button"]');

    await triggerMany(news, sub, 2, 'News');
    await waitFor(() => tab.received.length === 2, 'notif-message-received for both', LIVE_WAIT);
    await waitFor(() => tab.bell.badge === '2', 'the badge counts them: the popover does not show them', LIVE_WAIT);
    await new Promise((r) => setTimeout(r, 500));
    expect(pill(), 'no "new" button').to.equal(null);
    expect(feed.loadedIds.length, 'the feed shows none of them').to.equal(20);
    expect(tab.bell.badge).to.equal('2');

    await trigger(billing, sub, { title: 'Bill fresh' });
    await waitFor(() => pill()?.textContent === '1 new notification', 'the "1 new" button for the feed\'s own message', LIVE_WAIT);
    await waitFor(() => tab.bell.badge === '2', 'its own message seen, the others still counted', LIVE_WAIT);
    await waitFor(() => tab.received.length === 3, 'notif-message-received for the third', LIVE_WAIT);
  });

  /** A live bell's popover open on 20 messages of `workflow`, its panel scrolled down and laid out. */
  async function scrolledPopover(workflow: string) {
    const open = await livePopover(workflow);
    return { ...open, panel: await scrollDown(open.feed) };
  }

  /** A live bell (its requests through `fetch`, when given) with its popover open on 20 messages of `workflow`. */
  async function livePopover(workflow: string, fetch?: typeof globalThis.fetch) {
    const sub = await uniqueSubscriber();
    await triggerMany(workflow, sub, 20, 'Old');
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval=${NO_POLL} .fetch=${fetch}></notif-bell>`);
    const bell = new BellHarness(el);
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the stream');
    await bell.open();
    const feed = bell.feed;
    await waitFor(() => feed.loadedIds.length === 20 && feed.messages.length > 3, '20 messages loaded, rows shown');
    return { sub, bell, feed };
  }

  /** Scrolls the popover's panel down and lets the list window lay it out; the panel. */
  async function scrollDown(feed: FeedHarness) {
    const panel = feed.root.querySelector<HTMLElement>('#panel')!;
    panel.scrollTop = 600;
    await waitFor(() => panel.scrollTop > 0, 'scrolled');
    // The list window lays out a scroll in the next frame (and knows the list is scrolled from then).
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return panel;
  }

  it('a feed scrolled down shows "N new" for messages arriving above, and it scrolls up to them', async () => {
    const { sub, bell, feed, panel } = await scrolledPopover(workflowId);
    const pill = () => feed.root.querySelector<HTMLButtonElement>('[part~="new-button"]');
    expect(pill()).to.equal(null);
    const firstVisible = () => feed.messages.find((m) => m.el.getBoundingClientRect().top >= panel.getBoundingClientRect().top)?.subject;
    const reading = await waitFor(firstVisible, 'rows in view after the scroll');
    await triggerMany(workflowId, sub, 2, 'Fresh');
    await waitFor(() => pill()?.textContent === '2 new notifications', 'the "2 new" button', LIVE_WAIT);
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    expect(firstVisible(), 'what the person reads stays in place').to.equal(reading);
    expect(bell.badge, 'seen while the popover shows them').to.equal(null);
    // Pressed from the keyboard: the button goes once the top is in view, so focus must go on with
    // the reader, to the newest message, not fall back to the page.
    pill()!.focus();
    pill()!.click();
    await waitFor(() => panel.scrollTop === 0, 'scrolled to the top');
    await waitFor(() => !pill(), 'the button goes');
    expect(feed.messages[0]!.subject).to.equal('Fresh 1');
    await waitFor(() => feed.messages[0]!.root.activeElement === feed.messages[0]!.link, 'the newest message focused');
  });

  it('a page feed scrolled down shows "N new", and it brings the page back to the newest message, focused', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 20, 'Old');
    const { baseUrl, apiKey } = await testServer();
    const wrap = await fixture<HTMLElement>(html`<div><p style="block-size: 300px; margin: 0">Above the feed</p>
      <notif-feed base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval=${NO_POLL}></notif-feed>
      <p style="block-size: 2000px">Below</p></div>`);
    const feed = new FeedHarness(wrap.querySelector<NotifFeed>('notif-feed')!);
    await waitFor(async () => (await streamsOf(sub)) === 1, 'the stream');
    await waitFor(() => feed.loadedIds.length === 20 && feed.messages.length > 3, '20 messages loaded, rows shown');
    const pill = () => feed.root.querySelector<HTMLButtonElement>('[part~="new-button"]');
    try {
      window.scrollTo(0, 900);
      await waitFor(() => window.scrollY > 0, 'the page scrolled');
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      await triggerMany(workflowId, sub, 2, 'Fresh');
      await waitFor(() => pill()?.textContent === '2 new notifications', 'the "2 new" button', LIVE_WAIT);
      pill()!.focus();
      pill()!.click();
      await waitFor(() => !pill(), 'the button goes');
      const first = feed.messages[0]!;
      expect(first.subject).to.equal('Fresh 1');
      await waitFor(() => first.root.activeElement === first.link, 'the newest message focused');
      const top = first.el.getBoundingClientRect().top;
      expect(top, 'the newest message in view').to.be.within(-2, innerHeight - 20);
    } finally {
      window.scrollTo(0, 0);
    }
  });

  it('"N new" counts messages arriving above in the feed\'s order, when they share their createdAt with the first one shown', async () => {
    // A server stamping coarsely (a spec server's createdAt in seconds, messages of one trigger made
    // together): the feed orders equal times by _id (newest first), and what arrives above the first
    // message shown is new even when made at the same time. Here every createdAt the element reads is
    // made equal, the service's answers and stream edited through the element's fetch.
    const stamp = (text: string) => text.replace(/"createdAt":"[^"]*"/g, '"createdAt":"2026-01-01T00:00:00.000Z"');
    const coarse = async (u: RequestInfo | URL, i?: RequestInit) => {
      const res = await fetch(u, i);
      if (!res.ok) return res;
      const body = String(u).includes('/notifications/stream')
        ? res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new TransformStream<string, string>({ transform: (c, out) => out.enqueue(stamp(c)) })).pipeThrough(new TextEncoderStream())
        : stamp(await res.text());
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const { sub, feed } = await livePopover(workflowId, coarse);
    expect(feed.messages[0]!.subject, 'equal times: the newest first by _id').to.equal('Old 19');
    await scrollDown(feed);
    const pill = () => feed.root.querySelector<HTMLButtonElement>('[part~="new-button"]');
    await triggerMany(workflowId, sub, 2, 'Fresh');
    await waitFor(() => feed.loadedIds.length === 22, 'the two new messages loaded', LIVE_WAIT);
    await waitFor(() => pill()?.textContent === '2 new notifications', 'the "2 new" button');
  });

  /**
   * A page feed of 30 messages, every other one read (All shows 15 read ones among the Unread tab's
   * 15), with a bell on the same store, in a page long enough to scroll; on the Unread tab, the page
   * scrolled down past the feed's top.
   */
  async function halfReadPageFeed() {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 30, 'Msg');
    const client = await api();
    const { data } = await client.feed(sub, { limit: 30 });
    await client.markAs(sub, { messageId: data.filter((_, i) => i % 2 == 0).map((m) => m._id), markAs: 'read' });
    const { baseUrl, apiKey } = await testServer();
    const wrap = await fixture<HTMLElement>(html`<div><notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval=${NO_POLL} page-size="30"></notif-bell>
      <p style="block-size: 300px; margin: 0">Above the feed</p>
      <notif-feed base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} poll-interval=${NO_POLL} page-size="30"></notif-feed>
      <p style="block-size: 3000px">Below</p></div>`);
    const feed = new FeedHarness(wrap.querySelector<NotifFeed>('notif-feed')!);
    await waitFor(() => feed.loadedIds.length === 30 && feed.messages.length > 3, '30 messages loaded, rows shown');
    const tabs = () => [...feed.root.querySelectorAll<HTMLButtonElement>('.tab')];
    const pill = () => feed.root.querySelector<HTMLButtonElement>('[part~="new-button"]');
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    tabs()[1]!.click();
    await waitFor(() => tabs()[1]!.getAttribute('aria-selected') === 'true', 'the Unread tab');
    window.scrollTo(0, 900);
    await waitFor(() => window.scrollY > 0, 'the page scrolled');
    await frames();
    return { sub, wrap, feed, tabs, pill, frames, bell: wrap.querySelector<NotifBell>('notif-bell')! };
  }

  it('a page feed switched from Unread to All while scrolled down counts no read message as new', async () => {
    const { sub, tabs, pill, frames, feed } = await halfReadPageFeed();
    try {
      tabs()[0]!.click();
      await waitFor(() => tabs()[0]!.getAttribute('aria-selected') === 'true', 'the All tab');
      // The All tab's first page shown before anything arrives: loaded after the arrivals, it would
      // hold them already, and nothing would be new.
      await waitFor(() => feed.loadedIds.length === 30 && feed.messages.length > 0, "the All tab's 30 messages");
      await frames();
      // (Its text, not the element: chai's message for an element of a shadow tree took minutes.)
      expect(pill()?.textContent ?? null, 'no "new" button: nothing arrived').to.equal(null);
      // Arrivals after the switch are counted against the All tab's own first message.
      await triggerMany(workflowId, sub, 2, 'Fresh');
      await waitFor(() => pill()?.textContent === '2 new notifications', 'the "2 new" button', LIVE_WAIT);
    } finally {
      window.scrollTo(0, 0);
    }
  });

  it('a page feed taken out of the page while another element switches the tab, and put back, counts no read message as new', async () => {
    const { wrap, feed, pill, frames, bell } = await halfReadPageFeed();
    const el = feed.el;
    const store = (bell as unknown as { inbox: InboxStoreApi }).inbox;
    try {
      // Out of the page (as a router that keeps it alive does), the bell on its store switches to All; then back.
      const place = el.nextSibling;
      el.remove();
      store.setTab('all');
      await waitFor(() => store.state.loaded && store.state.tab === 'all', "the All tab's first page");
      wrap.insertBefore(el, place);
      // Scrolled once the feed has its list again: scrolled before, the page's view would be on the
      // content below the short feed, and the browser's scroll anchoring keeps it there as the list
      // grows back, past the list's end.
      await waitFor(() => feed.messages.length > 0, 'rows shown again');
      window.scrollTo(0, 900);
      await waitFor(() => window.scrollY > 0 && feed.messages.length > 3, 'the page scrolled, rows shown');
      await frames();
      expect(pill()?.textContent ?? null, 'no "new" button: nothing arrived').to.equal(null);
    } finally {
      window.scrollTo(0, 0);
    }
  });

  it('the "N new" button stays above the rows scrolling under it, their CTA buttons too', async () => {
    const withButtons = await createWorkflow({
      inApp: { subject: '{{payload.title}}', body: 'b', primaryAction: { label: 'Accept' }, secondaryAction: { label: 'Decline' } } as never,
    });
    const { sub, feed, panel } = await scrolledPopover(withButtons);
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await triggerMany(withButtons, sub, 2, 'Fresh');
    const pill = await waitFor(() => feed.root.querySelector<HTMLButtonElement>('[part~="new-button"]'), 'the "2 new" button', LIVE_WAIT);
    // Every point of the button is the button's, wherever the rows are under it (a row's CTA buttons
    // are raised above the row's own link: the button must be above them).
    const covered: string[] = [];
    for (let top = 400; top < 800; top += 8) {
      panel.scrollTop = top;
      await frames();
      const r = pill.getBoundingClientRect();
      for (const x of [r.left + 4, r.left + r.width / 2, r.right - 4])
        if (feed.root.elementFromPoint(x, r.top + r.height / 2) !== pill) covered.push(`${top}: ${Math.round(x)}`);
    }
    expect(covered, 'points of the button covered by a row').to.deep.equal([]);
  });
});
