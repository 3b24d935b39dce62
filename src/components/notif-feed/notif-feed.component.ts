import { html, nothing, render, type PropertyDeclarations, type PropertyValues } from 'lit';
import type { Message } from '../../api/types.ts';
import type { FeedList, InboxStoreApi, InboxTab } from '../../store/types.ts';
import { newestFirst } from '../../store/feed-pages.ts';
import type { Translation } from '../../i18n/translation.ts';
import { localeOf, newNotifications, translationFor } from '../../i18n/localize.ts';
import { emit } from '../../internal/base-element.ts';
import { HOOKS, InboxElement, type Hook } from '../../internal/inbox-element.ts';
import { alertIcon, checkAllIcon, closeIcon, inboxIcon } from '../../internal/icons.ts';
import { ListWindow } from '../../internal/list-window.ts';
import { hook, loadedRenderHosts, type Host } from './custom-rendering.ts';
import { navigationIndex } from '../../internal/list-navigation.ts';
import { NotifMessage } from '../notif-message/notif-message.component.ts';
import styles from './notif-feed.styles.ts';

NotifMessage.define('notif-message');

/** How long a message read in the Unread tab stays there (ms). */
export const LINGER = 1500;
/** A page that brought nothing is asked for again at most this many times while the view stays at the end. */
const MAX_STALLS = 4;
/** The first wait before a page that brought nothing is asked for again (ms); it doubles each time. */
const STALL_BACKOFF = 250;
/** Placeholder rows shown while the first page loads. */
const SKELETON_ROWS = 5;

/** The messages' parts, exported by the feed under the same names (none is also a feed part). */
const MESSAGE_PARTS = 'row,unread-dot,avatar,content,link,subject,body,time,actions,button,button-primary,button-secondary,action-result,read-button,delete-button';
/** The feed's parts and its messages', as `<notif-bell>` exports them. */
export const FEED_PARTS = 'base,header,title,mark-all-button,close-button,tabs,tab,tab-selected,panel,new-button,list,item,message,skeleton,empty,error,retry-button,loading-more,' + MESSAGE_PARTS;

/** The row an event came through: its target's, or that of content an app slotted into it. */
const rowOf = (event: Event) => event.composedPath().find((node) => (node as Element).localName == 'notif-message') as NotifMessage | undefined;

/**
 * Up and down outside the list (the header, the tabs, the bell's popover as it opens) reach the
 * messages. A key from inside a row, from content an app slotted into it too (whose target is not
 * the row), is the list's own.
 */
export const toList = (event: KeyboardEvent, feed: HTMLElement | null) => {
  if (feed && !event.defaultPrevented && /^Arrow(Up|Down)$/.test(event.key) && !rowOf(event)) {
    event.preventDefault();
    feed.focus();
  }
};

/**
 * @summary The message list: header with "Mark all as read", All / Unread tabs, infinite scroll,
 * and empty, loading and error states. Alone it is a full-page feed configured by its attributes;
 * inside `<notif-bell>` it shares the bell's store.
 *
 * Each feed keeps its own tab (`tab`): a bell's and a page's feed switch one at a time. An app that
 * wants two feeds on one tab sets the other's `tab` on `notif-tab-change`. Until its configuration comes (attributes set after load) a feed shows the loading
 * state; a missing setting (after `CONFIGURATION_WAIT`) or a service that refuses it (401, 403) is a
 * console warning and `notif-error`, and people read that notifications are unavailable.
 *
 * @slot header - Replaces the title.
 * @slot header-actions - After "Mark all as read" (the app's own buttons).
 * @slot empty - Replaces the empty state.
 * @slot loading - Replaces the loading placeholder.
 * @slot error - Replaces the error state's text (the retry button stays).
 *
 * `renderMessage` (or `renderAvatar`, `renderSubject`, `renderBody`, `renderActions`) renders each
 * shown message, or that piece of it, into a light-DOM host of the outermost element (this feed, or
 * the bell holding it), slotted into the row; the renderer's cleanup runs when the row goes.
 *
 * @csspart base - The feed's frame.
 * @csspart header - Title and header actions.
 * @csspart title - The title.
 * @csspart mark-all-button - "Mark all as read".
 * @csspart close-button - Closes the bell's popover (only inside `<notif-bell>`).
 * @csspart tabs - The tab list; each tab is `tab` (and `tab-selected`).
 * @csspart panel - The tab panel (it scrolls inside the bell's popover).
 * @csspart new-button - "2 new notifications": shown when messages arrive above a list scrolled down; it brings the newest into view and focuses it.
 * @csspart list - The list of messages; each entry is `item`.
 * @csspart message - Each `<notif-message>`; its parts are exported under their own names (`row`,
 * `avatar`, `subject`, `body`, `time`, `actions`, `button`, `read-button`, ...).
 * @csspart skeleton - The loading placeholder.
 * @csspart empty - The empty state.
 * @csspart error - The error state (and the inline error banner).
 * @csspart retry-button - Retry after an error.
 * @csspart loading-more - Shown while the next page loads.
 *
 * The list is windowed: only the messages in and near the view are in the DOM (rows come and go as
 * it scrolls; each is a `<notif-message>` in an `item`), each with `aria-posinset` / `aria-setsize`.
 * It has one tab stop (roving tabindex): ArrowUp / ArrowDown, Home and End move between all loaded
 * messages, scrolling one in when needed; Enter or Space opens one; from the header or the tabs,
 * ArrowUp / ArrowDown reach the list. The message at the top of the view stays in place when new ones
 * arrive above it. The tabs follow the ARIA tabs pattern. The Unread tab shows a message read there
 * for a moment before it leaves, and empties at once on "Mark all as read".
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
 * @cssprop --notif-shadow - Popover shadow.
 *
 * @fires notif-read-change - Mark all as read.
 * @fires notif-tab-change - The user picked a tab.
 * @fires notif-error - A request failed (outermost element only).
 * @fires notif-unseen-count-change - The unseen count changed (outermost element only).
 * @fires notif-message-received - A new message arrived (from the service's stream); once per browser, in one tab (outermost element only).
 * @dependency notif-message
 */
