import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { Translation } from './translation.ts';
import en from './en.ts';

type TermKey = { [K in keyof Translation]: Translation[K] extends string ? (K extends `$${string}` ? never : K) : never }[keyof Translation];
type FnKey = { [K in keyof Translation]: Translation[K] extends (...args: never[]) => string ? K : never }[keyof Translation];

const translations = new Map<string, Translation>([['en', en]]);
const hosts = new Set<ReactiveControllerHost>();

/** Adds or replaces translations; every connected element re-renders in its locale. */
export function registerTranslation(...list: Translation[]): void {
  for (const t of list) translations.set(t.$code.toLowerCase(), t);
  for (const host of hosts) host.requestUpdate();
}

/** The best translation for a locale: exact tag, then its language, then English. */
export function translationFor(locale: string): Translation {
  const code = locale.toLowerCase();
  return translations.get(code) ?? translations.get(code.split('-')[0]!) ?? en;
}

/** The page's language: `<html lang>`, then the browser's. */
export function documentLocale(): string {
  return (typeof document !== 'undefined' && document.documentElement.lang) || (typeof navigator !== 'undefined' && navigator.language) || 'en';
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

const formats = new Map<string, Intl.RelativeTimeFormat | Intl.NumberFormat | Intl.DateTimeFormat>();

/** One formatter per kind and locale; an invalid locale tag falls back to English rather than break rendering. */
function intl<T extends Intl.RelativeTimeFormat | Intl.NumberFormat | Intl.DateTimeFormat>(
  Format: new (locale: string, options?: object) => T,
  locale: string,
  options?: object,
): T {
  const key = Format.name + locale;
  let f = formats.get(key) as T | undefined;
  if (!f) {
    try {
      f = new Format(locale, options);
    } catch {
      f = new Format('en', options);
    }
    formats.set(key, f);
  }
  return f;
}

/** "now", "5 min. ago", "yesterday", "3 wk. ago": the largest whole unit, through Intl.RelativeTimeFormat. */
export function relativeTime(date: Date, now: number, locale: string): string {
  const rtf = intl(Intl.RelativeTimeFormat, locale, { numeric: 'auto', style: 'short' });
  const seconds = Math.round((date.getTime() - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return rtf.format(0, 'second');
  for (const [unit, size] of UNITS) {
    if (abs >= size) return rtf.format(Math.trunc(seconds / size), unit);
  }
  return rtf.format(Math.trunc(seconds / 60) || (seconds < 0 ? -1 : 1), 'minute');
}

export function formatNumber(n: number, locale: string): string {
  return intl(Intl.NumberFormat, locale).format(n);
}

/** A full date and time for tooltips and `<time>`. */
export function formatDateTime(date: Date, locale: string): string {
  return intl(Intl.DateTimeFormat, locale, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
}

/** A count as a badge shows it: the number, or "99+" past `max`. */
export function formatCount(n: number, locale: string, max = 99): string {
  return n > max ? `${formatNumber(max, locale)}+` : formatNumber(n, locale);
}

export interface LocalizeHost extends ReactiveControllerHost, HTMLElement {
  /** The element's `locale` property, when set. */
  locale?: string;
}

/**
 * Localization for an element: `this.localize.term('markAllRead')`. The locale is the element's
 * `locale`, then the closest `lang` attribute, then `<html lang>`, then the browser's.
 */
export class LocalizeController implements ReactiveController {
  constructor(private host: LocalizeHost) {
    host.addController(this);
  }

  hostConnected() {
    hosts.add(this.host);
  }

  hostDisconnected() {
    hosts.delete(this.host);
  }

  get locale(): string {
    return this.host.locale || this.host.closest('[lang]')?.getAttribute('lang') || documentLocale();
  }

  get translation(): Translation {
    return translationFor(this.locale);
  }

  get dir(): 'ltr' | 'rtl' {
    return this.translation.$dir;
  }

  term(key: TermKey): string {
    return this.translation[key] ?? en[key];
  }

  fn<K extends FnKey>(key: K, ...args: Parameters<Translation[K]>): string {
    const f = (this.translation[key] ?? en[key]) as (...a: Parameters<Translation[K]>) => string;
    return f(...args);
  }

  number(n: number): string {
    return formatNumber(n, this.locale);
  }

  count(n: number, max = 99): string {
    return formatCount(n, this.locale, max);
  }

  relativeTime(date: Date, now = Date.now()): string {
    return relativeTime(date, now, this.locale);
  }

  dateTime(date: Date): string {
    return formatDateTime(date, this.locale);
  }
}
