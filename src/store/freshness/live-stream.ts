// The service's stream of changes (Server-Sent Events read with fetch, so the config's headers and
// an app's fetch apply), held by the leading tab. What it reads is heard here and relayed to the
// other tabs, which hear it alike (hear()): each tab keeps the last event id (a new leader resumes
// from it) and the service's retry. The new messages its events bring are told once per browser
// (tabs/arrivals.ts, loaded with this file).
import type { NotifApiError } from '../../api/request.ts';
import type { FeedResponse, Message } from '../../api/types.ts';
import type { StoreContext } from '../context.ts';
import { Arrivals } from '../tabs/arrivals.ts';
import type { TabLeadership } from '../tabs/leadership.ts';
import { FEED_FIELDS } from '../feed-pages.ts';
import { backoff } from './backoff.ts';
import { SseLineParser, type SseItem } from './sse-lines.ts';

/** The wait before reconnecting after the first drop, when the service sent no retry. */
const DEFAULT_RETRY = 1000;
/**
 * A retry under this is ignored: a stream that sends an event and ends would be asked for again
 * (with a count) at that pace, its backoff starting again at each event.
 */
const MIN_RETRY = 500;
/** A hidden tab keeps its open stream this long (a quick look elsewhere costs nothing), then closes it. */
export const HIDDEN_STREAM_TIME = 60_000;
/**
 * Answers that mean "no stream here": 404, 405, 501 (a server without it), 401, 403 (refused). Not
 * asked for again while this tab leads: the polls go on, and a refused one halts the store.
 */
const NO_STREAM_STATUSES = [401, 403, 404, 405, 501];

/**
 * What an event of the service's stream carries (its data, JSON; docs/service.md, "Live: the stream"): its
 * id, and the unseen count, a new message, or neither (refetch). `preview`: the message is cut to
 * fit the service's event size (its payload or longer texts left out); the feed has it whole.
 */
export interface LiveEvent {
  id?: string;
  count?: number;
  message?: Message;
  preview?: boolean;
}

/** Where the stream is. */
type StreamState =
  | { phase: 'idle' }
  | { phase: 'connecting'; controller: AbortController }
  /** Open: polling rests. Hidden, it closes when `closeTimer` fires. */
  | { phase: 'open'; controller: AbortController; closeTimer?: ReturnType<typeof setTimeout> }
  /** Dropped: reconnects when `timer` fires (or sooner after a wake). */
  | { phase: 'backoff'; timer: ReturnType<typeof setTimeout> }
  /** The service has none, or refused it: not asked for again until this tab leads anew. */
  | { phase: 'unsupported' };

export interface LiveStreamOptions {
  context: StoreContext;
  /** The browser tabs' leadership and relay: the new messages told once per browser go through it (`arrivals`). */
  tabs: TabLeadership;
  /** Whether this tab may hold the stream now (it polls: leads, visible, not halted). */
  mayConnect(): boolean;
  /** The stream opened: polling rests. */
  opened(): void;
  /** What one read of the stream completed: heard here and relayed to the other tabs. */
  read(items: SseItem[]): void;
  /** The stream dropped (not closed on purpose, not refused): poll meanwhile. Returns false when this tab should not reconnect (hidden). */
  dropped(): boolean;
  /** An event of the stream, heard in every tab. */
  event(event: LiveEvent): void;
  /** An event that could not be read: a refetch. */
  unreadable(): void;
}

/** How many of the newest messages are read to find one a stream event told of in a preview (others may have come just after it). */
const NEWEST_MESSAGES = 10;

/**
 * A new message whole, as the feed gives it, for a stream event that carried only a preview of it
 * (the service cuts large ones): found among the newest few messages. Undefined when they do not
 * hold it, or the request fails. (Here, in the stream's own file: only stream events need it.)
 */
export async function wholeMessage(context: StoreContext, messageId: string): Promise<Message | undefined> {
  try {
    const response = await context.call<FeedResponse>('notifications/feed', { query: { page: 0, limit: NEWEST_MESSAGES, fields: FEED_FIELDS } });
    return response.data?.find((message) => message._id === messageId);
  } catch {
    return undefined;
  }
}

/** An event's data as a LiveEvent, or undefined when it is not a JSON object. */
function parseEvent(data: string): LiveEvent | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  return typeof parsed === 'object' && parsed !== null ? (parsed as LiveEvent) : undefined;
}

export class LiveStream {
  /** The new messages its events tell of, each told once per browser. */
  readonly arrivals: Arrivals;
  #state: StreamState = { phase: 'idle' };
  #options: LiveStreamOptions;
  /** The last event's id, known to every tab: a new leader's stream resumes from it. */
  #lastEventId?: string;
  /** The service's retry, in ms (unset: DEFAULT_RETRY). */
  #retry?: number;
  /** Drops since the stream last sent an event. */
  #drops = 0;

