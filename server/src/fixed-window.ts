// Counts requests in fixed windows per caller: the service's rate limit (plugins/rate-limit.ts) and
// the proxy's per subscriber (proxy/index.ts), which must not import the service's plugins.

interface Window {
  /** Epoch milliseconds when this window ends. */
  resetAt: number;
  count: number;
}

/** What one request counted: the limit, what is left of it, and when its window ends (epoch ms). */
export interface Counted {
  limit: number;
  remaining: number;
  resetAt: number;
}

/** Counts requests in fixed windows per caller. */
export class FixedWindowCounter {
  private windows = new Map<string, Window>();
  private nextSweep = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Counts one request of `caller` at time `now`. */
  take(caller: string, now: number): Counted & { allowed: boolean } {
    this.sweep(now);
    let w = this.windows.get(caller);
    if (!w || w.resetAt <= now) {
      w = { resetAt: now + this.windowMs, count: 0 };
      this.windows.set(caller, w);
    }
    const allowed = w.count < this.limit;
    if (allowed) w.count++;
    return { allowed, limit: this.limit, remaining: this.limit - w.count, resetAt: w.resetAt };
  }

  /** Forgets ended windows, at most once per window length, so memory follows the active callers. */
  private sweep(now: number) {
    if (now < this.nextSweep) return;
    this.nextSweep = now + this.windowMs;
    for (const [caller, w] of this.windows) if (w.resetAt <= now) this.windows.delete(caller);
  }
}
