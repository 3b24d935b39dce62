import { html, nothing, type PropertyDeclarations } from 'lit';
import type { InboxConfig, InboxStoreApi } from '../store/types.ts';
import { LocalizeController } from '../i18n/localize.ts';
import { NotifElement } from './base-element.ts';
import { StoreController } from './store-controller.ts';

export type Theme = 'light' | 'dark' | 'auto';

/** Milliseconds between two announcements of new messages: more arriving meanwhile are summed. */
export const ANNOUNCE_INTERVAL = 5000;
/** The element that announces a store's new messages: one live region per store on the page. */
const announcers = new WeakMap<InboxStoreApi, InboxElement>();

/**
 * What `<notif-bell>` and `<notif-feed>` share: the configuration attributes (read by whichever of
 * them is outermost), the store connection and localization.
 */
export class InboxElement extends NotifElement {
  static override properties: PropertyDeclarations = {
    baseUrl: { attribute: 'base-url' },
    subscriberId: { attribute: 'subscriber-id' },
    apiKey: { attribute: 'api-key' },
    subscriberHash: { attribute: 'subscriber-hash' },
    feedIdentifier: { attribute: 'feed-identifier' },
    payload: { type: Object },
    pollInterval: { attribute: 'poll-interval', type: Number },
    pageSize: { attribute: 'page-size', type: Number },
    locale: { reflect: true },
    theme: { reflect: true },
    fetch: { attribute: false },
    store: { attribute: false },
  };

  /** The service's base URL (or your proxy's), e.g. `https://api.example.com`. */
  declare baseUrl: string | undefined;
  /** The subscriber whose inbox this is. */
  declare subscriberId: string | undefined;
  /** Development only: the API key is a secret; production pages use the proxy and `subscriber-hash`. */
  declare apiKey: string | undefined;
  /** HMAC-SHA256 of the subscriber id, checked by the proxy. */
  declare subscriberHash: string | undefined;
  /** Limits the inbox to one feed, or several separated by commas. */
  declare feedIdentifier: string | undefined;
  /** Limits the inbox to messages whose payload contains this partial object. */
  declare payload: Record<string, unknown> | undefined;
  /** Milliseconds between unseen-count checks (default 15000). */
  declare pollInterval: number | undefined;
  /** Messages per page, 1..100 (default 20). */
  declare pageSize: number | undefined;
  /** BCP 47 locale for texts, times and numbers; default: the page's language. */
  declare locale: string | undefined;
  /** Colour scheme: `light`, `dark`, or `auto` (follows the system). */
  declare theme: Theme | undefined;
  /** An authorised `fetch` supplied by the app (it adds its own credentials). */
  declare fetch: typeof globalThis.fetch | undefined;
  /** The store, handed down by an outer element or set by the app; wins over the attributes. */
  declare store: InboxStoreApi | null | undefined;

  protected readonly localize = new LocalizeController(this);
  protected readonly inbox = new StoreController(this, {
    attached: (store) => this.storeAttached(store, (this.heard = -1)),
    detached: (store) => this.storeDetached(store),
  });

  /** The unseen count last seen; -1 until the server has answered it (and after a change of store). */
  private heard = -1;
  private pending = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** Counts new messages (rises of the unseen count) for the live region. */
  protected override willUpdate() {
    const store = this.inbox.store;
    if (!store?.counted || !this.inbox.outermost) return;
    let owner = announcers.get(store);
    if (!owner?.isConnected) announcers.set(store, (owner = this));
    if (owner !== this) return;
    const count = store.state.unseenCount;
    if (this.heard >= 0 && count > this.heard) {
      this.pending += count - this.heard;
      if (!this.timer) this.flush();
    }
    this.heard = count;
  }

  /** Announces what is pending, then keeps quiet for ANNOUNCE_INTERVAL (and clears the region after). */
  private flush = () => {
    const n = this.pending;
    const live = this.renderRoot.querySelector('#live');
    this.pending = 0;
    this.timer = n ? setTimeout(this.flush, ANNOUNCE_INTERVAL) : undefined;
    if (live) live.textContent = n ? this.localize.fn('newNotifications', n, this.localize.number(n)) : '';
  };

  /** The polite live region, in the outermost element only. */
  protected liveRegion() {
    return this.inbox.outermost ? html`<div id="live" class="sr-only" role="status"></div>` : nothing;
  }

  /** The configuration from this element's attributes, or null when base-url or subscriber-id is missing. */
  inboxConfig(): InboxConfig | null {
    if (!this.baseUrl || !this.subscriberId) return null;
    const config: InboxConfig = { baseUrl: this.baseUrl, subscriberId: this.subscriberId };
    if (this.apiKey) config.apiKey = this.apiKey;
    if (this.subscriberHash) config.subscriberHash = this.subscriberHash;
    if (this.fetch) config.fetch = this.fetch;
    if (this.feedIdentifier) {
      const ids = this.feedIdentifier.split(',').map((s) => s.trim()).filter(Boolean);
      config.feedIdentifier = ids.length === 1 ? ids[0]! : ids;
    }
    if (this.payload && typeof this.payload === 'object') config.payload = this.payload;
    const poll = Number(this.pollInterval);
    if (Number.isFinite(poll) && poll > 0) config.pollInterval = poll;
    const size = Number(this.pageSize);
    if (Number.isFinite(size) && size > 0) config.pageSize = Math.min(100, Math.max(1, Math.round(size)));
    return config;
  }

  /** True when this element has a store to show, or will get one. */
  protected get configured(): boolean {
    return !!this.inbox.store || !this.inbox.outermost;
  }

  protected storeAttached(_store: InboxStoreApi, _?: unknown): void {}
  protected storeDetached(_store: InboxStoreApi): void {}
}
