import { expect, fixture, html } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import '../../src/index.ts';
import type { NotifBell, NotifFeed } from '../../src/index.ts';
import { BellHarness, FeedHarness, pretendVisible, waitFor } from './harness.ts';
import { createWorkflow, testServer, trigger, uniqueSubscriber } from './server.ts';

// The real keyboard (sendKeys types through the browser's protocol): the bell's dialog, the feed's
// tabs and list, and a message's own controls, walked without a mouse.

/** The focused element, looking inside shadow roots. */
function active(): Element | null {
  let el = document.activeElement;
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
  return el;
}

/** True when `el` is `container` or inside it, across shadow boundaries. */
function inside(el: Element | null, container: Element): boolean {
  for (let n: Node | null = el; n; n = n.parentNode ?? (n as ShadowRoot).host ?? null) if (n === container) return true;
  return false;
}

/** What a person would call the focused control. */
function name(el: Element | null): string {
  if (!el) return '(nothing)';
  const label = el.getAttribute('aria-label') ?? el.textContent?.replace(/\s+/g, ' ').trim() ?? '';
  return `${el.getAttribute('part') ?? el.localName}: ${label}`;
}

/** Presses a key, or a chord such as `Shift+Tab`. */
async function press(key: string) {
  const keys = key.split('+');
  const last = keys.pop()!;
  for (const k of keys) await sendKeys({ down: k });
  await sendKeys({ press: last });
  for (const k of keys.reverse()) await sendKeys({ up: k });
  await new Promise((r) => setTimeout(r, 30));
}

