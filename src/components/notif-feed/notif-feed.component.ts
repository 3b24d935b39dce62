import { html, nothing, type PropertyDeclarations } from 'lit';
import { repeat } from 'lit/directives/repeat.js';
import type { InboxState, InboxStoreApi, InboxTab } from '../../store/types.ts';
import { InboxElement } from '../../internal/inbox-element.ts';
import { emit } from '../../internal/emit.ts';
import { alertIcon, checkAllIcon, inboxIcon } from '../../internal/icons.ts';
import { NotifMessage } from '../notif-message/notif-message.component.ts';
import styles from './notif-feed.styles.ts';

NotifMessage.define('notif-message');

const TABS: InboxTab[] = ['all', 'unread'];
/** The messages' parts, exported by the feed under the same names (none is also a feed part). */
const MESSAGE_PARTS = 'row,unread-dot,avatar,content,link,subject,body,time,actions,button,button-primary,button-secondary,action-result,menu-button,menu,menu-item';
/** The feed's parts and its messages', as `<notif-bell>` exports them. */
export const FEED_PARTS = 'base,header,title,mark-all-button,tabs,tab,tab-selected,panel,list,item,message,skeleton,empty,error,retry-button,loading-more,' + MESSAGE_PARTS;

/**
 * @summary The message list: header with "Mark all as read", All / Unread tabs, infinite scroll,
 * and empty, loading and error states. Alone it is a full-page feed configured by its attributes;
 * inside `<notif-bell>` it shares the bell's store.
 *
 * @slot header - Replaces the title.
 * @slot empty - Replaces the empty state.
 *
 * @csspart base - The feed's frame.
 * @csspart header - Title and header actions.
 * @csspart title - The title.
 * @csspart mark-all-button - "Mark all as read".
 * @csspart tabs - The tab list; each tab is `tab` (and `tab-selected`).
 * @csspart panel - The tab panel (it scrolls inside the bell's popover).
 * @csspart list - The list of messages; each entry is `item`.
 * @csspart message - Each `<notif-message>`; its parts are exported under their own names (`row`,
 * `avatar`, `subject`, `body`, `time`, `actions`, `button`, `menu`, ...).
 * @csspart skeleton - The loading placeholder.
 * @csspart empty - The empty state.
 * @csspart error - The error state (and the inline error banner).
 * @csspart retry-button - Retry after an error.
 * @csspart loading-more - Shown while the next page loads.
 *
 * The list has one tab stop (roving tabindex): ArrowUp / ArrowDown, Home and End move between
 * messages, Enter or Space opens one. The tabs follow the ARIA tabs pattern.
 *
 * @cssprop --notif-color-surface - Background (and -surface-raised, -surface-hover, -surface-unread).
 * @cssprop --notif-color-text - Text.
 * @cssprop --notif-color-muted - Secondary text: bodies, times, hints.
 * @cssprop --notif-color-border - Dividers and outlines.
 * @cssprop --notif-color-accent - Selected tab, primary buttons (and -accent-hover, --notif-color-on-accent).
 * @cssprop --notif-color-unread - The unread dot.
 * @cssprop --notif-color-focus-ring - The keyboard focus ring.
 * @cssprop --notif-color-danger - Delete.
 * @cssprop --notif-color-skeleton - Loading placeholders.
 * @cssprop --notif-font-family - Font family.
 * @cssprop --notif-font-size - Base font size (default .875rem).
 * @cssprop --notif-font-size-small - Times, hints, buttons (default .75rem).
 * @cssprop --notif-radius - Corner radius (default .625rem).
 * @cssprop --notif-radius-small - Buttons' corner radius (default .375rem).
 * @cssprop --notif-spacing - The spacing unit (default .75rem).
 * @cssprop --notif-shadow - Popover and menu shadow.
 * @cssprop --notif-duration - Transitions (0s under prefers-reduced-motion).
 *
 * @fires notif-read-change - Mark all as read.
 * @fires notif-error - A request failed (outermost element only).
 * @fires notif-unseen-count-change - The unseen count changed (outermost element only).
 * @dependency notif-message
 */
export class NotifFeed extends InboxElement {
  static override styles = styles;
  static override properties: PropertyDeclarations = {
    embedded: { type: Boolean, reflect: true },
    activeId: { state: true },
  };

  /** Set by `<notif-bell>`: the feed fills the popover and scrolls inside it. */
  declare embedded: boolean;
  /** The message holding the list's tab stop. */
  declare private activeId: string | undefined;

