// The unseen count, asked for every `interval` while this tab polls (it leads, or is alone; it is
// visible; no 401/403 stopped it; the stream is not open), with backoff after failures.
import type { NotifApiError } from '../../api/request.ts';
import type { UnseenCountResponse } from '../../api/types.ts';
import { isAbort, type StoreContext } from '../context.ts';
import { backoff } from './backoff.ts';

/** Answers that stop polling until refresh(): the service refuses this inbox. */
const REFUSED_STATUSES = [401, 403];
/** No such subscriber yet: not a failure, asked again at the usual pace. */
const NOT_FOUND = 404;

export interface PollerOptions {
  context: StoreContext;
  /** Milliseconds between two polls. */
  interval: number;
  /** Whether this tab polls now. */
  shouldPoll(): boolean;
  /** Whether mutations are in flight: a count answered meanwhile may predate them. */
  mutating(): boolean;
  /** A count the server answered (`quiet`: the caller fetches the first page itself). */
  counted(count: number, quiet: boolean): void;
}

export class Poller {
  #options: PollerOptions;
  #timer?: ReturnType<typeof setTimeout>;
  #failures = 0;
  /** Stopped by a 401/403 until restart(). */
  #halted = false;
  /** The latest count request: the answer to any other is superseded and ignored. */
  #controller?: AbortController;
  /** The count request in flight: callers meanwhile share it. */
  #counting?: Promise<void>;
  /** A count was answered while mutations were in flight: asked again once they end. */
  #askAgain = false;

  constructor(options: PollerOptions) {
    this.#options = options;
  }

  get halted(): boolean {
    return this.#halted;
  }

  /** The next poll in `delay` ms, if this tab polls (any poll scheduled before is dropped). */
  schedule(delay = this.#options.interval): void {
    clearTimeout(this.#timer);
    if (this.#options.shouldPoll()) this.#timer = setTimeout(() => void this.poll(), delay);
  }

  /** Drops the scheduled poll (hidden, offline); a wake polls again. */
  pause(): void {
    clearTimeout(this.#timer);
  }

  /** Stops: no poll scheduled, the request in flight aborted. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#controller?.abort();
    this.#controller = undefined;
    this.#counting = undefined;
  }

  /** Polls again after a halt (refresh()), its backoff from the start. */
  restart(): void {
    this.#halted = false;
    this.#failures = 0;
  }

  /** Asks for the count now; a failure is in the state, and the next poll backs off. */
  async poll(): Promise<void> {
    clearTimeout(this.#timer);
    try {
      await this.fetchCount();
    } catch (error) {
      if (isAbort(error)) return;
      const failure = error as NotifApiError;
      if (REFUSED_STATUSES.includes(failure.status)) {
        this.#halted = true;
        this.#options.context.setList(undefined, { status: 'error' });
        this.#options.context.fail(failure, 'poll');
        return;
      }
      if (!failure.status) this.#options.context.setList(undefined, { status: 'offline' });
      if (failure.status == NOT_FOUND) this.schedule();
      else {
        this.#failures++;
        this.schedule(backoff(this.#options.interval, this.#failures, failure));
      }
    }
  }

  /**
   * The unseen count, one request at a time: handed to `counted` and the next poll scheduled
   * (unless the answer came too late to use). Rejects when the request fails.
   */
  fetchCount(quiet = false): Promise<void> {
    this.#counting ??= this.#requestCount(quiet);
    return this.#counting;
  }

  async #requestCount(quiet: boolean): Promise<void> {
    const controller = new AbortController();
    this.#controller = controller;
    try {
      const { count } = await this.#options.context.call<UnseenCountResponse>('notifications/unseen', { signal: controller.signal });
      this.#failures = 0;
      this.schedule();
      if (controller !== this.#controller) return;
      if (this.#options.mutating()) {
        this.#askAgain = true;
        return;
      }
      this.#options.counted(count, quiet);
    } finally {
      this.#counting = undefined;
    }
  }

  /** The mutations in flight ended: a count answered meanwhile is asked for again. */
  mutationsSettled(): void {
    if (this.#askAgain && this.#options.shouldPoll()) void this.poll();
    this.#askAgain = false;
  }
}
