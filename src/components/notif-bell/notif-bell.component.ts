import { html, nothing, type PropertyDeclarations } from 'lit';
import { InboxElement } from '../../internal/inbox-element.ts';
import { emit } from '../../internal/emit.ts';
import { bellIcon } from '../../internal/icons.ts';
import { NotifFeed } from '../notif-feed/notif-feed.component.ts';
import styles from './notif-bell.styles.ts';

NotifFeed.define('notif-feed');

/**
 * @summary A bell button with the unseen count; opens a popover holding a `<notif-feed>`.
 *
 * @slot icon - Replaces the bell icon.
 *
 * @csspart button - The bell button.
 * @csspart bell-icon - The default icon.
 * @csspart badge - The unseen count ("99+" past 99; hidden at 0).
 * @csspart popover - The popover dialog.
 * @csspart feed - The `<notif-feed>` inside the popover.
 *
 * @cssprop --notif-popover-width - Popover width (default 25rem).
 * @cssprop --notif-popover-height - Popover height (default 34rem).
 *
 * @fires notif-seen-change - Opening marked every message seen.
 * @fires notif-unseen-count-change - The unseen count changed.
 * @fires notif-error - A request failed.
 * @dependency notif-feed
 */
export class NotifBell extends InboxElement {
  static override styles = styles;
  static override properties: PropertyDeclarations = {
    open: { type: Boolean, reflect: true },
    noAutoSeen: { type: Boolean, attribute: 'no-auto-seen' },
  };

  /** Whether the popover is open. */
  declare open: boolean;
  /** Opening the popover does not mark the messages seen. */
  declare noAutoSeen: boolean;

  constructor() {
    super();
    this.open = false;
    this.noAutoSeen = false;
  }

  override disconnectedCallback() {
    super.disconnectedCallback();
    this.removeListeners();
    this.open = false;
  }

  /** Opens the popover (marks everything seen unless `no-auto-seen`). */
  async show(): Promise<void> {
    if (this.open) return;
    this.open = true;
    await this.updateComplete;
    const popover = this.popoverEl;
    if (popover && !popover.matches(':popover-open')) popover.showPopover?.();
    document.addEventListener('pointerdown', this.onOutside, true);
    document.addEventListener('keydown', this.onDocumentKey);
    // The <notif-feed> now inside tells the store it is open (feedOpened) as it connects.
    const store = this.inbox.store;
    if (store && !this.noAutoSeen && store.state.unseenCount > 0) {
      store.markAllSeen().catch(() => undefined);
      emit(this, 'notif-seen-change', { messageIds: 'all', seen: true });
    }
    popover?.focus({ preventScroll: true });
  }

  /** Closes the popover; focus returns to the bell when it was inside. */
  async hide(returnFocus = true): Promise<void> {
    if (!this.open) return;
    // activeElement, not :focus-within: the latter fails while the window itself lacks focus.
    const focusInside = !!this.shadowRoot?.activeElement;
    this.removeListeners();
    const popover = this.popoverEl;
    if (popover?.matches(':popover-open')) popover.hidePopover?.();
    this.open = false;
    await this.updateComplete;
    if (returnFocus && focusInside) this.buttonEl?.focus();
  }

  toggle(): Promise<void> {
    return this.open ? this.hide() : this.show();
  }

  private get popoverEl(): HTMLElement | null {
    return this.renderRoot.querySelector('.popover');
  }

  private get buttonEl(): HTMLButtonElement | null {
    return this.renderRoot.querySelector('.button');
  }

  private removeListeners() {
    document.removeEventListener('pointerdown', this.onOutside, true);
    document.removeEventListener('keydown', this.onDocumentKey);
  }

  private onOutside = (e: Event) => {
    if (!e.composedPath().includes(this)) void this.hide(false);
  };

  private onDocumentKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape' && !e.defaultPrevented) {
      e.preventDefault();
      void this.hide();
    }
  };

  override render() {
    const count = this.inbox.state?.unseenCount ?? 0;
    const formatted = this.localize.count(count);
    const label = this.localize.fn('bellLabel', count, formatted);
    return html`
      <button
        part="button"
        class="button"
        type="button"
        aria-label=${label}
        title=${label}
        aria-haspopup="dialog"
        aria-expanded=${this.open ? 'true' : 'false'}
        aria-controls="popover"
        @click=${() => this.toggle()}
      >
        <slot name="icon">${bellIcon()}</slot>
        ${count > 0 ? html`<span part="badge" class="badge" aria-hidden="true">${formatted}</span>` : nothing}
      </button>
      <div
        part="popover"
        class="popover"
        id="popover"
        popover="manual"
        role="dialog"
        aria-label=${this.localize.term('notifications')}
        tabindex="-1"
      >
        ${this.open
          ? html`<notif-feed
              part="feed"
              embedded
              .store=${this.inbox.store}
              locale=${this.localize.locale}
              theme=${this.theme ?? nothing}
            ></notif-feed>`
          : nothing}
      </div>
    `;
  }
}