  private observer: IntersectionObserver | null = null;
  private sentinelVisible = false;
  private pumping = false;
  /** Asked to pump while pumping: the sentinel may have come into view after the loop looked. */
  private pumpAgain = false;
  private stalls = 0;
  private stallTimer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    super();
    this.embedded = false;
  }

  protected override storeAttached(store: InboxStoreApi) {
    store.feedOpened();
  }

  protected override storeDetached(store: InboxStoreApi) {
    store.feedClosed();
  }

  override connectedCallback() {
    super.connectedCallback();
    if (this.hasUpdated) this.observe();
  }

  override disconnectedCallback() {
    super.disconnectedCallback();
    this.observer?.disconnect();
    this.observer = null;
    clearTimeout(this.stallTimer);
  }

  protected override firstUpdated() {
    this.observe();
  }

  protected override updated() {
    if (this.sentinelVisible) void this.pump();
  }

  private get scroller(): HTMLElement | null {
    return this.renderRoot.querySelector('.body');
  }

  private observe() {
    this.observer?.disconnect();
    const sentinel = this.renderRoot.querySelector('.sentinel');
    if (!sentinel || typeof IntersectionObserver === 'undefined') return;
    this.observer = new IntersectionObserver(
      (entries) => {
        this.sentinelVisible = entries.some((e) => e.isIntersecting);
        if (this.sentinelVisible) void this.pump();
      },
      { root: this.embedded ? this.scroller : null, rootMargin: '0px 0px 400px 0px' },
    );
    this.observer.observe(sentinel);
  }

  /**
   * Loads pages while the end of the list is near the view and the store makes progress. A page
   * that brought nothing (superseded by a refresh, or failed) is retried a few times with backoff,
   * since the sentinel staying in view fires no new intersection.
   */
  private async pump() {
    const store = this.inbox.store;
    if (!store) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    this.pumpAgain = false;
    let stalled = false;
    try {
      await null; // never change state inside the update that asked
      // The observer starts the loop; geometry keeps it honest (its last report may be stale).
      while (this.isConnected && this.sentinelVisible && this.sentinelNearView()) {
        const s = store.state;
        if (!s.loaded || !s.hasMore || s.loadingMore || s.status === 'loading' || s.status === 'error') break;
        const before = s.messages.length;
        await store.loadMore().catch(() => undefined);
        await this.updateComplete;
        if (store.state.messages.length <= before) {
          stalled = store.state.hasMore;
          break;
        }
        this.stalls = 0;
      }
    } finally {
      this.pumping = false;
    }
    if (this.pumpAgain && !stalled) {
      // An intersection reported during the loop would otherwise be lost: the sentinel staying in
      // view fires no new one.
      void this.pump();
      return;
    }
    if (stalled && this.stalls < 4) {
      clearTimeout(this.stallTimer);
      this.stallTimer = setTimeout(() => void this.pump(), 250 * 2 ** this.stalls++);
    }
  }

  private sentinelNearView(): boolean {
    const sentinel = this.renderRoot.querySelector('.sentinel');
    if (!sentinel) return false;
    const rect = sentinel.getBoundingClientRect();
    if (rect.width === 0 && rect.height === 0 && rect.top === 0) return false; // not rendered (closed popover)
    const bottom = this.embedded && this.scroller ? this.scroller.getBoundingClientRect().bottom : window.innerHeight;
    return rect.top <= bottom + 400;
  }

  override render() {
    const state = this.inbox.state;
    return html`
      <section part="base" class="base" aria-labelledby="title">
        <header part="header" class="header">
          <slot name="header"><h2 part="title" class="title" id="title">${this.localize.term('notifications')}</h2></slot>
          <button
            part="mark-all-button"
            class="ghost"
            type="button"
            ?disabled=${!state || !state.messages.some((m) => !m.read)}
            @click=${this.markAllRead}
          >
            ${checkAllIcon()}${this.localize.term('markAllRead')}
          </button>
        </header>
        ${this.renderTabs(state)}
        <div
          part="panel"
          class="body"
          id="panel"
          role="tabpanel"
          aria-labelledby="tab-${state?.tab ?? 'all'}"
          aria-busy=${state && state.loaded ? 'false' : 'true'}
        >
          ${this.renderBody(state)}
          <div class="sentinel" aria-hidden="true"></div>
          ${state?.loadingMore
            ? html`<div part="loading-more" class="more"><span class="spinner"></span>${this.localize.term('loadingMore')}</div>`
            : nothing}
        </div>
        ${this.liveRegion()}
      </section>
    `;
  }

  private renderTabs(state: InboxState | null) {
    const current = state?.tab ?? 'all';
    return html`<div part="tabs" class="tabs" role="tablist" aria-label=${this.localize.term('feedTabs')} @keydown=${this.onTabKey}>
      ${TABS.map(
        (tab) => html`<button
          part="tab ${tab === current ? 'tab-selected' : ''}"
          class="tab"
          role="tab"
          id="tab-${tab}"
          type="button"
          aria-selected=${tab === current ? 'true' : 'false'}
          aria-controls="panel"
          tabindex=${tab === current ? '0' : '-1'}
          @click=${() => this.selectTab(tab)}
        >
          ${this.localize.term(tab === 'all' ? 'tabAll' : 'tabUnread')}
        </button>`,
      )}
    </div>`;
  }

  private renderBody(state: InboxState | null) {
    if (!state) {
      if (!this.configured) return this.renderError(this.localize.term('notConfigured'), false);
      return this.renderSkeleton();
    }
    if (!state.loaded) {
      if (state.status === 'error' || state.status === 'offline') return this.renderError(state.error?.message, true);
      return this.renderSkeleton();
    }
    const banner =
      state.status === 'offline'
        ? html`<div part="error" class="banner" role="status">${alertIcon()}<span>${this.localize.term('offline')}</span></div>`
        : state.status === 'error'
          ? html`<div part="error" class="banner" role="alert">
              ${alertIcon()}<span>${this.localize.term('errorTitle')}</span>
              <button part="retry-button" class="retry" type="button" @click=${this.retry}>${this.localize.term('retry')}</button>
            </div>`
          : nothing;
    if (state.messages.length === 0) {
      if (state.status === 'error') return this.renderError(state.error?.message, true);
      const unread = state.tab === 'unread';
      return html`${banner}<div part="empty" class="state">
          <slot name="empty">
            ${inboxIcon()}
            <p class="state-title">${this.localize.term(unread ? 'emptyUnread' : 'emptyAll')}</p>
            <p class="state-hint">${this.localize.term(unread ? 'emptyUnreadHint' : 'emptyAllHint')}</p>
          </slot>
        </div>`;
    }
    const store = this.inbox.store;
    const active = state.messages.some((m) => m._id === this.activeId) ? this.activeId : state.messages[0]!._id;
    return html`${banner}
      <ul part="list" class="list" role="list" @keydown=${this.onListKey} @focusin=${this.onListFocus}>
        ${repeat(
          state.messages,
          (m) => m._id,
          (m) =>
            html`<li part="item" class="item">
              <notif-message
                part="message"
                exportparts=${MESSAGE_PARTS}
                .message=${m}
                .active=${m._id === active}
                .store=${store}
                .markAsSupported=${state.markAsSupported}
                locale=${this.localize.locale}
                theme=${this.theme ?? nothing}
              ></notif-message>
            </li>`,
        )}
      </ul>`;
  }

  private renderSkeleton() {
    return html`<div part="skeleton">
      <span class="sr-only">${this.localize.term('loading')}</span>
      ${[0, 1, 2, 3, 4].map(
        () => html`<div class="skeleton"><div class="bone avatar"></div><div class="lines"><div class="bone line"></div><div class="bone line"></div></div></div>`,
      )}
    </div>`;
  }

  private renderError(detail: string | undefined, retry: boolean) {
    return html`<div part="error" class="state" role="alert">
      ${alertIcon()}
      <p class="state-title">${this.localize.term('errorTitle')}</p>
      <p class="state-hint">${detail || this.localize.term('errorHint')}</p>
      ${retry
        ? html`<button part="retry-button" class="retry" type="button" @click=${this.retry}>${this.localize.term('retry')}</button>`
        : nothing}
    </div>`;
  }

  private selectTab(tab: InboxTab) {
    const store = this.inbox.store;
    if (!store || store.state.tab === tab) return;
    store.setTab(tab);
  }

  private onTabKey = (e: KeyboardEvent) => {
    const current = TABS.indexOf(this.inbox.state?.tab ?? 'all');
    const rtl = getComputedStyle(this).direction === 'rtl';
    let next = -1;
    if (e.key === 'ArrowRight') next = (current + (rtl ? -1 : 1) + TABS.length) % TABS.length;
    else if (e.key === 'ArrowLeft') next = (current + (rtl ? 1 : -1) + TABS.length) % TABS.length;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = TABS.length - 1;
    if (next < 0) return;
    e.preventDefault();
    this.selectTab(TABS[next]!);
    void this.updateComplete.then(() => this.renderRoot.querySelector<HTMLElement>(`#tab-${TABS[next]}`)?.focus());
  };

  /** Roving tabindex: ArrowUp / ArrowDown, Home, End move between messages (unless a menu used the key). */
  private onListKey = (e: KeyboardEvent) => {
    const items = [...this.renderRoot.querySelectorAll('notif-message')];
    const i = items.indexOf(e.target as NotifMessage);
    const next = items[({ ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: items.length - 1 } as Record<string, number>)[e.key] ?? -1];
    if (!next || e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    next.focus();
  };

  private onListFocus = (e: FocusEvent) => {
    this.activeId = (e.target as NotifMessage).message?._id;
  };

  private markAllRead = () => {
    const store = this.inbox.store;
    if (!store) return;
    store.markAllRead().catch(() => undefined);
    emit(this, 'notif-read-change', { messageIds: 'all', read: true });
  };

  private retry = () => {
    void this.inbox.store?.refresh().catch(() => undefined);
  };
}