describe('keyboard', () => {
  let plain: string;
  let cta: string;
  let restoreVisibility: () => void;

  before(async () => {
    restoreVisibility = pretendVisible();
    plain = await createWorkflow();
    cta = await createWorkflow({
      inApp: { subject: '{{payload.title}}', body: 'b', primaryAction: { label: 'Accept' }, secondaryAction: { label: 'Decline' } } as never,
    });
  });
  after(() => restoreVisibility());

  it('opens the bell with Enter, keeps Tab inside the dialog both ways, closes with Escape and returns focus', async () => {
    const sub = await uniqueSubscriber();
    await trigger(plain, sub, { title: 'Older', body: 'x' });
    await trigger(cta, sub, { title: 'Invitation' });
    const { baseUrl, apiKey } = await testServer();
    const wrap = await fixture<HTMLElement>(html`<div>
      <button id="before">before</button>
      <notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-bell>
      <button id="after">after</button>
    </div>`);
    const bell = new BellHarness(wrap.querySelector<NotifBell>('notif-bell')!);
    await waitFor(() => bell.badge === '2', 'badge 2');
    wrap.querySelector<HTMLButtonElement>('#before')!.focus();

    await press('Tab');
    expect(active()).to.equal(bell.button);
    expect(bell.button.getAttribute('aria-haspopup')).to.equal('dialog');
    await press('Enter');
    await waitFor(() => bell.isOpen, 'open');
    expect(active(), 'focus moves into the dialog').to.equal(bell.popover);
    expect(bell.popover.getAttribute('role')).to.equal('dialog');
    expect(bell.popover.getAttribute('aria-label')).to.equal('Notifications');
    const feed = await bell.feed.loaded(2);
    await waitFor(() => !feed.markAllButton.disabled, 'mark-all enabled');

    // Forward: mark all, preferences, close, the selected tab, the first message (its link, read with its date, its
    // two CTA buttons, its read and delete controls), then around.
    const forward: string[] = [];
    for (let i = 0; i < 10; i++) {
      await press('Tab');
      expect(inside(active(), bell.popover), `Tab ${i + 1} stays in the dialog (${name(active())})`).to.equal(true);
      forward.push(name(active()));
    }
    expect(forward).to.deep.equal([
      'mark-all-button: Mark all as read',
      'preferences-button: Notification preferences',
      'close-button: Close',
      'tab tab-selected: All',
      name(feed.messages[0]!.link),
      'button button-primary: Accept',
      'button button-secondary: Decline',
      'read-button: Mark as read',
      'delete-button: Delete',
      'mark-all-button: Mark all as read',
    ]);
    // Backward from the first stop wraps to the last.
    await press('Shift+Tab');
    expect(name(active())).to.equal('delete-button: Delete');
    await press('Shift+Tab');
    expect(name(active())).to.equal('read-button: Mark as read');
    await press('Shift+Tab');
    expect(name(active())).to.equal('button button-secondary: Decline');

    await press('Escape');
    await waitFor(() => !bell.isOpen, 'closed');
    expect(active(), 'focus returns to the bell').to.equal(bell.button);
    expect(bell.button.getAttribute('aria-expanded')).to.equal('false');
  });

  it('walks the list with the arrows, Home and End (one tab stop), and opens with Enter and Space', async () => {
    const sub = await uniqueSubscriber();
    const link = await createWorkflow({ inApp: { subject: '{{payload.title}}', body: 'b', redirect: { url: '/elsewhere' } } as never });
    for (const title of ['Four', 'Three', 'Two']) await trigger(plain, sub, { title, body: 'x' });
    await trigger(link, sub, { title: 'One' });
    const { baseUrl, apiKey } = await testServer();
    const wrap = await fixture<HTMLElement>(html`<div>
      <notif-feed base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-feed><button id="after">after</button>
    </div>`);
    const feed = new FeedHarness(wrap.querySelector<NotifFeed>('notif-feed')!);
    await feed.loaded(4);
    const stops = () => feed.messages.filter((m) => m.link.tabIndex === 0).map((m) => m.subject);
    expect(stops(), 'one tab stop in the list').to.deep.equal(['One']);
    expect(feed.root.querySelector('[part~="list"]')!.getAttribute('role')).to.equal('list');

    feed.tabs[0]!.focus();
    await press('Tab');
    expect(active()).to.equal(feed.messages[0]!.link);
    const at = () => feed.messages.find((m) => m.link === active())?.subject;
    await press('ArrowDown');
    expect(at()).to.equal('Two');
    await press('ArrowDown');
    expect(at()).to.equal('Three');
    await press('End');
    expect(at()).to.equal('Four');
    await press('ArrowDown');
    expect(at(), 'stays on the last').to.equal('Four');
    await press('Home');
    expect(at()).to.equal('One');
    await press('ArrowUp');
    expect(at(), 'stays on the first').to.equal('One');
    await press('ArrowDown');
    expect(at()).to.equal('Two');
    expect(stops(), 'the tab stop follows focus').to.deep.equal(['Two']);

    // Tab leaves the list after the focused message's own controls.
    await press('Tab');
    expect(name(active())).to.equal('read-button: Mark as read');
    await press('Tab');
    expect(name(active())).to.equal('delete-button: Delete');
    await press('Tab');
    expect(active()).to.equal(wrap.querySelector('#after'));

    // Enter opens a message (a button), Space opens one that is a link.
    const clicks: string[] = [];
    feed.el.addEventListener('notif-message-click', (e) => {
      e.preventDefault();
      clicks.push(e.detail.message.subject ?? '');
    });
    await press('Shift+Tab');
    await press('Shift+Tab');
    await press('Shift+Tab');
    expect(at()).to.equal('Two');
    await press('Enter');
    await press('Home');
    expect(feed.messages[0]!.link.localName).to.equal('a');
    await press('Space');
    expect(clicks).to.deep.equal(['Two', 'One']);
    await waitFor(() => !feed.message('Two').unread && !feed.message('One').unread, 'opened messages read');
  });

  it('moves between tabs with the arrow keys (ARIA tabs), mirrored right-to-left', async () => {
    const sub = await uniqueSubscriber();
    await trigger(plain, sub, { title: 'Hello', body: 'x' });
    const { baseUrl, apiKey } = await testServer();
    for (const dir of ['ltr', 'rtl']) {
      const wrap = await fixture<HTMLElement>(html`<div dir=${dir}>
        <notif-feed base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-feed>
      </div>`);
      const feed = new FeedHarness(wrap.querySelector<NotifFeed>('notif-feed')!);
      await feed.loaded(1);
      const [all, unread] = feed.tabs as [HTMLElement, HTMLElement];
      const panel = feed.root.querySelector('[role="tabpanel"]')!;
      expect(all.getAttribute('aria-controls')).to.equal(panel.id);
      expect(panel.getAttribute('aria-labelledby')).to.equal(all.id);
      all.focus();
      await press(dir === 'ltr' ? 'ArrowRight' : 'ArrowLeft');
      await waitFor(() => active() === unread, `Unread focused (${dir})`);
      expect(unread.getAttribute('aria-selected')).to.equal('true');
      expect(all.getAttribute('aria-selected')).to.equal('false');
      expect([all.tabIndex, unread.tabIndex]).to.deep.equal([-1, 0]);
      expect(panel.getAttribute('aria-labelledby')).to.equal(unread.id);
      await press('Home');
      await waitFor(() => active() === all, 'Home: All');
      await press('End');
      await waitFor(() => active() === unread, 'End: Unread');
      await press('Home');
    }
  });

  it("marks a message read and unread with its control from the keyboard; Escape then closes the bell", async () => {
    const sub = await uniqueSubscriber();
    await trigger(plain, sub, { title: 'Hello', body: 'x' });
    const { baseUrl, apiKey } = await testServer();
    const bell = new BellHarness(await fixture<NotifBell>(html`<notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-bell>`));
    bell.button.focus();
    await press('Enter');
    const feed = await bell.feed.loaded(1);
    const message = feed.messages[0]!;
    message.el.focus();
    await press('Tab');
    expect(name(active())).to.equal('read-button: Mark as read');
    await press('Enter');
    await waitFor(() => !feed.messages[0]!.unread, 'read');
    expect(name(active()), 'focus stays on the control, now the other way').to.equal('read-button: Mark as unread');
    expect(bell.isOpen, 'the bell stays open').to.equal(true);
    await press('Space');
    await waitFor(() => feed.messages[0]!.unread, 'unread again');
    expect(name(active())).to.equal('read-button: Mark as read');
    await press('Tab');
    expect(name(active())).to.equal('delete-button: Delete');
    await press('Escape');
    await waitFor(() => !bell.isOpen, 'closed');
    expect(active()).to.equal(bell.button);
  });
});
