import { html, nothing, type PropertyDeclarations } from 'lit';
import type { InboxConfig, InboxErrorDetail, InboxState, InboxStoreApi } from '../store/types.ts';
import { getInboxStore } from '../store/index.ts';
import { localeOf, newNotifications } from '../i18n/localize.ts';
import { NotifElement, emit } from './base-element.ts';
import { warnApiKeyOnce } from './url.ts';
import type { MessageRenderer } from '../components/notif-message/notif-message.component.ts';

export type Theme = 'light' | 'dark' | 'auto';

/**
 * The pieces of a message an app may render itself, each with its `render<Piece>` property and its
 * slot of the row (the name in lower case).
 */
export const HOOKS = ['Message', 'Avatar', 'Subject', 'Body', 'Actions'] as const;
export type Hook = (typeof HOOKS)[number];

/** Milliseconds between two announcements of new messages: more arriving meanwhile are summed. */
export const ANNOUNCE_INTERVAL = 5000;
/** The element that announces a store's new messages: one live region per store on the page. */
const announcers = new WeakMap<InboxStoreApi, InboxElement>();

/**
 * What `<notif-bell>` and `<notif-feed>` share: the configuration attributes (read by whichever of
 * them is outermost), the connection to the page's InboxStore (re-rendering on every change; the
 * outermost element turns the store's errors and unseen-count changes into `notif-*` events), and
 * the live region.
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
    live: {},
    locale: { reflect: true },
    theme: { reflect: true },
    fetch: { attribute: false },
    store: { attribute: false },
    ...Object.fromEntries(HOOKS.map((h) => [`render${h}`, { attribute: false }])),
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
  /** `auto` (default): the service's stream of changes when it has one, else polling; `poll`: polling only. */
  declare live: 'auto' | 'poll' | undefined;
  /** BCP 47 locale for texts, times and numbers; default: the page's language. */
  declare locale: string | undefined;
  /** Colour scheme: `light`, `dark`, or `auto` (follows the system). */
  declare theme: Theme | undefined;
  /** An authorised `fetch` supplied by the app (it adds its own credentials). */
  declare fetch: typeof globalThis.fetch | undefined;
  /** The store, handed down by an outer element or set by the app; wins over the attributes. */
  declare store: InboxStoreApi | null | undefined;
  /** Renders each message's row the app's own way (a light-DOM host per shown row); wins over the finer hooks. */
  declare renderMessage: MessageRenderer | undefined;
  /** Renders each message's avatar the app's own way. */
  declare renderAvatar: MessageRenderer | undefined;
  /** Renders each message's subject the app's own way (inside the control that opens it: text, no controls). */
  declare renderSubject: MessageRenderer | undefined;
  /** Renders each message's body the app's own way. */
  declare renderBody: MessageRenderer | undefined;
  /** Renders each message's actions (instead of the CTA buttons) the app's own way. */
  declare renderActions: MessageRenderer | undefined;

  /** The store in use: `store`, or the page's store for the attributes. */
  protected inbox?: InboxStoreApi | null;
  /**
   * The outermost inbox element (set on connection): this one, or the notif-* element whose shadow
   * root holds it. Only the outermost configures, announces and fires store events.
   */
  protected outer?: InboxElement;
  #unsubscribe?: () => void;
  /** The unseen count last rendered; unset (NaN) until the server has answered it, and after a change of store. */
  #heard?: number;
  #count?: number;
  #pending = 0;
  /** Set while keeping quiet (0 when not). */
  #timer?: ReturnType<typeof setTimeout> | 0;
  /** What the live region says. */
  #said?: string;

  override connectedCallback() {
    super.connectedCallback();
    // A document has no host.
    const host = (this.getRootNode() as ShadowRoot).host as InboxElement | undefined;
    this.outer = host?.localName.startsWith('notif-') ? host : this;
    this.#sync();
  }

  override disconnectedCallback() {
    super.disconnectedCallback();
    this.#attach(null);
  }

  protected override willUpdate() {
    if (this.isConnected) this.#sync();
    // Counts new messages (rises of the unseen count) for the live region.
    const store = this.inbox;
    if (!store?.counted || this.outer != this) return;
    if (!announcers.get(store)?.isConnected) announcers.set(store, this);
    if (announcers.get(store) != this) return;
    const count = store.state.unseenCount;
    if (count > this.#heard!) {
      this.#pending += count - this.#heard!;
      if (!this.#timer) this.#flush();
    }
    this.#heard = count;
  }

  /** Announces what is pending, then keeps quiet for ANNOUNCE_INTERVAL (and clears the region after). */
  #flush = () => {
    const n = this.#pending;
    this.#pending = 0;
    this.#timer = n && setTimeout(this.#flush, ANNOUNCE_INTERVAL);
    this.#said = n ? newNotifications(localeOf(this), n) : '';
    this.requestUpdate();
  };

  /** The polite live region, in the outermost element only. */
  protected liveRegion() {
    return this.outer == this ? html`<div id="live" class="sr-only" role="status">${this.#said}</div>` : nothing;
  }

  /** The configuration from this element's attributes, or null when base-url or subscriber-id is missing. */
  inboxConfig(): InboxConfig | null {
    const { baseUrl, subscriberId, payload } = this;
    const ids = this.feedIdentifier?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
    // Only the options that are set: a key absent, not undefined.
    return baseUrl && subscriberId
      ? (Object.fromEntries(
          Object.entries({
            baseUrl,
            subscriberId,
            feedIdentifier: ids[1] ? ids : ids[0],
            payload: typeof payload == 'object' && payload,
            // The others as they are (NaN and 0 are dropped too; the store keeps both numbers in range).
            ...Object.fromEntries((['apiKey', 'subscriberHash', 'fetch', 'pollInterval', 'pageSize', 'live'] as const).map((k) => [k, this[k]])),
          }).filter((e) => e[1]),
        ) as unknown as InboxConfig)
      : null;
  }

  /** The state to render, or null while there is no store. */
  protected get state(): InboxState | null {
    return this.inbox?.state ?? null;
  }

  /** Truthy when this element has a store to show, or will get one. */
  protected get configured(): unknown {
    return this.inbox || this.outer != this;
  }

  /** Called with `true` as the element takes a store and with `false` as it lets it go. */
  protected storeChanged?(store: InboxStoreApi, attached: boolean): void;

  #sync() {
    const config = this.inboxConfig();
    // Warned about only when the attributes make the store.
    const next = this.store || (config && (warnApiKeyOnce(config.apiKey), getInboxStore(config)));
    if (next != this.inbox) this.#attach(next);
  }

  #attach(next: InboxStoreApi | null) {
    const prev = this.inbox;
    // The store's `error` and `message-received` are heard from the store the element is attached to.
    for (const type of ['error', 'message-received']) {
      prev?.removeEventListener(type, this.#onStoreEvent);
      next?.addEventListener(type, this.#onStoreEvent);
    }
    if (prev) {
      this.#unsubscribe!();
      this.storeChanged?.(prev, false);
      prev.disconnect();
    }
    this.inbox = next;
    this.#heard = NaN;
    if (next) {
      this.#count = next.state.unseenCount;
      next.connect();
      this.#unsubscribe = next.subscribe(this.#onState);
      this.storeChanged?.(next, true);
      this.#onState(next.state);
    }
    this.requestUpdate();
  }

  #onState = ({ unseenCount: count }: InboxState) => {
    if (count != this.#count && this.outer == this) emit(this, 'notif-unseen-count-change', { count });
    this.#count = count;
    // Never inside the element's own update: a store change there would be lost.
    queueMicrotask(() => this.requestUpdate());
  };

  /**
   * The store's `error` and `message-received`, as `notif-error` and `notif-message-received`.
   * People see a translated error message; developers get the detail in the event (and the store's
   * warning in the console).
   */
  #onStoreEvent = ({ type, detail }: Event & { detail?: InboxErrorDetail }) => {
    if (this.outer == this) emit(this, `notif-${type as 'error'}`, detail!);
  };
}
