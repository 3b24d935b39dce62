/**
 * Calls made in one turn of the event loop, loaded together: `load` gets their keys (at most 1,000
 * at a time) and answers each in order. With `inFlight`, at most that many loads run at once, and
 * calls made meanwhile wait for one to end and go together in the next: the busier the process,
 * the more each load answers (one round trip for many calls), while a call alone waits for nothing.
 * A load still running after `stallMs` stops holding its place: a load that hangs (a database
 * connection gone silent) holds up its own calls, not every call after it.
 */
export function batched<K, V>(load: (keys: K[]) => Promise<V[]>, inFlight = Infinity, stallMs = 1000): (key: K) => Promise<V> {
  const waiting: { key: K; resolve: (v: V) => void; reject: (e: unknown) => void }[] = [];
  let running = 0;
  let queued = false;
  const flush = () => {
    queued = false;
    while (waiting.length && running < inFlight) {
      const part = waiting.splice(0, 1000);
      running++;
      let held = true;
      const release = () => {
        if (!held) return;
        held = false;
        running--;
        if (waiting.length && !queued) (queued = true), setImmediate(flush);
      };
      const stalled = inFlight < Infinity ? setTimeout(release, stallMs).unref() : undefined;
      // A load that throws before it returns, or answers what is not a list, fails its own calls:
      // never the process (this runs in a setImmediate callback), never the loads after it.
      new Promise<V[]>((resolve) => resolve(load(part.map((w) => w.key))))
        .then((values) => part.forEach((w, j) => w.resolve(values[j]!)))
        .catch((err: unknown) => part.forEach((w) => w.reject(err)))
        .finally(() => {
          clearTimeout(stalled);
          release();
        });
    }
  };
  return (key) =>
    new Promise<V>((resolve, reject) => {
      if (!queued && running < inFlight) (queued = true), setImmediate(flush);
      waiting.push({ key, resolve, reject });
    });
}
