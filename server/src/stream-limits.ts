import type { ServerResponse } from 'node:http';

// Limits of the stream (routes/stream.ts), so that no client can make one process hold or buffer
// without bound:
// - per subscriber (of one environment): at most STREAMS_PER_SUBSCRIBER open streams; a new one
//   ends the oldest. A browser holds one stream (its leader tab), a person a few devices; a stream
//   past that is most likely one whose connection died unseen (a laptop closed, a network change),
//   and refusing the new one would lock out the device in use while the dead one lingers.
// - per process: at most MAX_STREAMS (NOTIF_MAX_STREAMS); past it a new stream gets 503 with
//   `Retry-After`, and the client polls meanwhile.
// - per stream: a client that does not read gets its stream ended once MAX_BUFFERED bytes wait to
//   be sent (it reconnects and catches up with `Last-Event-ID`, or is told to refetch).

export const STREAMS_PER_SUBSCRIBER = Math.max(1, Number(process.env.NOTIF_STREAMS_PER_SUBSCRIBER) || 10);
export const MAX_STREAMS = Number(process.env.NOTIF_MAX_STREAMS) || 10_000;
export const MAX_BUFFERED = 1 << 20;

export class StreamSlots {
  /** The `end` of each open stream, by subscriber, oldest first. */
  #bySubscriber = new Map<string, (() => void)[]>();
  #open = 0;

  /** Whether the process holds too many streams for one more of `subscriber` (one at its cap replaces its oldest). */
  full(subscriber: string): boolean {
    return this.#open >= MAX_STREAMS && (this.#bySubscriber.get(subscriber)?.length ?? 0) < STREAMS_PER_SUBSCRIBER;
  }

  /** Counts a stream of `subscriber` (ending its oldest past the cap); returns its release. */
  take(subscriber: string, end: () => void): () => void {
    let list = this.#bySubscriber.get(subscriber);
    if (!list) this.#bySubscriber.set(subscriber, (list = []));
    list.push(end);
    this.#open++;
    while (list.length > STREAMS_PER_SUBSCRIBER) list[0]!();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open--;
      list.splice(list.indexOf(end), 1);
      if (!list.length && this.#bySubscriber.get(subscriber) === list) this.#bySubscriber.delete(subscriber);
    };
  }
}

/** Writes `text`; false (and the connection destroyed) once more than MAX_BUFFERED bytes wait. */
export function send(res: ServerResponse, text: string): boolean {
  res.write(text);
  if (res.writableLength <= MAX_BUFFERED) return true;
  res.destroy();
  return false;
}

/** JSON for a `data:` line: U+2028 and U+2029 escaped, since some readers take them for line ends. */
export const sseJson = (data: unknown) => JSON.stringify(data).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
