import type { Translation } from './translation.ts';
import en from './en.ts';

const translations = new Map<string, Translation>([['en', en]]);
/** Connected elements, re-rendered when a translation arrives (and, for messages, by the clock). */
export const localized = new Set<{ requestUpdate(): void }>();

/** Adds or replaces translations (missing strings fall back to English); connected elements re-render. */
export function registerTranslation(...list: Translation[]): void {
  for (const t of list) translations.set(t.$code.toLowerCase(), { ...en, ...t });
  for (const el of localized) el.requestUpdate();
}

/** The best translation for a locale: exact tag, then its language, then English. */
export const translationFor = (locale: string): Translation => {
  const code = locale.toLowerCase();
  return translations.get(code) ?? translations.get(code.split('-')[0]!) ?? en;
};

/** An element's locale: its `locale`, then the closest `lang` attribute, then `<html lang>`, then the browser's. */
export const localeOf = (el: HTMLElement & { locale?: string | undefined }): string =>
  el.locale || el.closest<HTMLElement>('[lang]')?.lang || document.documentElement.lang || navigator.language;

const formats: Record<string, Intl.RelativeTimeFormat & Intl.NumberFormat> = {};

/** One formatter per kind and locale; an invalid locale tag falls back to English rather than break rendering. */
const intl = (Format: new (locale: string, options?: object) => object, locale: string, options?: object) => {
  const key = Format.name + locale;
  try {
    return (formats[key] ??= new Format(locale, options) as never);
  } catch {
    return (formats[key] = new Format('en', options) as never);
  }
};

/** The largest unit reached: its name and size in milliseconds (45 s already make a minute). */
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 31_536e6],
  ['month', 2_592e6],
  ['week', 6048e5],
  ['day', 864e5],
  ['hour', 36e5],
  ['minute', 6e4],
  ['minute', 45e3],
];

/** "now", "5 min. ago", "yesterday", "3 wk. ago": the largest whole unit, through Intl.RelativeTimeFormat. */
export function relativeTime(date: Date, now: number, locale: string): string {
  const ms = +date - now;
  // Under 45 s: 0 seconds, which reads "now".
  const [unit, size] = UNITS.find(([, size]) => Math.abs(ms) >= size) ?? ['second', Infinity];
  return intl(Intl.RelativeTimeFormat, locale, { numeric: 'auto', style: 'short' }).format((ms / size) | 0, unit);
}

export const formatNumber = (n: number, locale: string): string => intl(Intl.NumberFormat, locale).format(n);

/** A count as a badge shows it: the number, or "99+" past `max`. */
export const formatCount = (n: number, locale: string, max = 99): string =>
  n > max ? formatNumber(max, locale) + '+' : formatNumber(n, locale);
