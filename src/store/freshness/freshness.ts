// Keeping a store fresh: the unseen count polled (poller.ts) until the service's stream is open
// (live-stream.ts, its code loaded only once the service turns out to offer one, after the first
// count, or another browser tab relays one), one browser tab leading for all (tabs/leadership.ts),
// and the page's visibility, focus and network followed: a hidden or offline tab rests, a tab shown
// again wakes up.
import type { SseItem } from './sse-lines.ts';
import type { StoreContext } from '../context.ts';
import type { TabLeadership } from '../tabs/leadership.ts';
import type { LiveEvent, LiveStream } from './live-stream.ts';
import { Poller } from './poller.ts';

/** Heard on the window: visibilitychange bubbles to it from the document. */
const WINDOW_EVENTS = ['visibilitychange', 'focus', 'online', 'offline'];
/** A tab wakes (polls, refetches an open feed) at most once in this many ms, but at once when back online. */
const WAKE_INTERVAL = 1000;

/** Whether the page is hidden (a background browser tab, a minimised window). */
export const pageHidden = (): boolean => document.visibilityState === 'hidden';

export interface FreshnessOptions {
  context: StoreContext;
  tabs: TabLeadership;
  /** Milliseconds between two polls. */
  interval: number;
  /** Whether mutations are in flight. */
  mutating(): boolean;
  /** Whether elements are connected to the store. */
  connected(): boolean;
  /** An unseen count the service answered (`quiet`: the caller fetches the first page itself). */
  counted(count: number, quiet: boolean): void;
  /** An event of the stream (its data, parsed). */
  event(event: LiveEvent): void;
  /** The network is gone. */
  offline(): void;
  /** The tab is shown again, or back online (at most once a WAKE_INTERVAL): the store refreshes what it shows. */
  woke(): void;
  /** The stream could not be read on from where it was: every list is stale. */
  unreadable(): void;
}

export class Freshness {
  readonly poller: Poller;
  #options: FreshnessOptions;
  /** The service's stream, once its code is loaded. */
  #stream?: LiveStream;
  #streamLoaded?: Promise<LiveStream>;
  #lastWake?: number;

  constructor(options: FreshnessOptions) {
    this.#options = options;
    const { context, tabs } = options;
    this.poller = new Poller({
      context,
      interval: options.interval,
      shouldPoll: () => this.#polls,
      mutating: options.mutating,
      counted: (count, quiet) => {
        options.counted(count, quiet);
        tabs.post({ type: 'count', count });
        if (context.config.live != 'poll') void this.#openStream().then((stream) => stream.connect());
      },
    });
  }

  /** Starts following the page (the store's first element connected). */
  start() {
    for (const type of WINDOW_EVENTS) addEventListener(type, this.#onWindowEvent);
    this.#onWindowEvent();
  }

  /** Stops: no stream, no polls, no leadership (the store's last element left). */
  stop() {
    for (const type of WINDOW_EVENTS) removeEventListener(type, this.#onWindowEvent);
    this.#resign();
    this.#options.tabs.leave();
    this.poller.stop();
  }

  /** Stream items another browser tab relays (in the order they came: each waits for the same load). */
  hear(items: SseItem[]) {
    void this.#openStream().then((stream) => stream.hear(items));
  }

  /** Another browser tab told of a new message (after relaying the stream's items that brought it). */
  told(messageId: string) {
    void this.#openStream().then((stream) => stream.arrivals.toldElsewhere(messageId));
  }

  /** Calls `tell` in one tab of the browser for a new message of a stream's event (tabs/arrivals.ts). */
  tellOnce(messageId: string, tell: () => void) {
    this.#stream?.arrivals.tellOnce(messageId, pageHidden(), tell);
  }

  /** The service's stream (its code loaded the first time). */
  #openStream(): Promise<LiveStream> {
    const { context, tabs } = this.#options;
    this.#streamLoaded ??= import('./live-stream.ts').then(({ LiveStream }) => {
      const stream: LiveStream = new LiveStream({
        context,
        tabs,
        mayConnect: () => this.#polls,
        opened: () => this.poller.schedule(), // none: polling rests while the stream is open
        read: (items) => {
          stream.hear(items);
          tabs.post({ type: 'stream', items });
        },
        dropped: () => {
          if (pageHidden()) {
            this.#resign();
            return false;
          }
          void this.poller.poll();
          return true;
        },
        event: (event) => this.#options.event(event),
        unreadable: () => this.#options.unreadable(),
      });
      this.#stream = stream;
      return stream;
    });
    return this.#streamLoaded;
  }

  /**
   * Polls while this tab leads (or is alone: no locks/BroadcastChannel), visible and not stopped by a
   * 401/403, and the stream is not open.
   */
  get #polls() {
    const { tabs, connected } = this.#options;
    const leads = tabs.leader || !tabs.shared;
    return connected() && !pageHidden() && !this.poller.halted && leads && !this.#stream?.open;
  }

  /**
   * Page visibility and the window's focus, online and offline events (and a check at start):
   * offline or hidden stops polling (a hidden tab also leaves leadership); visible, the tab campaigns
   * for leadership and wakes up (at once when back online).
   */
  #onWindowEvent = (event?: Event) => {
    const type = event?.type;
    if (type === 'offline' || pageHidden()) {
      this.poller.pause();
      if (type === 'offline') this.#options.offline();
      // Hidden, a tab keeps its open stream for a minute; else it leaves leadership at once.
      else if (!this.#stream?.closeLater(() => this.#resign())) this.#resign();
      return;
    }
    this.#stream?.wake();
    // Visible tabs queue for the lock; the holder polls.
    this.#options.tabs.campaign(
      () => this.#options.connected() && !pageHidden(),
      () => void this.poller.poll(),
    );
    // Wake up: the count (when this tab polls) and the first page (when a feed is open), at most
    // once a WAKE_INTERVAL but at once when back online.
    const now = Date.now();
    if (type !== 'online' && this.#lastWake !== undefined && now - this.#lastWake < WAKE_INTERVAL) return;
    this.#lastWake = now;
    if (this.#polls) void this.poller.poll();
    this.#options.woke();
  };

  /** Leaves leadership, and closes the stream (on purpose: no reconnect). */
  #resign() {
    this.#options.tabs.resign();
    this.#stream?.close();
  }
}
