// A small seeded pseudo-random generator (mulberry32), so the seeded history and the load's
// choices are the same on every run with the same settings.

export type Random = () => number;

/** Numbers in [0, 1) from a 32-bit seed; the same seed gives the same sequence. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [low, high]. */
export function integerBetween(random: Random, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

/** A wait drawn from the exponential distribution of mean `meanMs` (the gaps of a Poisson process). */
export function exponentialMs(random: Random, meanMs: number): number {
  return -Math.log(1 - random()) * meanMs;
}

/** `count` distinct integers of [0, size), in no particular order (size must be at least count). */
export function distinctIndexes(random: Random, size: number, count: number): number[] {
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(Math.floor(random() * size));
  return [...chosen];
}
