import { html, nothing, type PropertyDeclarations, type PropertyValues } from 'lit';
import { ContextProvider } from '@lit/context';
import { emit } from '../../internal/base-element.ts';
import { InboxElement, inboxContext, type InboxContext } from '../../internal/inbox-element.ts';
import type { InboxTab } from '../../store/types.ts';
import { formatCount, localeOf, translationFor } from '../../i18n/localize.ts';
import { backIcon, bellIcon, settingsIcon } from '../../internal/icons.ts';
import { FEED_PARTS, NotifFeed, toList } from '../notif-feed/notif-feed.component.ts';
import styles from './notif-bell.styles.ts';

NotifFeed.define('notif-feed');

/** The elements under `node` that Tab reaches, in order, through shadow roots and slots. */
const tabbables = (node: Element | ShadowRoot, out: HTMLElement[] = []): HTMLElement[] => {
  for (const el of (node as HTMLSlotElement).assignedElements?.({ flatten: true }) ?? node.children) {
    if ((el as HTMLElement).tabIndex >= 0 && !(el as HTMLButtonElement).disabled && el.checkVisibility()) out.push(el as HTMLElement);
    tabbables(el.shadowRoot ?? el, out);
  }
  return out;
};

/**
 * @summary A bell button with the unseen count; opens a popover holding a `<notif-feed>`.
 *
 * The popover is a labelled dialog: focus moves into it, Tab stays inside, Escape (or a click
 * outside) closes it and focus returns to the bell. New messages are announced politely.
 *
 * @slot icon - Replaces the bell icon.
 * @slot header - Forwarded to the feed's `header` slot.
 * @slot header-actions - Forwarded to the feed's `header-actions` slot.
 * @slot empty - Forwarded to the feed's `empty` slot.
 * @slot loading - Forwarded to the feed's `loading` slot.
 * @slot error - Forwarded to the feed's `error` slot.
 *
 * `renderMessage` and the finer hooks apply to the feed in the popover; their hosts are this
 * element's light-DOM children while the popover shows their rows.
 *
 * @csspart button - The bell button.
 * @csspart bell-icon - The default icon.
 * @csspart badge - The unseen count ("99+" past 99; hidden at 0).
 * @csspart popover - The popover dialog.
 * @csspart preferences-button - In the feed's header: shows the preferences (`<notif-preferences>`, loaded then).
 * @csspart preferences - The `<notif-preferences>` inside the popover.
 * @csspart back-button - In the preferences' header: back to the messages.
 * @csspart feed - The `<notif-feed>` inside the popover; its parts are exported under their own names
 * (`header`, `tabs`, `list`, `message`, `avatar`, `subject`, ...).
 *
 * @cssprop --notif-popover-width - Popover width (default 25rem).
 * @cssprop --notif-popover-height - The popover's largest height (default 34rem); it fits its content up to that.
 * @cssprop --notif-duration - The popover's entrance and the rows' hover transition (default .15s; none under `prefers-reduced-motion`).
 * @cssprop --notif-bell-background - The bell button's background (default none).
 * @cssprop --notif-bell-color - The bell icon's colour (default currentColor).
 * @cssprop --notif-badge-border - The ring around the badge (default the surface colour).
 * @cssprop --notif-color-badge - Badge background.
 * @cssprop --notif-color-on-badge - Badge text.
 *
 * Arrow keys in the popover reach the messages; a click on a message, or on a CTA button with a URL,
 * closes it (unless `keep-open`). Its feed keeps its own tab (`tab`), from one opening to the next
 * (see `<notif-feed>`).
 *
 * @fires notif-seen-change - Opening marked every message seen.
 * @fires notif-tab-change - The user picked a tab in the popover's feed.
 * @fires notif-unseen-count-change - The unseen count changed.
 * @fires notif-error - A request failed.
 * @fires notif-message-received - A new message arrived (from the service's stream); once per browser, in one tab.
 * @dependency notif-feed
 * @dependency notif-preferences
 */
