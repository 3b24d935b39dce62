// Roving focus in a one-dimensional widget (the feed's list, its tab list): which item a key moves
// to. Each widget has its own keydown handler; this is the arithmetic they share.

export interface NavigationOptions {
  /** `vertical`: ArrowUp / ArrowDown; `horizontal`: ArrowLeft / ArrowRight. */
  orientation: 'vertical' | 'horizontal';
  /** Past the last item the first comes, and before the first the last. */
  wrap: boolean;
}

/**
 * The index a navigation key moves to from `current` among `count` items (Home: the first, End: the
 * last, the arrows of the orientation: the next and previous), or undefined when the key is not a
 * navigation key or leads nowhere.
 */
export function navigationIndex(key: string, current: number, count: number, { orientation, wrap }: NavigationOptions): number | undefined {
  const previousKey = orientation === 'vertical' ? 'ArrowUp' : 'ArrowLeft';
  const nextKey = orientation === 'vertical' ? 'ArrowDown' : 'ArrowRight';
  let index: number;
  if (key === 'Home') index = 0;
  else if (key === 'End') index = count - 1;
  else if (key === nextKey) index = current + 1;
  else if (key === previousKey) index = current - 1;
  else return undefined;
  if (wrap && count > 0) index = (index + count) % count;
  return index >= 0 && index < count ? index : undefined;
}
