import { expect, fixture, fixtureCleanup, html, oneEvent } from '@open-wc/testing';
import '../../src/index.ts';
import type { MessageActions, MessageRenderer, NotifBell, NotifFeed } from '../../src/index.ts';
import type { Message } from '../../src/api/types.ts';
import { BellHarness, FeedHarness, waitFor } from './harness.ts';
import { api, createWorkflow, injectFault, testServer, trigger, triggerMany, uniqueSubscriber } from './server.ts';

// An app's own rendering: renderMessage and the finer hooks (light-DOM hosts slotted into the rows),
// and the state slots, against the real service.

/** A renderer that writes the app's own row and counts its renders and cleanups. */
function appRow() {
  const log = { renders: [] as string[], cleanups: [] as string[], actions: new Map<string, MessageActions>() };
  const render: MessageRenderer = (host, m, actions) => {
    log.renders.push(m._id);
    log.actions.set(m._id, actions);
    const row = document.createElement('div');
    row.className = 'app-row';
    row.textContent = `${m.subject} (${m.read ? 'read' : 'new'})`;
    const del = document.createElement('button');
    del.textContent = 'Remove';
    del.onclick = () => void actions.remove();
    host.append(row, del);
    return () => log.cleanups.push(m._id);
  };
  return { log, render };
}

/** The light-DOM host shown in a row's slot (through the feed's, and the bell's, slots). */
const hostIn = (row: Element, name = 'message') =>
  row.shadowRoot!.querySelector<HTMLSlotElement>(`slot[name="${name}"]`)?.assignedElements({ flatten: true })[0] as HTMLElement | undefined;
/** The app's content in a row's slot. */
const slotted = (row: Element, name = 'message') => [...(hostIn(row, name)?.children ?? [])];