export class NotifFeed extends InboxElement {
  static override styles = styles;
  static override properties: PropertyDeclarations = {
    embedded: { type: Boolean, reflect: true },
    tab: {},
  };

  /**
   * The feed fills its container and scrolls inside it: set by `<notif-bell>` in its popover (with a
   * close button there); a page may set it on a feed in a panel of its own height.
   */
  declare embedded: boolean;
  /** The tab shown: `all` (default) or `unread`; set as the user picks one. */
  declare tab: InboxTab;
  /** The tab this feed told its store it shows (feedOpened). */
  #opened?: InboxTab;
  /** The message holding the list's tab stop. */
  #activeId?: string;
  #pumping = false;
  #stalls = 0;
  #stallTimer?: ReturnType<typeof setTimeout>;
  /** Messages just read one by one in the Unread tab: shown until their timer ends. */
  #lingering = new Set<string>();
  #window = new ListWindow<Message>(
    (m) => m._id,
    (message, index, count, li) => {
      if (!li) {
        li = document.createElement('li');
        li.part = 'item';
        const row = li.appendChild(document.createElement('notif-message'));
        row.part = 'message';
        row.setAttribute('exportparts', MESSAGE_PARTS);
      }
      const list = this.#list!;
      li.ariaPosInSet = `${index + 1}`;
      li.ariaSetSize = `${list.hasMore ? Math.max(list.totalCount!, count) || -1 : count}`;
      const custom = this.#hooks[0] == 'Message' && !this.#declined.has(message);
      Object.assign(li.firstChild!, { message, active: message._id == this.#activeId, store: this.inbox, markAsSupported: this.state!.markAsSupported, custom, locale: localeOf(this), theme: this.theme });
      return li;
    },
    () => this.#panel,
    // Rows came and went (in a layout the list window did on its own too): their custom pieces follow, more messages load
    // at the end, and the "new" button goes once the list's top is in view.
    () => {
      this.#render();
      if (this.#window.atEnd) void this.#pump();
      if (this.#new && !this.#window.scrolled) this.requestUpdate();
    },
  );
  /** A scroll or a resize: the list is laid out in the next frame. */
  #layout = () => void this.#window.layout();
  /** The first message shown as of the list's top last in view (of the tab `#topTab`), and how many shown now come before it (above it, newer). */
  #top?: Message;
  #topTab?: InboxTab;
  #new?: number;
  /** Messages `renderMessage` declined (returned false): their rows are built in. */
  #declined = new WeakSet<Message>();
  /** The light-DOM hosts of custom rendering, by slot name. */
  #hosts = new Map<string, Host>();
  /** The hooks in use when the hosts were last rendered. */
  #hooksRendered = '';
  /**
   * The hooks in use: `Message` alone, or the finer ones that are set; looked up once an update
   * (setting one updates the element that has it, and the bell updates its feed), not for every row.
   */
  #hooks: Hook[] = [];

  constructor() {
    super();
    this.embedded = false;
    this.tab = 'all';
    this.addEventListener('notif-read-change', ({ detail: { messageIds, read } }) => {
      if (read && messageIds != 'all')
        for (const id of messageIds) {
          this.#lingering.add(id);
          setTimeout(() => {
            if (this.#lingering.delete(id)) this.requestUpdate();
          }, LINGER);
        }
    });
  }

  /** Focuses the message holding the list's tab stop (or the feed's first control when there is none). */
  override focus(options?: FocusOptions) {
    const list = [...this.renderRoot.querySelectorAll<NotifMessage>('notif-message')];
    (list.find((m) => m.active) ?? list[0] ?? this.renderRoot.querySelector('button'))?.focus(options);
  }

  /** The list of the tab shown, or null while there is no store. */
  get #list(): FeedList | null {
    return this.state?.lists[this.tab] ?? null;
  }

  protected override storeChanged(store: InboxStoreApi, attached: boolean) {
    if (attached) {
      this.#opened = this.tab;
      store.feedOpened(this.#opened);
    } else store.feedClosed(this.#opened);
    // While the first page is in flight, not in its first render: a row rendered once, out of the
    // DOM and thrown away, which prepares the rows' templates (Lit does so on a template's first
    // use), compiles their code and builds the formatters of their dates (the page's first Intl
    // formatter alone takes tens of ms, the full date's some ms after it). (Another version that
    // registered <notif-message> first may not render this way: then there is nothing to prepare.)
    const li = this.#window.row({ createdAt: 0 } as unknown as Message, 0, 0);
    try {
      render((li.firstChild as NotifMessage).render(), li);
    } catch {}
  }


  /** The messages the list shows: the Unread tab's unread ones, and one read there for a moment (LINGER ms) before it leaves. */
  #shown(): readonly Message[] {
    const messages = this.#list?.messages ?? [];
    return this.tab == 'unread' ? messages.filter((m) => !m.read || this.#lingering.has(m._id)) : messages;
  }

  protected override updated() {
    const messages = this.#shown();
    // The tab stop: the active message when it is loaded, else the first.
    if (!messages.some((m) => m._id === this.#activeId)) this.#activeId = messages[0]?._id;
    // The rendered rows' custom pieces follow every layout (rows come and go as the view moves), and
    // more messages load when the rows reach the last one: the list window's callback above.
    void this.#window.layout(this.renderRoot.querySelector('ul'), messages, this.#activeId);
    // When the app changed the hooks, also this update at once (the layout puts the rows it keeps up
    // to date before its first await): the hosts no hook needs now are gone once the update completes.
    if (`${this.#hooks}` != this.#hooksRendered) this.#render();
  }

  // The page's scrolling and resizing move the view over the list (the panel's scrolls are heard by it).
  override connectedCallback() {
    super.connectedCallback();
    addEventListener('scroll', this.#layout, true);
    addEventListener('resize', this.#layout);
  }

  override disconnectedCallback() {
    super.disconnectedCallback();
    removeEventListener('scroll', this.#layout, true);
    removeEventListener('resize', this.#layout);
    this.#render(true);
  }

  /** The custom pieces of a row: those of the hooks in use, but none for a row renderMessage declined (`custom` false). */
  #pieces(custom: boolean): Hook[] {
    return custom || this.#hooks[0] != 'Message' ? this.#hooks : [];
  }

  /**
   * Gives every shown row's custom pieces their slot and host (custom-hosts.ts: a file of its own in
   * both builds, loaded once a hook is set, as only some pages render messages their own way);
   * `gone`: the rows went, and their hosts with them.
   */
  #render(gone?: boolean) {
    this.#hooksRendered = `${this.#hooks}`;
    const renderHosts = loadedRenderHosts();
    if (renderHosts) {
      this.#hosts = renderHosts({
        feed: this,
        outer: this.outer,
        previous: this.#hosts,
        pieces: (custom) => this.#pieces(custom),
        declined: this.#declined,
        gone,
      });
    }
    else if (!gone && this.#hooks.length) void import('./custom-hosts.ts').then(() => this.#render());
  }

  /**
   * New messages above a list scrolled down stay out of view (the list window keeps the rows in view in place): counted for
   * the button, against the first message shown while the top was in view (or when the first ones came).
   */
  protected override willUpdate(changed: PropertyValues<this>) {
    super.willUpdate(changed);
    // Another tab: the store keeps the one shown fresh.
    const store = this.inbox;
    if (store && this.tab !== this.#opened) {
      store.feedClosed(this.#opened);
      this.#opened = this.tab;
      store.feedOpened(this.tab);
    }
    const inUse = HOOKS.filter((piece) => hook(this.outer, piece));
    this.#hooks = inUse[0] == 'Message' ? ['Message'] : inUse;
    const messages = this.#shown();
    // Another tab's list, or an empty one, starts again from its first message: a tab switched here
    // or by a feed sharing the tab, a list being loaded, or none while the element is out of the page
    // (it renders once without its store: put back, its list may be another tab's).
    const tab = this.tab;
    if (!this.#window.scrolled || !this.#top || !messages[0] || tab !== this.#topTab) this.#top = messages[0];
    this.#topTab = tab;
    // In the list's order (createdAt, then _id): messages made at the same time as it can be above it too.
    this.#new = messages.filter((m) => newestFirst(m, this.#top!) < 0).length;
  }

  /** The panel when it scrolls (inside the bell), else null: the page scrolls. */
  get #panel(): HTMLElement | null {
    return this.embedded ? this.renderRoot.querySelector('#panel') : null;
  }

  /**
   * Loads pages while the end of the list is near the view and the store makes progress. A page
   * that brought nothing (superseded by a refresh, or failed) is retried a few times with backoff,
   * since nothing else asks again while the view stays at the end.
   */
  async #pump() {
    const store = this.inbox;
    // A run asked for while one is running is not needed: that one looks again after each await.
    if (!store || this.#pumping) return;
    this.#pumping = true;
    try {
      // (`await null`: never change state inside the update that asked.)
      // The list window says whether its rows reach the last message (it looks again at every layout,
      // a page rendered included).
      for (await null; this.#window.atEnd; ) {
        const tab = this.tab;
        const list = store.state.lists[tab];
        // (`loading` is the first page's status: never with `loaded`.)
        if (!list.loaded || !list.hasMore || list.loadingMore || list.status === 'error') break;
        const before = list.messages.length;
        await store.loadMore(tab);
        await this.updateComplete;
        const after = store.state.lists[tab];
        if (after.messages.length <= before) {
          // Stalled: retried with backoff (a stalled run still holds the pump; the timer fires later).
          if (after.hasMore && this.#stalls < MAX_STALLS) {
            clearTimeout(this.#stallTimer);
            this.#stallTimer = setTimeout(() => void this.#pump(), STALL_BACKOFF * 2 ** this.#stalls);
            this.#stalls++;
          }
          break;
        }
        this.#stalls = 0;
      }
    } finally {
      this.#pumping = false;
    }
  }

  override render() {
    const list = this.#list;
    const locale = localeOf(this);
    const strings = translationFor(locale);
    const tab = this.tab;
    // In <notif-bell>'s popover, a close button (a page may set `embedded` on a feed of its own: none there).
    const popover = (this.getRootNode() as Partial<ShadowRoot>).host as (Element & { hide?(): void }) | undefined;
    return html`<section part="base" aria-labelledby="title" @keydown=${(event: KeyboardEvent) => toList(event, this)}>
        <header part="header">
          <slot name="header"><h2 part="title" id="title">${strings.notifications}</h2></slot>
          <button part="mark-all-button" class="ghost all" title=${strings.markAllRead} ?disabled=${!list?.messages.some((m) => !m.read)} @click=${() => {
            void this.inbox?.markAllRead();
            emit(this, 'notif-read-change', { messageIds: 'all', read: true });
          }}>${checkAllIcon}<span>${strings.markAllRead}</span></button><slot name="header-actions"></slot>${popover?.hide
            ? html`<button part="close-button" class="ghost close" aria-label=${strings.close} title=${strings.close} @click=${() => popover.hide!()}>${closeIcon}</button>`
            : nothing}
        </header>
        <div part="tabs" class="tabs" role="tablist" aria-label=${strings.feedTabs} @keydown=${this.#onTabsKey}>${(['all', 'unread'] as const).map(
            (id) => html`<button
              part="tab ${id === tab ? 'tab-selected' : ''}"
              class="tab"
              role="tab"
              id="tab-${id}"
              aria-selected=${id === tab}
              aria-controls="panel"
              tabindex=${id === tab ? 0 : -1}
              @click=${() => this.#selectTab(id)}
            >${id === 'unread' ? strings.tabUnread : strings.tabAll}</button>`,
          )}</div>
        <div part="panel" id="panel" role="tabpanel" aria-labelledby="tab-${tab}" aria-busy=${!list?.loaded} @scroll=${this.#layout}>${
          this.#new
            ? html`<button part="new-button" class="new" @click=${() => this.#focus(0)}>${newNotifications(locale, this.#new)}</button>`
            : nothing
        }${this.#renderBody(list, strings)}${
          list?.loadingMore ? html`<div part="loading-more" class="more">${strings.loadingMore}</div>` : nothing
        }</div>${this.liveRegion()}</section>`;
  }

  /** Shows a tab from its top, and says so. */
  #selectTab(tab: InboxTab) {
    if (tab == this.tab) return;
    this.#panel?.scrollTo(0, 0);
    this.tab = tab;
    emit(this, 'notif-tab-change', { tab });
  }

  #renderBody(list: FeedList | null, strings: Translation) {
    const status = list?.status;
    const error = status === 'error';
    const failed = error || status === 'offline';
    // People read that notifications are unavailable (a missing setting, a refused inbox), or that they could not be loaded.
    const title = this.unavailable ? strings.unavailable : strings.errorTitle;
    const retry = html`<button part="retry-button" class="outline retry" @click=${() => this.inbox?.refresh()}>${strings.retry}</button>`;
    // The error state: unavailable with no store, the first page failed, or an error and nothing to show.
    if (!list ? this.unavailable : !list.loaded ? failed : error && !list.messages.length) {
      return html`<div part="error" class="state" role="alert"><slot name="error">${alertIcon}<p>${title}</p>${
        this.unavailable ? nothing : html`<p>${strings.errorHint}</p>`
      }</slot>${list ? retry : nothing}</div>`;
    }
    if (!list?.loaded) {
      return html`<div part="skeleton"><slot name="loading">
        <span class="sr-only">${strings.loading}</span>${Array(SKELETON_ROWS).fill(html`<div class="skeleton"><i class="bone"></i><i class="bone"></i><i class="bone"></i></div>`)}</slot></div>`;
    }
    // The Unread tab shows unread messages, and one read there for a moment (LINGER ms) before it leaves.
    const messages = this.#shown();
    const banner = failed
      ? html`<div part="error" class="banner" role=${error ? 'alert' : 'status'}>${alertIcon}<span>${error ? title : strings.offline}</span>${error ? retry : nothing}</div>`
      : nothing;
    if (!messages.length) {
      const unread = this.tab === 'unread';
      return html`${banner}<div part="empty" class="state">
          <slot name="empty">${inboxIcon}<p>${unread ? strings.emptyUnread : strings.emptyAll}</p>
            <p>${unread ? strings.emptyUnreadHint : strings.emptyAllHint}</p>
          </slot>
        </div>`;
    }
    return html`${banner}<ul part="list" role="list" @keydown=${this.#onListKey} @focusin=${(event: FocusEvent) => {
        // The row focus is in (or in content an app slotted into it).
        const id = rowOf(event)?.message?._id;
        if (id && id != this.#activeId) {
          this.#activeId = id;
          this.requestUpdate();
        }
      }}></ul>`;
  }

  /**
   * The tabs (the ARIA tabs pattern, selection following focus): ArrowLeft / ArrowRight move to the
   * previous and next tab, wrapping around; Home and End to the first and last. The tab is selected.
   */
  #onTabsKey = (event: KeyboardEvent) => {
    const tabs = [...this.renderRoot.querySelectorAll<HTMLElement>('.tab')];
    const index = navigationIndex(event.key, tabs.indexOf(event.target as HTMLElement), tabs.length, { orientation: 'horizontal', wrap: true });
    if (index === undefined) return;
    event.preventDefault();
    tabs[index]!.focus();
    tabs[index]!.click();
  };

  /**
   * The list (roving focus; unless a control used the key or a modifier is held): ArrowUp /
   * ArrowDown, Home and End move between the loaded messages, rendered or not (one is scrolled in first).
   */
  #onListKey = (event: KeyboardEvent) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const messages = this.#shown();
    // The message of the row the key was pressed in (or in content an app slotted into it).
    const current = messages.indexOf(rowOf(event)?.message as Message);
    const index = navigationIndex(event.key, current, messages.length, { orientation: 'vertical', wrap: false });
    if (index === undefined) return;
    event.preventDefault();
    this.#focus(index);
  };

  /**
   * Moves the tab stop to a message and focuses it: a key, or the "new" button (which goes once the
   * list's top is in view: focus goes with the reader to the newest message, not to the page).
   */
  #focus(index: number) {
    const id = (this.#activeId = this.#shown()[index]!._id);
    this.requestUpdate();
    // The new tab stop is pinned, so rendered (where it belongs); focusing it scrolls it into view.
    void this.updateComplete
      .then(() => this.#window.layout())
      .then(() => (this.#window.rendered.get(id)?.firstChild as NotifMessage).focus());
  }
}
