// One tab per browser leads for each (service, subscriber): it holds a Web Lock of the store's
// name, polls or holds the stream, and shares what it hears over a BroadcastChannel of that name;
// every tab shares its mutations there too. Hidden tabs leave leadership; visible ones queue for it.
import type { MessageChange } from '../context.ts';
import type { SseItem } from '../freshness/sse-lines.ts';

/** What tabs tell each other. */
export type RelayNote =
  /** A tab arrived: the leader answers with the count. */
  | { type: 'hello' }
  /** The leader's poll: the unseen count. */
  | { type: 'count'; count: number }
  /** A mutation, or the server's answer to one. */
  | { type: 'change'; change: MessageChange }
  /** What one read of the leader's stream completed. */
  | { type: 'stream'; items: SseItem[] }
  /** A mutation was rolled back: the first page is stale. */
  | { type: 'stale' }
  /** A tab told of a new message (tabs/arrivals.ts): no other tab tells of it, even once that tab has closed. */
  | { type: 'told'; messageId: string };

/** What a tab does with what the others tell it. */
export interface RelayListener {
  /** The unseen count to tell a tab that arrives, when this tab leads (undefined: none known yet). */
  countToShare(): number | undefined;
  count(count: number): void;
  stream(items: SseItem[]): void;
  change(change: MessageChange): void;
  stale(): void;
  /** Another tab told of a new message (tabs/arrivals.ts tells each once per browser). */
  told(messageId: string): void;
}

export class TabLeadership {
  readonly #name: string;
  #channel?: BroadcastChannel;
  #leader = false;
  /** A pending lock request, or the held lock (aborting it releases). */
  #lock?: AbortController;

  /** `name`: the lock's and the channel's (it carries no secret). */
  constructor(name: string) {
    this.#name = name;
  }

  /** Other tabs may share this store (locks and BroadcastChannel exist): then only the leader polls. */
  get shared(): boolean {
    return !!this.#channel;
  }

  get leader(): boolean {
    return this.#leader;
  }

  /** Opens the channel (where the browser has locks and BroadcastChannel) and says hello. */
  join(listener: RelayListener): void {
    if (!self.BroadcastChannel || !navigator.locks) return;
    this.#channel = new BroadcastChannel(this.#name);
    this.#channel.onmessage = ({ data }: MessageEvent<RelayNote>) => this.#hear(data, listener);
    this.post({ type: 'hello' });
  }

  #hear(note: RelayNote, listener: RelayListener) {
    switch (note.type) {
      case 'hello': {
        const count = listener.countToShare();
        if (this.#leader && count !== undefined) this.post({ type: 'count', count });
        break;
      }
      case 'count':
        listener.count(note.count);
        break;
      case 'stream':
        listener.stream(note.items);
        break;
      case 'change':
        listener.change(note.change);
        break;
      case 'stale':
        listener.stale();
        break;
      case 'told':
        listener.told(note.messageId);
        break;
    }
  }

  /** Resigns and closes the channel. */
  leave(): void {
    this.resign();
    this.#channel?.close();
    this.#channel = undefined;
  }

  /**
   * Queues for leadership (once: a tab queued or leading does nothing). When the lock is granted
   * and `mayLead()` still holds, the tab leads (`elected`) until resign(); else it lets the lock go.
   */
  campaign(mayLead: () => boolean, elected: () => void): void {
    if (!this.#channel || this.#leader || this.#lock) return;
    const lock = new AbortController();
    this.#lock = lock;
    navigator.locks
      .request(this.#name, { signal: lock.signal }, () => {
        if (!mayLead()) {
          this.#lock = undefined;
          return;
        }
        this.#leader = true;
        elected();
        return new Promise<void>((release) => {
          lock.signal.onabort = () => release();
        });
      })
      .catch(() => {
        // Aborted while queued: resigned before it was granted.
      });
  }

  /** Stops leading (or queuing): the lock goes to the next tab in line. */
  resign(): void {
    this.#lock?.abort();
    this.#lock = undefined;
    this.#leader = false;
  }

  post(note: RelayNote): void {
    this.#channel?.postMessage(note);
  }
}
