// Each new message told of once per browser (the store's `message-received`, the elements'
// `notif-message-received`), in one tab: the first to take the message's Web Lock, a visible tab
// first. Only the service's stream tells of new messages, so this lives with the stream's code and
// loads with it (freshness/live-stream.ts).
import type { TabLeadership } from './leadership.ts';

/** How long the first tab to tell of a new message holds its lock, so later tabs find it taken. */
const ARRIVAL_LOCK_TIME = 10_000;
/** How long a hidden tab waits before trying to tell of a new message (a visible tab goes first). */
const HIDDEN_TAB_DELAY = 100;
/** How many of the latest messages a tab remembers, in each of its lists below. */
const REMEMBERED_ARRIVALS = 200;

export class Arrivals {
  readonly #tabs: TabLeadership;
  /**
   * The messages this tab was asked to tell of, newest last. A tab that closes lets its locks go:
   * the tab leading after it may hear a message again in the stream's catch-up, and the message's
   * lock no longer says it was told.
   */
  #asked = new Set<string>();
  /**
   * The messages told of in some tab (this one, or another that said so). An arrival's lock goes
   * with the tab that told, and a tab slow to ask for it (a busy machine) could find it free.
   */
  #told = new Set<string>();

  constructor(tabs: TabLeadership) {
    this.#tabs = tabs;
  }

  /** Another tab told of `messageId`. */
  toldElsewhere(messageId: string): void {
    remember(this.#told, messageId);
  }

  /**
   * Calls `tell` in one tab of the browser for `messageId` (a message's id is unique to it): the
   * first tab to take that message's lock tells (a visible tab first: hidden ones try a moment
   * later), keeps the lock a while so later tabs find it taken, and tells the others it told (a
   * tab that asks for the lock only after the teller closed finds it free). Alone, the tab just
   * tells. A message this tab heard of before is not told again (from a catch-up after the leader
   * closed).
   */
  tellOnce(messageId: string, hidden: boolean, tell: () => void): void {
    if (this.#asked.has(messageId)) return;
    remember(this.#asked, messageId);
    setTimeout(
      () => {
        if (!this.#tabs.shared) {
          tell();
          return;
        }
        void navigator.locks.request('notif:' + messageId, { ifAvailable: true }, (lock) => {
          if (!lock || this.#told.has(messageId)) return;
          remember(this.#told, messageId);
          this.#tabs.post({ type: 'told', messageId });
          tell();
          return new Promise((release) => setTimeout(release, ARRIVAL_LOCK_TIME));
        });
      },
      hidden ? HIDDEN_TAB_DELAY : 0,
    );
  }
}

/** Adds `messageId` to `ids`, keeping the newest REMEMBERED_ARRIVALS (a Set keeps the order ids were added in). */
function remember(ids: Set<string>, messageId: string): void {
  ids.add(messageId);
  if (ids.size <= REMEMBERED_ARRIVALS) return;
  const oldest = ids.values().next().value;
  if (oldest !== undefined) ids.delete(oldest);
}
