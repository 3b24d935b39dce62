/** The most keys one load gets. */
const MAX_KEYS_PER_LOAD = 1000;
/** How long a load runs before it stops holding its place (see below). */
const DEFAULT_STALL_MS = 1000;

/**
 * Calls made in one turn of the event loop, loaded together: `load` gets their keys (at most 1,000
 * at a time) and answers each in order. With `inFlight`, at most that many loads run at once, and
 * calls made meanwhile wait for one to end and go together in the next: the busier the process,
 * the more each load answers (one round trip for many calls), while a call alone waits for nothing.
 * A load still running after `stallMs` stops holding its place: a load that hangs (a database
 * connection gone silent) holds up its own calls, not every call after it.
 */
export function batched<K, V>(load: (keys: K[]) => Promise<V[]>, inFlight = Infinity, stallMs = DEFAULT_STALL_MS): (key: K) => Promise<V> {
  const waiting: { key: K; resolve: (value: V) => void; reject: (err: unknown) => void }[] = [];
  let running = 0;
  let queued = false;
  /** Flushes the calls waiting on the next turn of the event loop, unless a flush is already queued. */
  const queueFlush = () => {
    if (queued) return;
    queued = true;
    setImmediate(flush);
  };
  const flush = () => {
    queued = false;
    while (waiting.length > 0 && running < inFlight) {
      const part = waiting.splice(0, MAX_KEYS_PER_LOAD);
      running++;
      let held = true;
      const release = () => {
        if (!held) return;
        held = false;
        running--;
        if (waiting.length > 0) queueFlush();
      };
      const stalled = inFlight < Infinity ? setTimeout(release, stallMs).unref() : undefined;
      // A load that throws before it returns, or answers what is not a list, fails its own calls:
      // never the process (this runs in a setImmediate callback), never the loads after it.
      new Promise<V[]>((resolve) => resolve(load(part.map((call) => call.key))))
        .then((values) => part.forEach((call, index) => call.resolve(values[index]!)))
        .catch((err: unknown) => part.forEach((call) => call.reject(err)))
        .finally(() => {
          clearTimeout(stalled);
          release();
        });
    }
  };
  return (key) =>
    new Promise<V>((resolve, reject) => {
      if (running < inFlight) queueFlush();
      waiting.push({ key, resolve, reject });
    });
}
