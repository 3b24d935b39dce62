// Harnesses: what a person sees and does with each element, so tests say `await bell.open()` instead
// of digging through shadow roots.
import type { NotifBell } from '../../src/components/notif-bell/notif-bell.component.ts';
import type { NotifFeed } from '../../src/components/notif-feed/notif-feed.component.ts';
import type { NotifMessage } from '../../src/components/notif-message/notif-message.component.ts';

/**
 * How long a test waits for what the stream (or a one-second poll) brings: generous, since CI machines
 * are slower and busier than a laptop; how fast it arrives is measured by bench/live.mjs, not by tests.
 */
export const LIVE_WAIT = 8000;

/** Resolves when `predicate` holds (polling every 20 ms of real time). */
export async function waitFor<T>(predicate: () => T | Promise<T>, message = 'condition', timeout = 5000): Promise<NonNullable<T>> {
  const start = performance.now();
  for (;;) {
    const value = await predicate();
    if (value) return value as NonNullable<T>;
    if (performance.now() - start > timeout) throw new Error(`timed out waiting for ${message}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Resolves when every finite animation on the page (popover entrance, badge pop) has finished. */
export async function animationsDone(): Promise<void> {
  const all: Animation[] = [];
  const walk = (root: Document | ShadowRoot) => {
    all.push(...root.getAnimations());
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document);
  const finite = all.filter((a) => a.effect?.getComputedTiming().iterations !== Infinity);
  await Promise.all(finite.map((a) => a.finished.catch(() => undefined)));
}

/**
 * The runner opens two test pages side by side in one window, so one of them is a background tab
 * (`document.visibilityState === 'hidden'`) where the store rightly does not poll. Tests of polling
 * behaviour pretend to be the visible tab; call the returned function to stop pretending.
 */
export function pretendVisible(): () => void {
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'visible' });
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => false });
  return () => {
    delete (document as { visibilityState?: unknown }).visibilityState;
    delete (document as { hidden?: unknown }).hidden;
  };
}

function shadow(el: Element): ShadowRoot {
  if (!el.shadowRoot) throw new Error(`<${el.localName}> has no shadow root`);
  return el.shadowRoot;
}

export class MessageHarness {
  constructor(readonly el: NotifMessage) {}

  get root() {
    return shadow(this.el);
  }
  get id() {
    return this.el.message?._id ?? '';
  }
  get subject() {
    return this.root.querySelector('[part~="subject"]')?.textContent?.trim() ?? '';
  }
  get body() {
    return this.root.querySelector('[part~="body"]')?.textContent ?? '';
  }
  get unread() {
    return !!this.root.querySelector('[part~="unread-dot"]');
  }
  get link(): HTMLElement {
    return this.root.querySelector<HTMLElement>('[part~="link"]')!;
  }
  get buttons(): HTMLButtonElement[] {
    return [...this.root.querySelectorAll<HTMLButtonElement>('[part~="button"]')];
  }
  get result() {
    return this.root.querySelector('[part~="action-result"]')?.textContent?.trim() ?? null;
  }
  get avatar(): HTMLElement | null {
    return this.root.querySelector('[part~="avatar"]');
  }
  get time() {
    return this.root.querySelector('[part~="time"]')?.textContent?.trim() ?? '';
  }

  click() {
    this.link.click();
  }

  async pressButton(text: string) {
    const button = this.buttons.find((b) => b.textContent?.trim() === text);
    if (!button) throw new Error(`no button "${text}" in ${this.buttons.map((b) => b.textContent?.trim())}`);
    button.click();
    await this.el.updateComplete;
  }

  /** The message's own controls (mark read or unread, delete). */
  get controls(): HTMLButtonElement[] {
    return [...this.root.querySelectorAll<HTMLButtonElement>('[part~="read-button"], [part~="delete-button"]')];
  }
  /** The controls' accessible names. */
  get controlNames(): string[] {
    return this.controls.map((b) => b.getAttribute('aria-label') ?? '');
  }

  async control(name: string) {
    const target = this.controls.find((b) => b.getAttribute('aria-label') === name);
    if (!target) throw new Error(`no control "${name}" in ${this.controlNames}`);
    target.click();
    await this.el.updateComplete;
  }
}

export class FeedHarness {
  constructor(readonly el: NotifFeed) {}

  get root() {
    return shadow(this.el);
  }
  get messages(): MessageHarness[] {
    return [...this.root.querySelectorAll<NotifMessage>('notif-message')].map((m) => new MessageHarness(m));
  }
  get subjects(): string[] {
    return this.messages.map((m) => m.subject);
  }
  /** Every loaded message's id (the list is windowed: most are not in the DOM), in order. */
  get loadedIds(): string[] {
    return (this.el as unknown as { inbox: { state: { messages: { _id: string }[] } } }).inbox.state.messages.map((m) => m._id);
  }
  /** The rendered rows' `aria-posinset` and `aria-setsize`, in DOM order. */
  get positions(): [number, number][] {
    return [...this.root.querySelectorAll('[part~="item"]')].map((li) => [+li.getAttribute('aria-posinset')!, +li.getAttribute('aria-setsize')!]);
  }
  get ids(): string[] {
    return this.messages.map((m) => m.id);
  }
  message(subject: string): MessageHarness {
    const found = this.messages.find((m) => m.subject === subject);
    if (!found) throw new Error(`no message "${subject}" in ${JSON.stringify(this.subjects)}`);
    return found;
  }
  get skeleton() {
    return !!this.root.querySelector('[part~="skeleton"]');
  }
  get error(): HTMLElement | null {
    return this.root.querySelector('[part~="error"]');
  }
  get empty(): HTMLElement | null {
    return this.root.querySelector('[part~="empty"]');
  }
  get retryButton(): HTMLButtonElement | null {
    return this.root.querySelector('[part~="retry-button"]');
  }
  get markAllButton(): HTMLButtonElement {
    return this.root.querySelector<HTMLButtonElement>('[part~="mark-all-button"]')!;
  }
  get tabs(): HTMLElement[] {
    return [...this.root.querySelectorAll<HTMLElement>('[role="tab"]')];
  }
  get selectedTab() {
    return this.tabs.find((t) => t.getAttribute('aria-selected') === 'true')?.textContent?.trim();
  }

  /** Waits until the first page is shown (messages or the empty state). */
  async loaded(count?: number) {
    await waitFor(() => (count === undefined ? this.messages.length > 0 || this.empty : this.messages.length === count), `feed with ${count ?? 'its'} messages`);
    return this;
  }

  async markAllRead() {
    this.markAllButton.click();
    await this.el.updateComplete;
  }

  async selectTab(name: 'All' | 'Unread') {
    this.tabs.find((t) => t.textContent?.trim() === name)!.click();
    await this.el.updateComplete;
  }

  /** Scrolls to the end of the list (the page, or the popover's panel) and waits for the next page. */
  async scrollToEnd() {
    const body = this.root.querySelector<HTMLElement>('[part~="panel"]')!;
    if (this.el.embedded) body.scrollTop = body.scrollHeight;
    else window.scrollTo(0, document.documentElement.scrollHeight);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export class BellHarness {
  constructor(readonly el: NotifBell) {}

  get root() {
    return shadow(this.el);
  }
  get button(): HTMLButtonElement {
    return this.root.querySelector<HTMLButtonElement>('[part~="button"]')!;
  }
  /** The badge's text, or null when there is no badge. */
  get badge(): string | null {
    return this.root.querySelector('[part~="badge"]')?.textContent?.trim() ?? null;
  }
  get label() {
    return this.button.getAttribute('aria-label') ?? '';
  }
  get popover(): HTMLElement {
    return this.root.querySelector<HTMLElement>('[part~="popover"]')!;
  }
  get isOpen() {
    return this.popover.matches(':popover-open');
  }
  get feed(): FeedHarness {
    const feed = this.root.querySelector<NotifFeed>('notif-feed');
    if (!feed) throw new Error('the bell is closed');
    return new FeedHarness(feed);
  }

  async open() {
    this.button.click();
    await this.el.updateComplete;
    return this.feed;
  }

  async pressEscape() {
    document.activeElement?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }));
    await this.el.updateComplete;
  }
}
