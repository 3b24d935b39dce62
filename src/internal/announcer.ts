// The live region's announcements of new messages: rises of the unseen count, summed over
// ANNOUNCE_INTERVAL, said politely by one element per store on the page.
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { InboxStoreApi } from '../store/types.ts';

/** Milliseconds between two announcements of new messages: more arriving meanwhile are summed. */
export const ANNOUNCE_INTERVAL = 5000;
/** The element that announces a store's new messages: one live region per store on the page. */
const announcers = new WeakMap<InboxStoreApi, HTMLElement>();

export interface AnnouncerOptions {
  /** The store whose new messages the host announces, or null (it holds none, or is not the outermost element). */
  store(): InboxStoreApi | null;
  /** "`count` new notifications", in the host's language. */
  phrase(count: number): string;
}

export class AnnouncerController implements ReactiveController {
  /** What the live region says now. */
  text = '';
  #host: ReactiveControllerHost & HTMLElement;
  #options: AnnouncerOptions;
  /** The unseen count last heard; NaN until the server has answered one, and after a change of store. */
  #lastCount = NaN;
  /** New messages not yet announced. */
  #pending = 0;
  /** Set while keeping quiet after an announcement. */
  #timer?: ReturnType<typeof setTimeout>;

  constructor(host: ReactiveControllerHost & HTMLElement, options: AnnouncerOptions) {
    this.#host = host;
    this.#options = options;
    host.addController(this);
  }

  /** Before each update of the host: the count it is about to render. */
  hostUpdate(): void {
    const store = this.#options.store();
    if (store?.counted) this.#heard(store);
  }

  /** Another store: its count is not a rise. */
  reset(): void {
    this.#lastCount = NaN;
  }

  /** The store's unseen count as the host renders it: a rise is announced, unless another element announces for this store. */
  #heard(store: InboxStoreApi) {
    if (!announcers.get(store)?.isConnected) announcers.set(store, this.#host);
    if (announcers.get(store) != this.#host) return;
    const count = store.state.unseenCount;
    if (count > this.#lastCount) {
      this.#pending += count - this.#lastCount;
      if (!this.#timer) this.#flush();
    }
    this.#lastCount = count;
  }

  /** Announces what is pending, then keeps quiet for ANNOUNCE_INTERVAL (and clears the region after). */
  #flush = () => {
    const count = this.#pending;
    this.#pending = 0;
    if (count) {
      this.#timer = setTimeout(this.#flush, ANNOUNCE_INTERVAL);
      this.text = this.#options.phrase(count);
    } else {
      this.#timer = undefined;
      this.text = '';
    }
    this.#host.requestUpdate();
  };
}
