import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { getInboxStore } from '../store/index.ts';
import type { InboxConfig, InboxErrorDetail, InboxState, InboxStoreApi } from '../store/types.ts';
import { emit } from './emit.ts';
import { warnApiKeyOnce } from './url.ts';

export interface StoreHost extends ReactiveControllerHost, HTMLElement {
  /** A store handed down by an outer element (or set by the app); wins over the attributes. */
  store?: InboxStoreApi | null | undefined;
  /** The configuration from the element's own attributes, or null when incomplete. */
  inboxConfig?(): InboxConfig | null;
}

function configKey(config: InboxConfig): string {
  const { fetch, ...rest } = config;
  return JSON.stringify(rest) + (fetch ? '+fetch' : '');
}

/**
 * Connects an element to its InboxStore: the one handed down by an outer element, or the shared one
 * for the element's own configuration (`getInboxStore`). Re-renders the host on every state change.
 * The outermost element also turns the store's errors and unseen-count changes into `notif-*` events.
 */
export class StoreController implements ReactiveController {
  store: InboxStoreApi | null = null;
  private unsubscribe: (() => void) | null = null;
  private isConnected = false;
  private key = '';
  private fetchFn: typeof fetch | undefined;
  private lastCount: number | null = null;

  constructor(
    private host: StoreHost,
    private hooks: { attached?(store: InboxStoreApi): void; detached?(store: InboxStoreApi): void } = {},
  ) {
    host.addController(this);
  }

  get state(): InboxState | null {
    return this.store?.state ?? null;
  }

  /** True when the host is not inside another notif-* element's shadow root. */
  get outermost(): boolean {
    const root = this.host.getRootNode();
    return !(root instanceof ShadowRoot && root.host.localName.startsWith('notif-'));
  }

  hostConnected() {
    this.isConnected = true;
    this.sync();
  }

  hostUpdate() {
    if (this.isConnected) this.sync();
  }

  hostDisconnected() {
    this.isConnected = false;
    this.attach(null);
  }

  private sync() {
    let next: InboxStoreApi | null = this.host.store ?? null;
    if (!next) {
      const config = this.host.inboxConfig?.() ?? null;
      if (config) {
        const key = configKey(config);
        if (this.store && key === this.key && config.fetch === this.fetchFn) return;
        this.key = key;
        this.fetchFn = config.fetch;
        if (config.apiKey) warnApiKeyOnce(config.apiKey);
        next = getInboxStore(config);
      }
    } else {
      this.key = '';
    }
    if (next !== this.store) this.attach(next);
  }

  private attach(next: InboxStoreApi | null) {
    const prev = this.store;
    if (prev) {
      this.unsubscribe?.();
      this.unsubscribe = null;
      prev.removeEventListener('error', this.onError);
      this.hooks.detached?.(prev);
      prev.disconnect();
    }
    this.store = next;
    this.lastCount = null;
    if (next) {
      this.lastCount = next.state.unseenCount;
      next.connect();
      next.addEventListener('error', this.onError);
      this.unsubscribe = next.subscribe((state) => this.onState(state));
      this.hooks.attached?.(next);
      this.onState(next.state);
    }
    this.host.requestUpdate();
  }

  private onState(state: InboxState) {
    if (this.lastCount !== null && state.unseenCount !== this.lastCount && this.outermost) {
      emit(this.host, 'notif-unseen-count-change', { count: state.unseenCount });
    }
    this.lastCount = state.unseenCount;
    this.scheduleUpdate();
  }

  private queued = false;
  /** One re-render per task for any number of store changes, and never inside the host's own update. */
  private scheduleUpdate() {
    if (this.queued) return;
    this.queued = true;
    queueMicrotask(() => {
      this.queued = false;
      this.host.requestUpdate();
    });
  }

  private onError = (event: Event) => {
    if (!this.outermost) return;
    const detail = (event as CustomEvent<InboxErrorDetail>).detail;
    if (!detail) return;
    emit(this.host, 'notif-error', { error: detail.error, action: detail.action, ...(detail.messageId ? { messageId: detail.messageId } : {}) });
  };
}