export class NotifBell extends InboxElement {
  static override styles = styles;
  static override properties: PropertyDeclarations = {
    open: { type: Boolean, reflect: true },
    noAutoSeen: { type: Boolean, attribute: 'no-auto-seen' },
    keepOpen: { type: Boolean, attribute: 'keep-open' },
    tab: {},
  };

  /** Whether the popover is open. */
  declare open: boolean;
  /** Opening the popover does not mark the messages seen. */
  declare noAutoSeen: boolean;
  /** Clicking a message leaves the popover open (by default it closes, whether the page follows the URL or the app routes itself). */
  declare keepOpen: boolean;
  /** The tab its feed shows: `all` (default) or `unread`; set as the user picks one. */
  declare tab: InboxTab;
  /** The popover shows `<notif-preferences>` instead of the feed. */
  #prefs = false;
  /** What the feed and the preferences in the popover get: this element's store, and this element as the outer one. */
  #provided: InboxContext = { store: null, outer: this, unconfigured: false };
  #provider = new ContextProvider(this, { context: inboxContext, initialValue: this.#provided });

  constructor() {
    super();
    this.open = false;
    this.noAutoSeen = false;
    this.keepOpen = false;
    this.tab = 'all';
    this.addEventListener('notif-tab-change', (event) => {
      this.tab = event.detail.tab;
    });
    // A message opened, or a CTA button that leads somewhere (followed, or routed by the app), closes it.
    this.addEventListener('notif-message-click', () => this.#closeAfterListeners());
    this.addEventListener('notif-action', (event) => {
      if (event.detail.url) this.#closeAfterListeners();
    });
  }

  /**
   * Closes the popover (unless `keep-open`) after the app's listeners have run (it may route and
   * move focus): focus returns to the bell only if it is still inside.
   */
  #closeAfterListeners() {
    if (!this.keepOpen) queueMicrotask(() => void this.hide());
  }

  override disconnectedCallback() {
    super.disconnectedCallback();
    this.open = false;
    this.#listen(false);
  }

  /** Opens the popover (marks everything seen unless `no-auto-seen`). */
  show(): Promise<void> {
    return this.#show(true);
  }

  /** Closes the popover; focus returns to the bell when it was inside. */
  hide(returnFocus = true): Promise<void> {
    return this.#show(false, !returnFocus);
  }

  toggle(): Promise<void> {
    return this.#show(!this.open);
  }

