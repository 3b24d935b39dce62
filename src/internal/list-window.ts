// A windowed list: of a long list of items only the rows in and near the view are in the DOM.
// Rows are measured by one ResizeObserver (after the browser's own layout: no forced layout) and
// their heights remembered (by key); the rows not rendered are the list's padding before and
// after, so the scrollbar stays truthful. One row may be pinned (the one holding the tab stop): it
// stays rendered wherever it is, a `gap` margin standing for the rows between it and the others.
// The row at the top of the view stays where it is when rows are added or change height above it.
// Rows are keyed: a row that stays in the window is never moved (focus stays in it); the element
// of a row that left is given to one that comes, or kept for one to come (a row element is made
// only when none is free).
// Scrolls and resizes lay the list out once per frame.

/** A row's height before it was ever measured: the mean of those measured, or this. */
const ESTIMATE = 80;
/** Rendered beyond each edge of the view, in px, once rows were measured: keyboard and wheel find rows ready. */
const OVERSCAN = 400;
/** At most this many rows, whatever the view's size (the pinned one besides). */
const MAX_ROWS = 50;

/** A row element, with the key of the item it shows (a property: no attribute written for each row shown). */
type Row = HTMLElement & { key?: string };

export class ListWindow<T> {
  /** The rendered rows by key, in order. */
  rendered = new Map<string, HTMLElement>();
  /** Whether the rows reach the last item, the list being shown: time to load more. */
  atEnd = false;
  /** Whether the list's top is above the view (as of the last layout; unset before the first). */
  scrolled?: boolean;
  #heights = new Map<string, number>();
  /** Row elements out of the DOM, for rows to come (a window after a jump is smaller for a frame). */
  #spare: HTMLElement[] = [];
  #items: readonly T[] = [];
  #list?: HTMLElement | null;
  #pinned?: string;
  #sheet = new CSSStyleSheet();
  #css?: string;
  #next?: Promise<unknown>;
  #observer = new ResizeObserver((entries) => {
    let changed = false;
    for (const entry of entries) {
      const key = (entry.target as Row).key;
      const height = entry.borderBoxSize[0]!.blockSize;
      if (!key) {
        // The list, watched while it was not shown: shown now. Not watched beyond that: the padding
        // written here resizes it, which would be a loop.
        this.#observer.unobserve(entry.target);
        changed = true;
      } else if (height && height != this.#heights.get(key)) {
        this.#heights.set(key, height);
        changed = true;
      }
    }
    // Heights and padding at once, before this frame is painted; other rows in the next frame.
    if (changed) this.#pass(true);
  });

  #key: (item: T) => string;
  #scroller: () => HTMLElement | null;
  #laid: () => void;

  /**
   * `key`: an item's key; `row`: makes (without `el`) or updates the row element (an `<li>`) of an
   * item at an index of `count`; `scroller`: the element that scrolls the list, or null when the page does;
   * `laid`: called after each layout but the observer's (rows came and went; `atEnd` says whether
   * they reach the last item).
   */
  constructor(
    key: (item: T) => string,
    readonly row: (item: T, index: number, count: number, el?: HTMLElement) => HTMLElement,
    scroller: () => HTMLElement | null,
    laid: () => void,
  ) {
    this.#key = key;
    this.#scroller = scroller;
    this.#laid = laid;
  }

  /**
   * Shows `items` in `list`, keeping `pinned`'s row, at once; without arguments (a scroll, a
   * resize), or with the same list, items and pinned row (the feed updated for something else, as
   * the unseen count), lays out what it has again in the next frame: no layout is read in the middle
   * of a task, which would lay out rows the browser was about to lay out anyway. Resolves once the
   * rows are rendered.
   */
  layout(list?: HTMLElement | null, items?: readonly T[], pinned?: string): Promise<unknown> {
    if (!items || (list == this.#list && items == this.#items && pinned == this.#pinned)) {
      this.#next ??= new Promise((resolve) =>
        requestAnimationFrame(() => {
          this.#next = undefined;
          resolve(this.#pass());
        }),
      );
      return this.#next;
    }
    // (Another list: the rows of the one before move into it, or leave.)
    if (list && list != this.#list) {
      list.classList.add('window');
      const root = list.getRootNode() as ShadowRoot;
      if (!root.adoptedStyleSheets.includes(this.#sheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, this.#sheet];
    }
    this.#list = list;
    this.#items = items;
    this.#pinned = pinned;
    return this.#pass();
  }

  /**
   * Reads where the view is, then writes: the rows of the view (`measured`: from the observer, only
   * the padding and the scroll position; rows to add wait for the next frame), the padding, and the
   * scroll that keeps the view's top row in place.
   */
  async #pass(measured?: boolean): Promise<unknown> {
    const list = this.#list;
    // Not shown (a closed popover, or out of the document: no box, no rects): nothing to lay out; the
    // observer says when it is. No list: nothing shown, the end.
    if (!list?.getClientRects().length) {
      this.atEnd = !list;
      if (list) this.#observer.observe(list);
      else this.#laid();
      return;
    }
    const items = this.#items;
    const count = items.length;
    // The visible part of the scroller (or of the page's view), in client coordinates. A scroller out
    // of the page's view (a card below the fold) has its whole box: its rows are there before it
    // comes into view, which no scroll or resize of the page may ever announce.
    const scroller = this.#scroller();
    const view = scroller?.getBoundingClientRect();
    let top = Math.max(0, view?.top ?? 0);
    let bottom = Math.min(innerHeight, view?.bottom ?? innerHeight);
    if (view && top >= bottom) {
      top = view.top;
      bottom = view.bottom;
    }
    const listTop = list.getBoundingClientRect().top;
    // While the list is scrolled, the row at the view's top stays where it is: the first rendered row reaching into the view.
    let anchor: string | undefined;
    let anchorTop = 0;
    this.scrolled = listTop < top;
    if (this.scrolled) {
      for (const [key, row] of this.rendered) {
        const rect = row.getBoundingClientRect();
        if (rect.bottom > top && (!anchor || rect.top < anchorTop)) {
          anchor = key;
          anchorTop = rect.top;
        }
      }
    }
    let measuredSum = 0;
    for (const height of this.#heights.values()) measuredSum += height;
    const estimate = measuredSum / this.#heights.size || ESTIMATE;
    const keys = items.map(this.#key);
    // offsets[i]: the top of item i in the list (offsets[count]: the list's height).
    const offsets = [0];
    keys.forEach((key, index) => offsets.push(offsets[index]! + (this.#heights.get(key) ?? estimate)));
    const anchorIndex = keys.indexOf(anchor!);
    // How far the anchor row would move: the scroll that keeps it in place.
    const shift = anchorIndex < 0 ? 0 : listTop + offsets[anchorIndex]! - anchorTop;
    const viewTop = top - listTop + shift;
    let start = 0;
    let end = 0;
    /** The rows from `start` to `end` (excluded) cover the view and `overscan` px beyond each edge. */
    const range = (overscan: number) => {
      start = 0;
      while (start < count - 1 && offsets[start + 1]! < viewTop - overscan) start++;
      end = start;
      while (end < count && end - start < MAX_ROWS && offsets[end]! < viewTop + bottom - top + overscan) end++;
    };
    range(0);
    // The first layout, or a jump (the row at the view's top is not rendered: a fast scroll, the scrollbar dragged):
    // the rows in view only; once they are measured (the observer), those around them in the next frame.
    // (Rendered but not yet measured, as when the list changes again before the first frame: the same.)
    if (measured || end <= start || (this.rendered.has(keys[start]!) && this.#heights.has(keys[start]!))) range(OVERSCAN);
    const pin = keys.indexOf(this.#pinned!);
    let indexes: number[] = [];
    if (pin >= 0 && pin < start) indexes.push(pin);
    for (let i = start; i < end; i++) indexes.push(i);
    if (pin >= end) indexes.push(pin);
    // From the observer: the rows stay (rows rendered now would be measured only in the next frame); the next frame brings the others.
    if (measured) {
      const now = [...this.rendered.keys()].map((key) => keys.indexOf(key));
      if (now.join() != indexes.join() || end >= count) void this.layout();
      indexes = now;
    }
    const fresh = this.#reconcile(list, items, offsets, indexes, keys);
    // (Less than half a pixel either way is rounding.)
    if (Math.abs(shift) > 0.5) {
      if (scroller) scroller.scrollTop += shift;
      else scrollBy(0, shift);
    }
    // (Not from the observer, but in the next frame: what custom rendering and loading more change would resize rows before this frame is painted, a loop.)
    this.atEnd = end >= count;
    if (!measured) this.#laid();
    return Promise.all(fresh.map((row) => (row.firstChild as { updateComplete?: Promise<unknown> }).updateComplete));
  }

  /** Puts the rows of `indexes` in the list, in order, with their padding; returns the new ones. */
  #reconcile(list: HTMLElement, items: readonly T[], offsets: number[], indexes: number[], keys: string[]): HTMLElement[] {
    const want = new Set(indexes.map((i) => keys[i]));
    // Rows that stay never move (a moved element would lose focus); the elements of those that leave are
    // free, given in their order (a whole new window reuses them in place: nothing moves).
    const free: HTMLElement[] = [];
    for (const [key, row] of this.rendered) if (!want.has(key)) free.push(row);
    const fresh: HTMLElement[] = [];
    const rendered = new Map<string, HTMLElement>();
    let next = list.firstElementChild;
    let gap = 0;
    indexes.forEach((index, position) => {
      const key = keys[index]!;
      let row = this.rendered.get(key);
      if (row) this.row(items[index]!, index, items.length, row);
      else {
        row = this.row(items[index]!, index, items.length, free.shift() ?? this.#spare.pop());
        fresh.push(row);
        (row as Row).key = key;
        this.#observer.observe(row);
      }
      // The rows left out between this one and the one before (the pinned row's distance).
      const rowGap = position ? offsets[index]! - offsets[indexes[position - 1]! + 1]! : 0;
      row.classList.toggle('gap', rowGap > 0);
      if (!gap) gap = rowGap;
      rendered.set(key, row);
      while (free.includes(next as HTMLElement)) next = next!.nextElementSibling;
      if (row == next) next = next.nextElementSibling;
      else list.insertBefore(row, next);
    });
    for (const row of free) {
      this.#observer.unobserve(row);
      row.remove();
      this.#spare.push(row);
    }
    this.rendered = rendered;
    // (The same text again is not written: a new sheet is style work for the whole list.)
    const css = `.window{overflow-anchor:none;padding-block:${offsets[indexes[0] ?? 0]}px ${offsets[items.length]! - offsets[(indexes.at(-1) ?? -1) + 1]!}px}.gap{margin-top:${gap}px}`;
    if (css != this.#css) this.#sheet.replaceSync((this.#css = css));
    return fresh;
  }
}
