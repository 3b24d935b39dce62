// Latency samples and their summary (nearest-rank percentiles over every sample kept).

export interface Summary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export class Samples {
  #values: number[] = [];

  add(value: number): void {
    this.#values.push(value);
  }

  get count(): number {
    return this.#values.length;
  }

  summary(): Summary {
    const sorted = Float64Array.from(this.#values).sort();
    return {
      count: sorted.length,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: sorted.length ? sorted[sorted.length - 1]! : NaN,
    };
  }
}

/** The nearest-rank percentile `q` (0..1) of ascending `sorted`; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1]!;
}

/** Counts by name. */
export class Tally {
  readonly counts: Record<string, number> = {};

  add(name: string, by = 1): void {
    this.counts[name] = (this.counts[name] ?? 0) + by;
  }

  get total(): number {
    return Object.values(this.counts).reduce((sum, n) => sum + n, 0);
  }
}