  /**
   * Switches the popover between the feed and the preferences (loaded the first time: a file of
   * their own in both builds), and focuses the button that switches back.
   */
  async #view(prefs: boolean) {
    if (prefs) await import('../notif-preferences/notif-preferences.ts');
    this.#prefs = prefs;
    this.requestUpdate();
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLElement>('.view')?.focus();
  }

  async #show(open: boolean, keepFocus?: boolean) {
    if (open == this.open) return;
    this.#prefs = false;
    // activeElement, not :focus-within: the latter fails while the window itself lacks focus.
    const focusInside = this.shadowRoot!.activeElement;
    this.open = open;
    this.#listen(open);
    await this.updateComplete;
    const popover = this.renderRoot.querySelector<HTMLElement>('#popover')!;
    // The state as it is now: a later call may have changed it meanwhile.
    popover.togglePopover(this.open);
    if (open) {
      // The <notif-feed> now inside tells the store it is open (feedOpened) as it connects.
      this.#seeAll();
      popover.focus({ preventScroll: true });
    } else if (!keepFocus && focusInside) this.renderRoot.querySelector('button')!.focus();
  }

  /** Marks everything seen (unless `no-auto-seen`). */
  #seeAll() {
    if (!this.noAutoSeen && this.state?.unseenCount) {
      void this.inbox!.markAllSeen();
      emit(this, 'notif-seen-change', { messageIds: 'all', seen: true });
    }
  }

  protected override willUpdate(changed: PropertyValues<this>) {
    super.willUpdate(changed);
    // The elements inside get the store this element took (a new value only when it changed).
    const store = this.inbox;
    const unconfigured = this.unconfigured;
    if (store != this.#provided.store || unconfigured != this.#provided.unconfigured) {
      this.#provided = { store, outer: this, unconfigured };
      this.#provider.setValue(this.#provided);
    }
  }

  protected override updated(changed: PropertyValues<this>) {
    // Messages that arrive while the popover is open and shows them are seen: the badge does not
    // count them (it does count those its feed does not show: feed identifier, payload filter). An
    // unseen message at the top of the feed is one that arrived (opening made the others seen at
    // once); a mark the server refused sets the error, which stops this until a page loads again.
    const shown = this.state?.lists[this.tab];
    if (this.open && shown?.messages[0]?.seen === false && !this.state!.error) this.#seeAll();
    // The feed reads the render hooks from this element.
    if ([...changed.keys()].some((key) => String(key).startsWith('render'))) this.renderRoot.querySelector('notif-feed')?.requestUpdate();
  }

  #listen(on: boolean) {
    const method = on ? 'addEventListener' : 'removeEventListener';
    document[method]('pointerdown', this.#onOutside, true);
    document[method]('keydown', this.#onKey as EventListener);
  }

  #onOutside = (event: Event) => {
    if (!event.composedPath().includes(this)) void this.hide(false);
  };

  /** Escape closes the popover; Tab stays inside it, from the last stop to the first and back. */
  #onKey = (event: KeyboardEvent) => {
    if (event.defaultPrevented) return;
    if (event.key == 'Escape') {
      event.preventDefault();
      void this.hide();
    } else if (event.key == 'Tab') {
      const popover = this.renderRoot.querySelector<HTMLElement>('#popover')!;
      const stops = tabbables(popover);
      // In the order Tab walks them: from the last (or the popover, backwards) round to the first.
      // :focus matches the focused element in its own shadow root.
      if (event.shiftKey) stops.reverse();
      if (!stops[0] || stops.at(-1)!.matches(':focus') || (event.shiftKey && popover.matches(':focus'))) {
        event.preventDefault();
        stops[0]?.focus();
      }
    }
  };

  override render() {
    const count = this.state?.unseenCount ?? 0;
    const locale = localeOf(this);
    const strings = translationFor(locale);
    const formatted = formatCount(count, locale);
    const label = strings.bellLabel(count, formatted);
    // No whitespace between the elements: none of it would render (grid, flex and block boxes).
    return html`<button
        part="button"
        class="button"
        type="button"
        aria-label=${label}
        title=${label}
        aria-haspopup="dialog"
        aria-expanded=${this.open}
        aria-controls="popover"
        @click=${this.toggle}
      ><slot name="icon">${bellIcon}</slot>${count
          ? html`<span part="badge" class="badge" aria-hidden="true">${formatted}</span>`
          : nothing}</button
      ><div part="popover" id="popover" popover="manual" role="dialog" aria-modal="true" aria-label=${strings.notifications} tabindex="-1"
        @keydown=${(event: KeyboardEvent) => toList(event, this.renderRoot.querySelector('notif-feed'))}>${!this.open
          ? nothing
          : this.#prefs
            ? html`<notif-preferences part="preferences" embedded locale=${locale} theme=${this.theme ?? nothing}
                ><button slot="back" part="back-button" class="ghost view" aria-label=${strings.back} title=${strings.back} @click=${() => this.#view(false)}>${backIcon}</button></notif-preferences
              >`
            : html`<notif-feed
              part="feed"
              exportparts=${FEED_PARTS}
              embedded
              .tab=${this.tab}
              locale=${locale}
              theme=${this.theme ?? nothing}
              >${
                // This element's slots (and the hosts of custom rendering) forwarded to the feed's, only
                // when used (else the feed keeps its own content).
                [...new Set([...this.children].map((child) => child.slot))].map((name) =>
                  name && name != 'icon' ? html`<slot name=${name} slot=${name}></slot>` : nothing,
                )
              }<button slot="header-actions" part="preferences-button" class="ghost view" aria-label=${strings.preferences} title=${strings.preferences} @click=${() => this.#view(true)}>${settingsIcon}</button></notif-feed
            >`}</div
      >${this.liveRegion()}`;
  }
}
