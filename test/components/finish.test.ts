import { expect, fixture, html, oneEvent } from '@open-wc/testing';
import { emulateMedia, resetMouse, sendKeys, sendMouse, setViewport } from '@web/test-runner-commands';
import sinon from 'sinon';
import '../../src/index.ts';
import { registerTranslation, type NotifBell, type NotifFeed, type NotifMessage, type Message } from '../../src/index.ts';
import de from '../../src/i18n/de.ts';
/** How long a message read in the Unread tab stays (LINGER in notif-feed.component.ts). */
const LINGER = 1500;
import { BellHarness, FeedHarness, MessageHarness, animationsDone, pretendVisible, waitFor } from './harness.ts';
import { api, createWorkflow, testServer, trigger, triggerMany, uniqueSubscriber } from './server.ts';

// What a new user trips on (issue 14), each as a person meets it: the popover, the rows, the keyboard,
// errors, times, German, motion and the dark theme.

/** The focused element, looking inside shadow roots. */
function active(): Element | null {
  let el = document.activeElement;
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
  return el;
}

const part = (root: Element, name: string) => root.shadowRoot!.querySelector<HTMLElement>(`[part~="${name}"]`)!;

/** WCAG relative luminance contrast of two `rgb(...)` colours. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = c.match(/[\d.]+/g)!.slice(0, 3).map((v) => {
      const s = +v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

describe('feels finished', () => {
  let plain: string;
  let cta: string;
  let restoreVisibility: () => void;

  before(async () => {
    restoreVisibility = pretendVisible();
    plain = await createWorkflow();
    cta = await createWorkflow({
      inApp: { subject: '{{payload.title}}', body: 'b', primaryAction: { label: 'Accept' }, secondaryAction: { label: 'Decline' } } as never,
    });
    await setViewport({ width: 1000, height: 800 });
  });
  after(() => restoreVisibility());

  /** A new subscriber with one message of `workflow`, and a <notif-feed> of theirs (embedded: as in a page of its own) once it shows it. */
  async function feedWithOne(workflow: string, payload: Record<string, string>, embedded = false) {
    const sub = await uniqueSubscriber();
    await trigger(workflow, sub, payload);
    const { baseUrl, apiKey } = await testServer();
    const feed = new FeedHarness(await fixture<NotifFeed>(html`<notif-feed ?embedded=${embedded} base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-feed>`));
    await feed.loaded(1);
    return { feed, sub };
  }

  async function bellFor(sub: string, attrs = '') {
    const { baseUrl, apiKey } = await testServer();
    const wrap = await fixture<HTMLElement>(html`<div>
      <input aria-label="elsewhere" />
      <notif-bell base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey} ?keep-open=${attrs == 'keep-open'}></notif-bell>
    </div>`);
    return new BellHarness(wrap.querySelector<NotifBell>('notif-bell')!);
  }

  it('closes the popover on a message click, whether the element follows it or the app routes itself; keep-open keeps it', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(plain, sub, 3);
    const bell = await bellFor(sub);
    let feed = await bell.open();
    await feed.loaded(3);
    feed.messages[0]!.link.focus();
    feed.messages[0]!.click();
    await waitFor(() => !bell.isOpen, 'closed after a click');
    expect(active(), 'focus back on the bell').to.equal(bell.button);

    // The app routes itself and moves focus to its page: the popover closes and leaves focus there.
    const input = bell.el.parentElement!.querySelector('input')!;
    const route = (e: Event) => (e.preventDefault(), input.focus());
    bell.el.addEventListener('notif-message-click', route);
    feed = await bell.open();
    await feed.loaded(3);
    feed.messages[1]!.click();
    await waitFor(() => !bell.isOpen, 'closed after a routed click');
    expect(active()).to.equal(input);
    bell.el.removeEventListener('notif-message-click', route);

    const kept = await bellFor(sub, 'keep-open');
    feed = await kept.open();
    await feed.loaded(3);
    feed.messages[2]!.click();
    await new Promise((r) => setTimeout(r, 100));
    expect(kept.isOpen).to.equal(true);
  });

  it('closes the popover after a CTA button that leads somewhere (the app routing it), and not after one that does not', async () => {
    const leads = await createWorkflow({
      inApp: { subject: '{{payload.title}}', body: 'b', primaryAction: { label: 'View', redirect: { url: '/orders/7' } }, secondaryAction: { label: 'Later' } } as never,
    });
    const sub = await uniqueSubscriber();
    await trigger(leads, sub);
    const bell = await bellFor(sub);
    // The app routes itself (an SPA): the element does not follow the URL.
    const routed: (string | null)[] = [];
    bell.el.addEventListener('notif-action', (e) => (e.preventDefault(), routed.push(e.detail.url)));
    let feed = await bell.open();
    await feed.loaded(1);
    await feed.messages[0]!.pressButton('Later');
    await new Promise((r) => setTimeout(r, 100));
    expect(bell.isOpen, 'a button with nowhere to go leaves it open').to.equal(true);
    await bell.el.hide();
    await trigger(leads, sub);
    feed = await bell.open();
    await feed.loaded(2);
    await feed.messages[0]!.pressButton('View');
    await waitFor(() => !bell.isOpen, 'closed after a CTA that leads somewhere');
    expect(routed).to.deep.equal([null, '/orders/7']);
  });

  it("shows the message's avatar, else the actor's initials or a neutral icon, in the theme's colours", async () => {
    const base = { _id: 'a1', createdAt: new Date().toISOString(), read: false, seen: false, content: 'x' };
    const el = await fixture<NotifMessage>(html`<notif-message style="--notif-color-border: rgb(1, 2, 3)" .message=${{ ...base, subject: 'Alan invited you to Bombe' } as Message}></notif-message>`);
    const m = new MessageHarness(el);
    expect(m.avatar!.textContent!.trim(), 'no initials invented from the subject').to.equal('');
    expect(m.avatar!.querySelector('svg')).to.not.equal(null);
    expect(getComputedStyle(m.avatar!).backgroundColor, 'the theme, not a fixed indigo').to.equal('rgb(1, 2, 3)');
    el.message = { ...base, subject: 'Invoice 42', payload: { actor: 'Grace Hopper' } } as Message;
    await el.updateComplete;
    expect(m.avatar!.textContent).to.equal('GH');
    el.message = { ...base, subject: 'Ping 3', payload: { actor: { name: 'Ada Lovelace' } } } as Message;
    await el.updateComplete;
    expect(m.avatar!.textContent).to.equal('AL');
  });

  it('an embedded feed on a page of its own has no close button (only the bell\'s popover has one)', async () => {
    const { feed } = await feedWithOne(plain, { title: 'One', body: 'x' }, true);
    expect(feed.root.querySelector('[part~="mark-all-button"]'), 'the header rendered').to.not.equal(null);
    expect(feed.root.querySelector('[part~="close-button"]')).to.equal(null);
  });

  it('a disabled "Mark all as read" does not light up under the pointer; an enabled control does', async () => {
    const { feed } = await feedWithOne(plain, { title: 'One', body: 'x' });
    const look = (el: Element) => `${getComputedStyle(el).color} ${getComputedStyle(el).backgroundColor}`;
    const hover = async (el: Element) => {
      const r = el.getBoundingClientRect();
      await sendMouse({ type: 'move', position: [Math.round(r.x + r.width / 2), Math.round(r.y + r.height / 2)] });
    };
    try {
      const all = feed.markAllButton;
      const enabledAtRest = look(all);
      await hover(all);
      expect(look(all), 'an enabled button lights up').to.not.equal(enabledAtRest);
      await resetMouse();
      all.click();
      await waitFor(() => all.disabled, 'every message read');
      const atRest = look(all);
      await hover(all);
      expect(look(all)).to.equal(atRest);
    } finally {
      await resetMouse();
    }
  });

  it('gives the row controls 24 px targets apart from each other, and keeps the time visible', async () => {
    const { feed } = await feedWithOne(plain, { title: 'One', body: 'x' });
    const m = feed.messages[0]!;
    m.controls[0]!.focus();
    const [a, b] = m.controls.map((c) => c.getBoundingClientRect());
    for (const r of [a!, b!]) expect(Math.min(r.width, r.height)).to.be.at.least(24);
    expect(Math.max(b!.left - a!.right, a!.left - b!.right), 'a gap between them').to.be.greaterThan(0);
    const time = part(m.el, 'time');
    expect(getComputedStyle(time).visibility).to.equal('visible');
    const t = time.getBoundingClientRect();
    expect(t.bottom <= a!.top || t.top >= a!.bottom, 'the time clear of the controls').to.equal(true);
  });

  it('marks a message read when its CTA is pressed, at once and on the server', async () => {
    const { feed, sub } = await feedWithOne(cta, { title: 'Invitation' });
    const read = oneEvent(feed.el, 'notif-read-change');
    await feed.message('Invitation').pressButton('Accept');
    expect((await read).detail.read).to.equal(true);
    await feed.el.updateComplete;
    expect(feed.message('Invitation').unread).to.equal(false);
    const client = await api();
    await waitFor(async () => {
      const [msg] = (await client.feed(sub, { page: 0, limit: 10 })).data;
      return msg?.read && msg.cta?.action?.status === 'done';
    }, 'read and done on the server');
  });

  it('empties the Unread tab on "Mark all as read", and lets a message read there leave after a moment', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(plain, sub, 2);
    const { baseUrl, apiKey } = await testServer();
    const feed = new FeedHarness(await fixture<NotifFeed>(html`<notif-feed base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-feed>`));
    await feed.loaded(2);
    await feed.selectTab('Unread');
    await feed.loaded(2);
    await feed.message('Message 1').control('Mark as read');
    expect(feed.subjects, 'still there for a moment').to.deep.equal(['Message 1', 'Message 0']);
    await waitFor(() => feed.messages.length === 1, 'the read one left', LINGER + 1000);
    await feed.markAllRead();
    await waitFor(() => feed.empty, 'the empty state');
    expect(feed.empty!.textContent).to.contain("You're all caught up");
  });

  it('reaches the messages with the first arrow key after Enter on the bell, and from the header', async () => {
    const sub = await uniqueSubscriber();
    await triggerMany(plain, sub, 2);
    const bell = await bellFor(sub);
    bell.button.focus();
    await sendKeys({ press: 'Enter' });
    await waitFor(() => bell.isOpen, 'open');
    const feed = await bell.feed.loaded(2);
    await sendKeys({ press: 'ArrowDown' });
    expect(active()).to.equal(feed.messages[0]!.link);
    await sendKeys({ press: 'ArrowDown' });
    expect(active()).to.equal(feed.messages[1]!.link);
    feed.markAllButton.focus();
    await sendKeys({ press: 'ArrowDown' });
    expect(active(), 'the message that held the tab stop').to.equal(feed.messages[1]!.link);
  });

  it('fits the popover to its content, leaves margins at 375 px and closes from its close button', async () => {
    const sub = await uniqueSubscriber();
    await trigger(plain, sub, { title: 'Only one', body: 'x' });
    try {
      const bell = await bellFor(sub);
      let feed = await bell.open();
      await feed.loaded(1);
      await animationsDone();
      const fitted = bell.popover.getBoundingClientRect().height;
      expect(fitted, 'no blank area under one message').to.be.lessThan(300);

      await bell.el.hide();
      await setViewport({ width: 375, height: 700 });
      feed = await bell.open();
      await feed.loaded(1);
      await animationsDone();
      const r = bell.popover.getBoundingClientRect();
      expect(r.left, 'margin on the left').to.be.at.least(4);
      expect(375 - r.right, 'margin on the right').to.be.at.least(4);
      expect(Math.abs(r.left - (375 - r.right))).to.be.lessThan(2);
      expect(document.documentElement.scrollWidth, 'nothing wider than the page').to.be.at.most(375);
      const close = part(feed.el, 'close-button');
      expect(close.getAttribute('aria-label')).to.equal('Close');
      close.click();
      await waitFor(() => !bell.isOpen, 'closed');
    } finally {
      await setViewport({ width: 1000, height: 800 });
    }
  });

  it('shows a translated error, with the detail in the console and the event', async () => {
    const { baseUrl } = await testServer();
    const warn = sinon.stub(console, 'warn');
    try {
      const el = await fixture<NotifFeed>(html`<notif-feed base-url=${baseUrl} subscriber-id="nobody" api-key="not-a-key"></notif-feed>`);
      const feed = new FeedHarness(el);
      const error = await oneEvent(el, 'notif-error');
      await waitFor(() => feed.error, 'the error state');
      expect(feed.error!.textContent).to.not.match(/API key|Failed to fetch|401/i);
      // Refused (401), not unreachable: people read that notifications are unavailable (nothing of
      // the key, nor a hint to check their connection); the developer reads the console.
      expect(feed.error!.textContent).to.contain('Notifications are unavailable right now');
      expect(feed.error!.textContent).to.not.contain('connection');
      expect(feed.retryButton, 'a retry').to.not.equal(null);
      expect(String(error.detail.error.message)).to.not.equal('');
      expect(warn.args.some((a) => a.includes(error.detail.error))).to.equal(true);
    } finally {
      warn.restore();
    }
  });

  it('shows compact times with the full date on hover and for screen readers, isolated in right-to-left pages', async () => {
    registerTranslation(de);
    const fourDays = new Date(Date.now() - 4 * 86400_000 - 60_000);
    const msg = { _id: 't1', createdAt: fourDays.toISOString(), read: false, seen: false, subject: 'S', content: 'x' } as Message;
    const wrap = await fixture<HTMLElement>(html`<div dir="rtl">
      <notif-message locale="en" .message=${msg}></notif-message><notif-message locale="de" .message=${msg}></notif-message>
    </div>`);
    const [en, deMsg] = [...wrap.querySelectorAll<NotifMessage>('notif-message')].map((el) => new MessageHarness(el));
    expect(en!.time).to.equal('4d');
    expect(deMsg!.time).to.equal('4 T');
    const time = part(en!.el, 'time');
    const full = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' }).format(fourDays);
    expect(time.title).to.equal(full);
    expect(en!.link.textContent, 'read with the link').to.contain(full);
    // The time reads left to right in a right-to-left page: its first character is its leftmost.
    const text = [...part(deMsg!.el, 'time').childNodes].find((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim())!;
    const range = document.createRange();
    const at = (i: number) => (range.setStart(text, i), range.setEnd(text, i + 1), range.getBoundingClientRect().left);
    expect(at(0)).to.be.lessThan(at(text.textContent!.length - 1));
  });

  it('keeps the German header on one line', async () => {
    registerTranslation(de);
    const sub = await uniqueSubscriber();
    await trigger(plain, sub);
    const { baseUrl, apiKey } = await testServer();
    const wrap = await fixture<HTMLElement>(html`<div>
      <notif-feed style="width: 360px" locale="en" base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-feed>
      <notif-feed style="width: 360px" locale="de" base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-feed>
    </div>`);
    const [en, deFeed] = [...wrap.querySelectorAll<NotifFeed>('notif-feed')].map((el) => new FeedHarness(el));
    await deFeed!.loaded(1);
    const height = (f: FeedHarness) => part(f.el, 'header').getBoundingClientRect().height;
    expect(deFeed!.markAllButton.title).to.equal('Alle gelesen');
    expect(height(deFeed!)).to.equal(height(en!));
    // Whole, not cut short with an ellipsis.
    const label = deFeed!.markAllButton.querySelector('span')!;
    expect(label.scrollWidth, 'the label fits').to.be.at.most(label.clientWidth);
  });

  it('enters briefly with --notif-duration, and not at all under reduced motion', async () => {
    const sub = await uniqueSubscriber();
    await trigger(plain, sub);
    const bell = await bellFor(sub);
    const feed = await bell.open();
    await feed.loaded(1);
    const row = part(feed.messages[0]!.el, 'row');
    expect(getComputedStyle(bell.popover).transitionDuration).to.contain('0.15s');
    expect(getComputedStyle(row).transitionDuration).to.equal('0.15s');
    bell.el.style.setProperty('--notif-duration', '40ms');
    expect(getComputedStyle(bell.popover).transitionDuration).to.contain('0.04s');
    await emulateMedia({ reducedMotion: 'reduce' });
    try {
      expect(getComputedStyle(bell.popover).transitionDuration).to.equal('0s');
      expect(getComputedStyle(row).transitionDuration).to.equal('0s');
    } finally {
      await emulateMedia({ reducedMotion: 'no-preference' });
    }
  });

  it('sets the dark popover apart from a dark page', async () => {
    const sub = await uniqueSubscriber();
    const { baseUrl, apiKey } = await testServer();
    const wrap = await fixture<HTMLElement>(html`<div style="background: rgb(13, 17, 23)">
      <notif-bell theme="dark" base-url=${baseUrl} subscriber-id=${sub} api-key=${apiKey}></notif-bell>
    </div>`);
    const bell = new BellHarness(wrap.querySelector('notif-bell')!);
    await bell.open();
    await animationsDone();
    const s = getComputedStyle(bell.popover);
    // The outermost edge: a ring in the shadow, else the border.
    const ring = /(rgba?\([^)]*\)) 0px 0px 0px 1px/.exec(s.boxShadow)?.[1] ?? s.borderTopColor;
    expect(contrast(ring, 'rgb(13, 17, 23)')).to.be.at.least(2);
  });
});
