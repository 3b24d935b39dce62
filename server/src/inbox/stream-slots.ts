// Limits of the stream (inbox/stream.ts, routes/stream.ts), so that no client can make one process hold or buffer
// without bound:
// - per subscriber (of one environment): at most `perSubscriber` open streams; a new one
//   ends the oldest. A browser holds one stream (its leader tab), a person a few devices; a stream
//   past that is most likely one whose connection died unseen (a laptop closed, a network change),
//   and refusing the new one would lock out the device in use while the dead one lingers.
// - per environment: at most `perEnvironment` (NOTIF_STREAMS_PER_ENVIRONMENT); past it a
//   new stream of that environment gets 503 with `Retry-After`, and its client polls meanwhile.
//   By default the same as the process's cap: a deployment of one environment can use every slot.
// - per process: at most `max` (NOTIF_MAX_STREAMS). A process that is full makes room for an
//   environment holding fewer streams than another: the new stream ends the oldest stream of the
//   environment that holds the most, as long as that one still holds more afterwards. So one
//   environment may fill an idle process, yet never keeps the others out: when the process is full,
//   every environment that wants streams ends up with an even share (or all it asks for, if less).
//   Otherwise a new stream gets 503 with `Retry-After`, and the client polls meanwhile.
// - per stream: events are written one at a time, and a client that takes none of one for
//   SLOW_READER_MS gets its stream ended (routes/stream.ts; it reconnects and catches up with
//   `Last-Event-ID`, or is told to refetch).

/** Open streams one process holds, when nothing else is set (NOTIF_MAX_STREAMS). */
export const DEFAULT_MAX_STREAMS = 10_000;
/** Open streams one subscriber holds, when nothing else is set (NOTIF_STREAMS_PER_SUBSCRIBER). */
export const DEFAULT_STREAMS_PER_SUBSCRIBER = 10;
/** The caps; absent ones take their default (per environment: the process's cap). */
export interface StreamLimits {
  max?: number;
  perSubscriber?: number;
  perEnvironment?: number;
}

export class StreamSlots {
  readonly #max: number;
  readonly #perSubscriber: number;
  readonly #perEnvironment: number;
  /** The `end` of each open stream, by subscriber, oldest first. */
  #bySubscriber = new Map<string, (() => void)[]>();
  /** The same, by environment. */
  #byEnvironment = new Map<string, (() => void)[]>();
  #open = 0;

  constructor(limits: StreamLimits = {}) {
    this.#max = limits.max ?? DEFAULT_MAX_STREAMS;
    this.#perSubscriber = Math.max(1, limits.perSubscriber ?? DEFAULT_STREAMS_PER_SUBSCRIBER);
    this.#perEnvironment = Math.max(1, limits.perEnvironment ?? this.#max);
  }

  /**
   * Counts a stream of `subscriber` of `environment` (ending its subscriber's oldest past that cap,
   * or, in a full process, the oldest of the environment holding the most); returns its release, or
   * why it is refused (a message for the 503). `end` must release its slot at once (the route's
   * does): a slot ended for room is counted free before the new stream is counted.
   */
  take(subscriber: string, environment: string, end: () => void): (() => void) | string {
    const own = this.#bySubscriber.get(subscriber) ?? [];
    const mine = this.#byEnvironment.get(environment) ?? [];
    // A subscriber at its cap replaces its oldest stream: no more slots are held than before.
    if (own.length < this.#perSubscriber) {
      if (mine.length >= this.#perEnvironment) return 'Too many open streams for this environment; poll meanwhile';
      if (this.#open >= this.#max) {
        let largest: (() => void)[] = [];
        for (const list of this.#byEnvironment.values()) {
          if (list.length > largest.length) largest = list;
        }
        if (largest.length <= mine.length + 1) return 'Too many open streams; poll meanwhile';
        largest[0]!();
      }
    }
    return this.#take(subscriber, environment, end);
  }

  #take(subscriber: string, environment: string, end: () => void): () => void {
    const subscriberStreams = this.#listOf(this.#bySubscriber, subscriber);
    const environmentStreams = this.#listOf(this.#byEnvironment, environment);
    subscriberStreams.push(end);
    environmentStreams.push(end);
    this.#open++;
    while (subscriberStreams.length > this.#perSubscriber) subscriberStreams[0]!();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open--;
      this.#drop(this.#bySubscriber, subscriber, subscriberStreams, end);
      this.#drop(this.#byEnvironment, environment, environmentStreams, end);
    };
  }

  #listOf(map: Map<string, (() => void)[]>, key: string) {
    let list = map.get(key);
    if (!list) {
      list = [];
      map.set(key, list);
    }
    return list;
  }

  #drop(map: Map<string, (() => void)[]>, key: string, list: (() => void)[], end: () => void) {
    list.splice(list.indexOf(end), 1);
    if (list.length === 0 && map.get(key) === list) map.delete(key);
  }
}
