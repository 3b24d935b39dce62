// A windowed list: of a long list of items only the rows in and near the view are in the DOM.
// Rows are measured as they render and their heights remembered (by key); the rows not rendered
// are the list's padding before and after, so the scrollbar stays truthful. One row may be pinned
// (the one holding the tab stop): it stays rendered wherever it is, a `gap` margin standing for the
// rows between it and the others. The row at the top of the view stays where it is when rows are
// added or change height above it. Rows are keyed and never moved: a row element lives as long
// as its item stays in the window, and leaving the window is leaving the DOM (disconnectedCallback).

/** A row's height before it was ever measured: the mean of those measured, or this. */
const ESTIMATE = 80;
/** Rendered beyond each edge of the view, in px: keyboard and wheel find rows ready. */
const OVERSCAN = 400;
/** At most this many rows, whatever the view's size (the pinned one besides). */
const MAX_ROWS = 50;

export class ListWindow<T> {
  /** The rendered rows by key, in order. */
  rendered = new Map<string, HTMLElement>();
  #heights = new Map<string, number>();
  #items: readonly T[] = [];
  #list?: HTMLElement | null;
  #pinned?: string;
  #sheet = new CSSStyleSheet();
  #run?: Promise<void>;
  #again?: boolean;

  /**
   * `key`: an item's key; `row`: makes (without `el`) or updates the row element (an `<li>`) of an
   * item at an index; `scroller`: the element that scrolls the list, or null when the page does.
   */
  constructor(
    readonly key: (item: T) => string,
    readonly row: (item: T, index: number, el?: HTMLElement) => HTMLElement,
    readonly scroller: () => HTMLElement | null,
  ) {}

  /** The index of the item with `key`, or -1. */
  indexOf(key?: string): number {
    return this.#items.findIndex((item) => this.key(item) == key);
  }

  /**
   * Shows `items` in `list`, keeping `pinned`'s row; without arguments (a scroll, a resize) lays out
   * what it has again. Resolves once the rows in view are in the DOM, rendered and measured.
   */
  layout(list?: HTMLElement | null, items?: readonly T[], pinned?: string): Promise<void> {
    if (items) {
      if (list != this.#list) {
        this.rendered.clear();
        if (list) {
          list.classList.add('window');
          const root = list.getRootNode() as ShadowRoot;
          if (!root.adoptedStyleSheets.includes(this.#sheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, this.#sheet];
        }
      }
      this.#list = list;
      this.#items = items;
      this.#pinned = pinned;
    }
    this.#again = true;
    return (this.#run ??= (async () => {
      try {
        while (this.#again) {
          this.#again = false;
          await this.#pass();
        }
      } finally {
        this.#run = undefined;
      }
    })());
  }

  async #pass() {
    const list = this.#list;
    if (!list?.isConnected) return;
    const items = this.#items;
    const n = items.length;
    const [top, bottom] = this.#view();
    // The anchor: the first rendered row reaching into the view, while the list is scrolled.
    let anchor: HTMLElement | undefined;
    let at = 0;
    if (list.getBoundingClientRect().top < top) {
      for (const row of this.rendered.values()) {
        const r = row.getBoundingClientRect();
        if (r.bottom > top && (!anchor || r.top < at)) (anchor = row), (at = r.top);
      }
    }
    for (let round = 0; round < 3; round++) {
      const offsets = this.#offsets();
      // The view's top in the list; where the anchor is, it decides.
      const a = anchor ? this.indexOf(anchor.dataset.key) : -1;
      const y = a < 0 ? top - list.getBoundingClientRect().top : offsets[a]! - at + top;
      let start = 0;
      while (start < n - 1 && offsets[start + 1]! < y - OVERSCAN) start++;
      let end = start;
      while (end < n && end - start < MAX_ROWS && offsets[end]! < y + bottom - top + OVERSCAN) end++;
      const fresh = this.#reconcile(list, items, offsets, start, end);
      await Promise.all(fresh.map((row) => (row.firstChild as { updateComplete?: Promise<unknown> }).updateComplete));
      let changed = !!fresh.length;
      for (const [key, row] of this.rendered) {
        const h = row.getBoundingClientRect().height;
        if (h && h != this.#heights.get(key)) changed = !!this.#heights.set(key, h);
      }
      // Padding and gap from the measured heights.
      this.#reconcile(list, items, this.#offsets(), start, end);
      if (anchor?.isConnected) this.#scrollBy(anchor.getBoundingClientRect().top - at);
      if (!changed) break;
    }
  }

  /** Puts the rows of [start, end) and the pinned one in the list, in order, with their padding; returns the new ones. */
  #reconcile(list: HTMLElement, items: readonly T[], offsets: number[], start: number, end: number): HTMLElement[] {
    const indexes: number[] = [];
    const pin = this.indexOf(this.#pinned);
    if (pin >= 0 && pin < start) indexes.push(pin);
    for (let i = start; i < end; i++) indexes.push(i);
    if (pin >= end) indexes.push(pin);
    const keys = indexes.map((i) => this.key(items[i]!));
    // Rows leave first, so the ones that stay never move (a moved element would lose focus).
    for (const [key, row] of this.rendered) if (!keys.includes(key)) row.remove();
    const fresh: HTMLElement[] = [];
    const rendered = new Map<string, HTMLElement>();
    let next = list.firstElementChild;
    let gap = 0;
    indexes.forEach((i, k) => {
      let row = this.rendered.get(keys[k]!);
      if (!row) fresh.push((row = this.row(items[i]!, i)));
      this.row(items[i]!, i, row);
      row.dataset.key = keys[k];
      const g = k ? offsets[i]! - offsets[indexes[k - 1]! + 1]! : 0;
      row.classList.toggle('gap', !!g);
      gap ||= g;
      rendered.set(keys[k]!, row);
      if (row == next) next = next.nextElementSibling;
      else list.insertBefore(row, next);
    });
    this.rendered = rendered;
    const first = indexes[0] ?? 0;
    this.#sheet.replaceSync(
      `.window{overflow-anchor:none;padding-block:${offsets[first]}px ${offsets[items.length]! - offsets[(indexes.at(-1) ?? -1) + 1]!}px}.gap{margin-top:${gap}px}`,
    );
    return fresh;
  }

  /** offsets[i]: the top of row i in the list; offsets[n]: the list's height. */
  #offsets(): number[] {
    let sum = 0;
    for (const h of this.#heights.values()) sum += h;
    const estimate = sum / this.#heights.size || ESTIMATE;
    const offsets = [0];
    for (const item of this.#items) offsets.push(offsets.at(-1)! + (this.#heights.get(this.key(item)) ?? estimate));
    return offsets;
  }

  /**
   * The visible part of the scroller (or of the page's view): top and bottom in client coordinates.
   * A scroller out of the page's view (a card below the fold) has its whole box: its rows are there
   * before it comes into view, which no scroll or resize of the page may ever announce.
   */
  #view(): [number, number] {
    const r = this.scroller()?.getBoundingClientRect();
    const top = Math.max(0, r?.top ?? 0);
    const bottom = Math.min(innerHeight, r?.bottom ?? innerHeight);
    return r && top >= bottom ? [r.top, r.bottom] : [top, bottom];
  }

  #scrollBy(dy: number) {
    const s = this.scroller();
    if (Math.abs(dy) < 0.5) return;
    if (s) s.scrollTop += dy;
    else scrollBy(0, dy);
  }
}
