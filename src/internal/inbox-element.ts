import { html, nothing, type PropertyDeclarations, type PropertyValues } from 'lit';
import { ContextConsumer, createContext } from '@lit/context';
import type { InboxConfig, InboxErrorDetail, InboxState, InboxStoreApi } from '../store/types.ts';
import { getInboxStore } from '../store/index.ts';
import { localeOf, newNotifications } from '../i18n/localize.ts';
import { AnnouncerController } from './announcer.ts';
import { NotifElement, emit } from './base-element.ts';
import { HOOKS, type MessageRenderer } from './render-hooks.ts';
import { StoreController } from './store-controller.ts';
import { warnApiKeyOnce } from './url.ts';

export { ANNOUNCE_INTERVAL } from './announcer.ts';
export { HOOKS, type Hook } from './render-hooks.ts';

export type Theme = 'light' | 'dark' | 'auto';

/** What the outermost inbox element hands to the inbox elements inside it (`<notif-bell>` to its feed and preferences). */
export interface InboxContext {
  /** Its store, or null while it has none. */
  store: InboxStoreApi | null;
  /** Its configuration never came (CONFIGURATION_WAIT): notifications are unavailable. */
  unconfigured: boolean;
  /** The outermost element: it configures, announces, fires the store's events, and holds the render hooks. */
  outer: InboxElement;
}

/**
 * The context an outer element provides (@lit/context). Its key is a string, not a symbol, so a
 * bell and a feed from two copies of the package on one page still find each other.
 */
export const inboxContext = createContext<InboxContext | undefined>('notif-inbox');

/**
 * How long the outermost element waits for its configuration (`base-url` and `subscriber-id`, or a
 * store) before it says notifications are unavailable (ms). Until then it shows the loading state:
 * an app may set the attributes after load (once the user signed in).
 */
export const CONFIGURATION_WAIT = 10_000;

/** The HTTP statuses of a service that refuses this inbox (a wrong key or subscriber hash, a session ended). */
const REFUSED_STATUSES = [401, 403];

/** Whether `error` is the service refusing this inbox (401, 403): notifications are unavailable. */
export const isRefusal = (error: Error | null | undefined): boolean => REFUSED_STATUSES.includes((error as { status?: number } | null | undefined)?.status!);

/** The configuration attributes passed on as they are (NaN and 0 are dropped; the store keeps both numbers in range). */
const PLAIN_OPTIONS = ['apiKey', 'subscriberHash', 'fetch', 'pollInterval', 'pageSize', 'live'] as const;