  constructor(options: LiveStreamOptions) {
    this.#options = options;
    this.arrivals = new Arrivals(options.tabs);
  }

  /** A preview's event, once its message is read whole (as the preview when it cannot be). */
  async #wholeThen(event: LiveEvent, preview: Message) {
    const whole = await wholeMessage(this.#options.context, preview._id);
    this.#options.event({ ...event, message: whole ?? preview, preview: whole === undefined });
  }

  /** The stream is open (polling rests). */
  get open(): boolean {
    return this.#state.phase === 'open';
  }

  /**
   * Opens the stream unless one is open, on its way, waiting to reconnect or known to be missing;
   * asked after each unseen count this tab fetched (the service answers 404 for a subscriber it does
   * not know yet, as a server without the stream does: after a count, a 404 means "no stream", and
   * a new subscriber goes live with its first message).
   */
  async connect(): Promise<void> {
    const { context } = this.#options;
    if (this.#state.phase !== 'idle' || context.config.live == 'poll' || !this.#options.mayConnect()) return;
    const controller = new AbortController();
    this.#state = { phase: 'connecting', controller };
    try {
      const response = await context.call<Response>('notifications/stream', {
        signal: controller.signal,
        raw: true,
        headers: this.#lastEventId ? { 'last-event-id': this.#lastEventId } : undefined,
      });
      this.#state = { phase: 'open', controller };
      this.#options.opened();
      const parser = new SseLineParser();
      const write = (text: string) => this.#options.read(parser.push(text));
      await response.body!.pipeThrough(new TextDecoderStream()).pipeTo(new WritableStream({ write }));
      this.#dropped(controller); // the service ended it
    } catch (error) {
      this.#dropped(controller, error as NotifApiError);
    }
  }

  /** The stream `controller` belonged to ended or failed. */
  #dropped(controller: AbortController, error?: NotifApiError) {
    const state = this.#state;
    // Closed on purpose (close()), and perhaps another one opened since.
    if (!('controller' in state) || state.controller !== controller) return;
    if (error && NO_STREAM_STATUSES.includes(error.status)) {
      this.#state = { phase: 'unsupported' };
      return;
    }
    this.#state = { phase: 'idle' };
    if (!this.#options.dropped()) return;
    const wait = backoff(this.#retry ?? DEFAULT_RETRY, this.#drops, error);
    this.#drops++;
    const timer = setTimeout(() => {
      this.#state = { phase: 'idle' };
      void this.connect();
    }, wait);
    this.#state = { phase: 'backoff', timer };
  }

  /** Closes the stream, or stops waiting to reconnect (no reconnect follows); a later connect() asks again. */
  close(): void {
    const state = this.#state;
    if (state.phase === 'connecting' || state.phase === 'open') state.controller.abort();
    if (state.phase === 'open') clearTimeout(state.closeTimer);
    if (state.phase === 'backoff') clearTimeout(state.timer);
    this.#state = { phase: 'idle' };
  }

  /** The tab is hidden: an open stream closes (`close`) after HIDDEN_STREAM_TIME unless the tab comes back. Returns whether it is open. */
  closeLater(close: () => void): boolean {
    const state = this.#state;
    if (state.phase !== 'open') return false;
    state.closeTimer ??= setTimeout(close, HIDDEN_STREAM_TIME);
    return true;
  }

  /**
   * The tab is visible, focused or back online: an open stream stays, and a reconnect waiting for
   * its backoff is not waited for (the count this wakes for opens it again, connect()).
   */
  wake(): void {
    const state = this.#state;
    if (state.phase === 'open') {
      clearTimeout(state.closeTimer);
      state.closeTimer = undefined;
    } else if (state.phase === 'backoff') {
      clearTimeout(state.timer);
      this.#state = { phase: 'idle' };
    }
  }

  /** What the stream said (here, or relayed by the leading tab). */
  hear(items: SseItem[]): void {
    for (const item of items) {
      if (item.type === 'retry') {
        if (item.milliseconds >= MIN_RETRY) this.#retry = item.milliseconds;
        continue;
      }
      this.#drops = 0; // the stream works: its backoff starts again
      const event = parseEvent(item.data);
      if (!event) {
        this.#options.unreadable();
        continue;
      }
      const id = event.id ?? item.id;
      if (id) this.#lastEventId = id;
      if (event.preview && event.message) {
        void this.#wholeThen(event, event.message);
        continue;
      }
      this.#options.event(event);
    }
  }
}