describe('custom rendering', () => {
  let workflowId: string;
  let ctaWorkflowId: string;
  const style = document.createElement('style');
  before(async () => {
    style.textContent = '.app-row { color: rgb(1, 2, 3); }';
    document.head.append(style);
    workflowId = await createWorkflow();
    ctaWorkflowId = await createWorkflow({
      inApp: { subject: '{{payload.title}}', body: 'Body of {{payload.title}}', primaryAction: { label: 'Accept', resultContent: 'Accepted' } } as never,
    });
  });
  after(() => style.remove());
  afterEach(async () => {
    fixtureCleanup();
    await new Promise((r) => setTimeout(r, 0));
  });

  /** A feed of two messages, each rendered by the app's renderMessage once. */
  async function twoAppRows() {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 2);
    const { log, render } = appRow();
    const feed = await feedFor(sub, { renderMessage: render });
    await feed.loaded(2);
    await waitFor(() => log.renders.length === 2, 'two renders');
    return { sub, log, feed };
  }

  async function feedFor(subscriberId: string, set: Partial<Record<'renderMessage' | 'renderSubject' | 'renderBody' | 'renderAvatar' | 'renderActions', MessageRenderer>>) {
    const { baseUrl, apiKey } = await testServer();
    const el = await fixture<NotifFeed>(html`<notif-feed base-url=${baseUrl} subscriber-id=${subscriberId} api-key=${apiKey}></notif-feed>`);
    Object.assign(el, set);
    return new FeedHarness(el);
  }

  it('renderMessage: light-DOM hosts with the page CSS, actions that change the server, cleanup when a row goes', async () => {
    const { sub, log, feed } = await twoAppRows();
    const rows = feed.messages.map((m) => m.el);
    const content = slotted(rows[0]!);
    expect(content.map((e) => e.className)).to.deep.equal(['app-row', '']);
    expect(content[0]!.textContent).to.equal('Message 1 (new)');
    expect(hostIn(rows[0]!)!.parentElement, 'the host is a child of the feed').to.equal(feed.el);
    expect(getComputedStyle(content[0]!).color, 'the page CSS applies').to.equal('rgb(1, 2, 3)');
    expect(feed.messages[0]!.unread, 'the unread dot stays').to.equal(true);

    // markRead: the server has it, the row is rendered again with the new message (after a cleanup).
    const id = rows[0]!.message!._id;
    const changed = oneEvent(feed.el, 'notif-read-change');
    await log.actions.get(id)!.markRead();
    expect((await changed).detail).to.deep.equal({ messageIds: [id], read: true });
    const server = await (await api()).feed(sub, { limit: 10 });
    expect(server.data.find((m: Message) => m._id === id)!.read).to.equal(true);
    await waitFor(() => slotted(feed.messages[0]!.el)[0]?.textContent === 'Message 1 (read)', 'rendered as read');
    // Every render but the shown rows' has been cleaned up.
    const balanced = (shown: number) => expect(log.renders.length - log.cleanups.length).to.equal(shown);
    expect(log.cleanups.length).to.be.greaterThan(0);
    expect(log.cleanups.every((c) => c === id)).to.equal(true);
    balanced(2);
    expect(feed.messages[0]!.unread).to.equal(false);

    // The app's own delete button: the row leaves, its cleanup runs, its host is gone.
    const other = rows[1]!.message!._id;
    (slotted(feed.messages[1]!.el)[1] as HTMLButtonElement).click();
    await waitFor(() => feed.messages.length === 1, 'one row left');
    await feed.el.updateComplete;
    // (The first row may be rendered again meanwhile: the server's answer to its mark-read, refetched,
    // carries more than the optimistic change, such as its read date.)
    expect(log.cleanups).to.include(other);
    balanced(1);
    await waitFor(async () => (await (await api()).feed(sub, { limit: 10 })).data.map((m: Message) => m._id).join() === id, 'deleted on the server');
    expect(feed.el.querySelectorAll('[slot^="notif-"]')).to.have.length(1);

    // Removing the feed cleans up the rest.
    feed.el.remove();
    expect(log.cleanups.at(-1)).to.equal(id);
    balanced(0);
    expect(feed.el.querySelectorAll('[slot^="notif-"]')).to.have.length(0);
  });

  it('a message arriving (the stream, a first-page refresh) renders its row alone: the unchanged rows are not rendered again', async () => {
    const { sub, log, feed } = await twoAppRows();
    const first = [...log.renders];
    const { baseUrl } = await testServer();
    const { _id } = await (await api()).getSubscriber(sub);
    await waitFor(async () => (await (await fetch(`${baseUrl}/__streams`)).json()).bySubscriber[_id], 'the stream to open');
    await trigger(workflowId, sub, { title: 'Fresh', body: 'news' });
    await waitFor(() => feed.messages.length === 3 && slotted(feed.messages[0]!.el)[0]?.textContent === 'Fresh (new)', 'the new row');
    await feed.el.updateComplete;
    expect(log.renders.slice(2), 'only the new message rendered').to.deep.equal([feed.messages[0]!.id]);
    expect(log.cleanups, 'no row cleaned up').to.deep.equal([]);
    expect(feed.messages.slice(1).map((m) => m.id)).to.deep.equal(first);
  });

  it('keyboard, focus and unread semantics around custom rows; open() fires the click event', async () => {
    const { feed } = await twoAppRows();
    const [first, second] = feed.messages;
    expect(first!.root.querySelector('.sr-only')!.textContent).to.contain('Unread');
    expect(first!.link.tabIndex).to.equal(0);
    expect(second!.link.tabIndex).to.equal(-1);
    first!.el.focus();
    expect(first!.root.activeElement).to.equal(first!.link);
    // ArrowDown from the app's own button inside the row moves to the next row.
    const button = slotted(first!.el)[1] as HTMLButtonElement;
    button.focus();
    button.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true, composed: true }));
    // The windowed list focuses the next row once it is laid out (it may have been unrendered).
    await waitFor(() => second!.root.activeElement === second!.link, 'the next row focused');
    await feed.el.updateComplete;
    expect(second!.link.tabIndex).to.equal(0);
    // Enter on the row opens the message: marked read, click event (cancelable).
    const clicked = oneEvent(feed.el, 'notif-message-click');
    second!.link.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, composed: true }));
    const e = await clicked;
    expect(e.detail.message._id).to.equal(second!.id);
    e.preventDefault();
    await waitFor(() => !feed.messages[1]!.unread, 'read after open');
    await expect(feed.el).to.be.accessible();
  });

  it('the finer hooks replace subject, body, avatar and actions; unset, the row is as before', async () => {
    const sub = await uniqueSubscriber();
    await trigger(ctaWorkflowId, sub, { title: 'Invite' });
    const seen: string[] = [];
    const text = (what: string): MessageRenderer => (host, m) => {
      seen.push(what);
      host.textContent = `${what}: ${m.subject}`;
      host.className = `app-${what}`;
    };
    let act: MessageActions | undefined;
    const feed = await feedFor(sub, {
      renderSubject: text('subject'),
      renderBody: text('body'),
      renderAvatar: text('avatar'),
      renderActions: (host, m, actions) => {
        act = actions;
        host.textContent = `actions of ${m.subject}`;
      },
    });
    await feed.loaded(1);
    await waitFor(() => act, 'the actions hook');
    const row = feed.messages[0]!;
    for (const name of ['subject', 'body', 'avatar']) {
      expect(hostIn(row.el, name)?.textContent, name).to.equal(`${name}: Invite`);
    }
    expect(hostIn(row.el, 'actions')!.textContent).to.equal('actions of Invite');
    expect(row.buttons.some((b) => b.checkVisibility()), 'the CTA buttons give way').to.equal(false);
    expect(row.link.contains(row.root.querySelector('slot[name="subject"]')), 'the subject stays inside the control that opens').to.equal(true);

    const acted = oneEvent(feed.el, 'notif-action');
    await act!.action('primary');
    expect((await acted).detail.button).to.equal('primary');
    const server = (await (await api()).feed(sub, { limit: 10 })).data[0]!;
    expect(server.cta!.action!.status).to.equal('done');

    // Hooks unset: the built-in row again, no hosts left.
    Object.assign(feed.el, { renderSubject: undefined, renderBody: undefined, renderAvatar: undefined, renderActions: undefined });
    await feed.el.updateComplete;
    expect(feed.el.querySelectorAll('[slot^="notif-"]')).to.have.length(0);
    expect(feed.messages[0]!.subject).to.equal('Invite');
    expect(feed.messages[0]!.result).to.equal('Accepted');
  });

  it('a renderer that returns false leaves that message (or piece) to the built-in rendering', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 2);
    const asked: string[] = [];
    // Lit (in dev mode) warns when an element's update schedules another: a declined row re-renders alone.
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => (warnings.push(args.join(' ')), warn.apply(console, args));
    try {
      const feed = await feedFor(sub, {
        renderMessage: (host, m) => {
          asked.push(m.subject!);
          if (m.subject === 'Message 0') return false;
          host.textContent = 'mine';
        },
        renderBody: () => false,
      });
      await feed.loaded(2);
      await waitFor(() => feed.messages[1]!.subject === 'Message 0', 'the built-in row');
      expect(feed.messages.map((m) => m.el.custom)).to.deep.equal([true, false]);
      expect(hostIn(feed.messages[0]!.el)!.textContent).to.equal('mine');
      expect(feed.messages[1]!.body).to.equal('body 0');
      expect(feed.el.querySelectorAll('[slot^="notif-"]')).to.have.length(1);
      await feed.el.updateComplete;
      expect(asked.filter((s) => s === 'Message 0'), 'asked once per message').to.have.length(1);
    } finally {
      console.warn = warn;
    }
    expect(warnings.filter((w) => w.includes('change-in-update')), 'no update scheduled by an update').to.deep.equal([]);
  });

  it('<notif-bell>: hosts are the bell\'s children while the popover shows their rows', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 2);
    const { baseUrl, apiKey } = await testServer();
    const { log, render } = appRow();
    const el = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-bell>`);
    el.renderMessage = render;
    const bell = new BellHarness(el);
    const feed = await bell.open();
    await feed.loaded(2);
    await waitFor(() => feed.messages.every((m) => slotted(m.el)[0]?.className === 'app-row'), 'app rows through both slots');
    expect(el.querySelectorAll(':scope > [slot^="notif-message-"]')).to.have.length(2);
    expect(getComputedStyle(slotted(feed.messages[0]!.el)[0]!).color).to.equal('rgb(1, 2, 3)');
    await bell.pressEscape();
    await el.updateComplete;
    expect(log.cleanups.sort()).to.deep.equal([...log.renders].sort());
    expect(el.querySelectorAll('[slot^="notif-"]')).to.have.length(0);
  });

  it('an embedded feed out of view (below the fold of a scrolling container) and the bell\'s popover show every custom row', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(workflowId, sub, 4);
    const { baseUrl, apiKey } = await testServer();
    const { render } = appRow();
    // As the playground's states page: a card of fixed height far below what shows, never scrolled to.
    const box = await fixture<HTMLElement>(html`<div class="scroller"><div class="spacer"></div><notif-feed embedded base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-feed></div>`);
    box.prepend(Object.assign(document.createElement('style'), { textContent: '.scroller { block-size: 20rem; overflow: auto; } .spacer { block-size: 150vh; } .scroller notif-feed { block-size: 26rem; }' }));
    const el = box.querySelector('notif-feed')!;
    el.renderMessage = render;
    const feed = new FeedHarness(el);
    const appRows = (f: FeedHarness) => f.messages.filter((m) => slotted(m.el)[0]?.className === 'app-row').length;
    await waitFor(() => appRows(feed) === 4, 'four app rows in the feed out of view');
    expect(feed.messages.filter((m) => m.unread)).to.have.length(4);

    const bellEl = await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-bell>`);
    bellEl.renderMessage = render;
    const popover = await new BellHarness(bellEl).open();
    await waitFor(() => appRows(popover) === 4, 'four app rows in the popover');
  });

  it('slots for header actions, loading and error', async () => {
    const { baseUrl, apiKey } = await testServer();
    const sub = await uniqueSubscriber();
    await injectFault({ path: `/subscribers/${sub}/notifications/feed`, status: 503, times: 20 });
    const el = await fixture<NotifFeed>(html`<notif-feed base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}
      ><button slot="header-actions" id="settings">Settings</button><p slot="loading" id="wait">Wait…</p><p slot="error" id="oops">Oops</p></notif-feed
    >`);
    const feed = new FeedHarness(el);
    const assigned = (name: string) => feed.root.querySelector<HTMLSlotElement>(`slot[name="${name}"]`)?.assignedElements().map((e) => e.id);
    expect(assigned('header-actions')).to.deep.equal(['settings']);
    expect(assigned('loading')).to.deep.equal(['wait']);
    await waitFor(() => feed.error && assigned('error')?.[0] === 'oops', 'the error slot');
    expect(feed.retryButton, 'the retry stays').to.not.equal(null);
  });
});