/**
 * What `<notif-bell>`, `<notif-feed>` and `<notif-preferences>` share: the configuration attributes
 * (read by whichever of them is outermost), the connection to the page's InboxStore (a
 * StoreController: the element re-renders on every change; the outermost element turns the store's
 * errors and unseen-count changes into `notif-*` events), and the live region (an AnnouncerController).
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
    ...Object.fromEntries(HOOKS.map((hook) => [`render${hook}`, { attribute: false }])),
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
  /** Colour scheme: `auto` (the default: follows the system), `light` or `dark`. */
  declare theme: Theme | undefined;
  /** An authorised `fetch` supplied by the app (it adds its own credentials). */
  declare fetch: typeof globalThis.fetch | undefined;
  /** A store set by the app; wins over the attributes and over the store of an element around this one. */
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

  /** What the element around this one hands down (unset when this one is outermost). */
  #context?: InboxContext;
  /** The unseen count last told in `notif-unseen-count-change`. */
  #count?: number;
  /** Waits for the configuration while this element is outermost and has no store. */
  #configurationTimer?: ReturnType<typeof setTimeout>;
  /** The configuration never came (CONFIGURATION_WAIT): notifications are unavailable. */
  #unconfigured = false;
  #announcer = new AnnouncerController(this, {
    store: () => (this.outer == this ? this.inbox : null),
    phrase: (count) => newNotifications(localeOf(this), count),
  });
  #store = new StoreController(this, {
    attached: (store, attached) => {
      if (attached) {
        this.#announcer.reset();
        this.#count = store.state.unseenCount;
      }
      this.storeChanged?.(store, attached);
    },
    stateChanged: ({ unseenCount: count }) => {
      if (count != this.#count && this.outer == this) emit(this, 'notif-unseen-count-change', { count });
      this.#count = count;
    },
    // The store's `error` and `message-received`, as `notif-error` and `notif-message-received`.
    // People see a translated error message; developers get the detail in the event (and the
    // store's warning in the console).
    storeEvent: (type, detail) => {
      if (this.outer == this) emit(this, `notif-${type as 'error'}`, detail as InboxErrorDetail);
    },
  });

  constructor() {
    super();
    // Answered at once (during connection) by an outer element's provider, and again when its store changes.
    new ContextConsumer(this, {
      context: inboxContext,
      subscribe: true,
      callback: (context) => {
        this.#context = context;
        if (this.isConnected) this.#sync();
      },
    });
  }

  /** The store in use: `store`, the outer element's, or the page's store for the attributes. */
  protected get inbox(): InboxStoreApi | null {
    return this.#store.store;
  }

  /** The outermost inbox element: this one, or the one that holds it. Only it configures, announces and fires store events. */
  protected get outer(): InboxElement {
    return this.#context?.outer ?? this;
  }

  override connectedCallback() {
    // (An outer element's provider answers inside super.connectedCallback(), as the context is requested.)
    this.#context = undefined;
    super.connectedCallback();
    this.#sync();
  }

  override disconnectedCallback() {
    super.disconnectedCallback();
    clearTimeout(this.#configurationTimer);
    this.#configurationTimer = undefined;
  }

  protected override willUpdate(changed: PropertyValues<this>) {
    super.willUpdate(changed);
    if (this.isConnected) this.#sync();
  }

  /** The polite live region, in the outermost element only. */
  protected liveRegion() {
    return this.outer == this ? html`<div id="live" class="sr-only" role="status">${this.#announcer.text}</div>` : nothing;
  }

  /** The configuration from this element's attributes, or null when base-url or subscriber-id is missing. */
  inboxConfig(): InboxConfig | null {
    const { baseUrl, subscriberId, payload } = this;
    if (!baseUrl || !subscriberId) return null;
    const feeds = this.feedIdentifier?.split(',').map((id) => id.trim()).filter(Boolean) ?? [];
    const options: Record<string, unknown> = {
      baseUrl,
      subscriberId,
      feedIdentifier: feeds.length > 1 ? feeds : feeds[0],
      payload: typeof payload == 'object' ? payload : undefined,
    };
    for (const name of PLAIN_OPTIONS) options[name] = this[name];
    // Only the options that are set: a key absent, not undefined.
    return Object.fromEntries(Object.entries(options).filter(([, value]) => value)) as unknown as InboxConfig;
  }

  /** The state to render, or null while there is no store. */
  protected get state(): InboxState | null {
    return this.inbox?.state ?? null;
  }

  /** Whether this element's configuration never came (the outermost element's, CONFIGURATION_WAIT). */
  protected get unconfigured(): boolean {
    return this.#context?.unconfigured ?? this.#unconfigured;
  }

  /**
   * Whether notifications are unavailable: the configuration never came, or the service refuses this
   * inbox (401, 403). People read that they are unavailable; developers the console's warning and `notif-error`.
   */
  protected get unavailable(): boolean {
    return this.unconfigured || isRefusal(this.state?.error);
  }

  /** Called with `true` as the element takes a store and with `false` as it lets it go. */
  protected storeChanged?(store: InboxStoreApi, attached: boolean): void;

  /** Takes the store to use now: `store`, else the outer element's, else the page's store for the attributes. */
  #sync() {
    const next = this.store || this.#context?.store || this.#storeOfAttributes();
    this.#store.set(next || null);
    this.#awaitConfiguration(!next && this.outer == this);
  }

  /**
   * While `waiting` (outermost, no store), the loading state; after CONFIGURATION_WAIT, a console
   * warning and `notif-error` for the developer, and "unavailable" for the user. Configured, neither.
   */
  #awaitConfiguration(waiting: boolean) {
    if (!waiting) {
      clearTimeout(this.#configurationTimer);
      this.#configurationTimer = undefined;
      this.#unconfigured = false;
      return;
    }
    this.#configurationTimer ??= setTimeout(() => {
      this.#unconfigured = true;
      const error = new Error(`<${this.localName}> needs base-url and subscriber-id (or a store)`);
      console.warn('notif-inbox:', error.message);
      emit(this, 'notif-error', { error, action: 'configure' });
      this.requestUpdate();
    }, CONFIGURATION_WAIT);
  }

  #storeOfAttributes(): InboxStoreApi | null {
    const config = this.inboxConfig();
    if (!config) return null;
    // Warned about only when the attributes make the store.
    warnApiKeyOnce(config.apiKey);
    return getInboxStore(config);
  }
}
