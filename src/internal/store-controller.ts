// Connects an element to an InboxStore while it holds one: reference-counted connection, the
// subscription (the element updates after every change of state) and the store's own events.
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { InboxErrorDetail, InboxState, InboxStoreApi } from '../store/types.ts';
import type { Message } from '../api/types.ts';

/** The store's events an element passes on. */
export type StoreEventType = 'error' | 'message-received';
export type StoreEventDetail = InboxErrorDetail | { message: Message };

export interface StoreControllerOptions {
  /** The host took `store` (`attached`), or let it go. */
  attached?(store: InboxStoreApi, attached: boolean): void;
  /** The state of the store changed (also once as it is taken). */
  stateChanged?(state: InboxState): void;
  /** An `error` or `message-received` event of the store. */
  storeEvent?(type: StoreEventType, detail: StoreEventDetail): void;
}

const STORE_EVENTS: StoreEventType[] = ['error', 'message-received'];

export class StoreController implements ReactiveController {
  /** The store the host holds, or null. */
  store: InboxStoreApi | null = null;
  #host: ReactiveControllerHost;
  #options: StoreControllerOptions;
  #unsubscribe?: () => void;

  constructor(host: ReactiveControllerHost, options: StoreControllerOptions = {}) {
    this.#host = host;
    this.#options = options;
    host.addController(this);
  }

  hostDisconnected(): void {
    this.set(null);
  }

  /** Holds `next` (connected, subscribed, its events heard), letting the store held before go. */
  set(next: InboxStoreApi | null): void {
    const previous = this.store;
    if (next === previous) return;
    for (const type of STORE_EVENTS) {
      previous?.removeEventListener(type, this.#onStoreEvent);
      next?.addEventListener(type, this.#onStoreEvent);
    }
    if (previous) {
      this.#unsubscribe!();
      this.#options.attached?.(previous, false);
      previous.disconnect();
    }
    this.store = next;
    if (next) {
      next.connect();
      this.#unsubscribe = next.subscribe(this.#onState);
      this.#options.attached?.(next, true);
      this.#onState(next.state);
    }
    this.#host.requestUpdate();
  }

  #onState = (state: InboxState) => {
    this.#options.stateChanged?.(state);
    // Never inside the host's own update: a store change there would be lost.
    queueMicrotask(() => this.#host.requestUpdate());
  };

  #onStoreEvent = (event: Event) => {
    this.#options.storeEvent?.(event.type as StoreEventType, (event as CustomEvent<StoreEventDetail>).detail);
  };
}
