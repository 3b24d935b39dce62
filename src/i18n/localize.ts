import type { Translation } from './translation.ts';
import en from './en.ts';

const translations = new Map<string, Translation>([['en', en]]);
/** Connected elements, re-rendered when a translation arrives (and, for messages, by the clock). */
export const localized = new Set<{ requestUpdate(): void }>();

/** Adds or replaces translations (missing strings fall back to English); connected elements re-render. */
export function registerTranslation(...list: Translation[]): void {
  for (const translation of list) translations.set(translation.$code.toLowerCase(), { ...en, ...translation });
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

const formats: Record<string, Intl.RelativeTimeFormat & Intl.NumberFormat & Intl.DateTimeFormat> = {};

/** One formatter per kind and locale; an invalid locale tag falls back to English rather than break rendering. */
const intl = (Format: new (locale: string, options?: object) => object, locale: string, options?: object) => {
  const key = Format.name + locale + JSON.stringify(options);
  try {
    return (formats[key] ??= new Format(locale, options) as never);
  } catch {
    return (formats[key] = new Format('en', options) as never);
  }
};

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The units of a relative time, largest first: each is shown from `from` ms on, as whole `size`s. */
const UNITS: { unit: Intl.RelativeTimeFormatUnit; from: number; size: number }[] = [
  { unit: 'year', from: 365 * DAY, size: 365 * DAY },
  { unit: 'month', from: 30 * DAY, size: 30 * DAY },
  { unit: 'week', from: 7 * DAY, size: 7 * DAY },
  { unit: 'day', from: DAY, size: DAY },
  { unit: 'hour', from: HOUR, size: HOUR },
  { unit: 'minute', from: MINUTE, size: MINUTE },
  // 45 s already make a minute.
  { unit: 'minute', from: 45 * SECOND, size: 45 * SECOND },
];

/**
 * How long ago, compact in every locale: "now", "5m", "2h", "1w" ("jetzt", "5 Min.", "2 Std.", "1 W"):
 * the largest whole unit through Intl.NumberFormat's narrow units (the time's title has the full date).
 */
export function relativeTime(date: Date, now: number, locale: string): string {
  const elapsed = Math.abs(now - date.getTime());
  const reached = UNITS.find(({ from }) => elapsed >= from);
  // Under 45 s: "now".
  if (!reached) return intl(Intl.RelativeTimeFormat, locale, { numeric: 'auto' }).format(0, 'second');
  const { unit, size } = reached;
  return intl(Intl.NumberFormat, locale, { style: 'unit', unit, unitDisplay: 'narrow' }).format(Math.floor(elapsed / size));
}

/** The full date and time ("Mar 1, 2025, 12:00 PM"), for the time's title and screen readers. */
export const formatDate = (date: Date, locale: string): string =>
  intl(Intl.DateTimeFormat, locale, { dateStyle: 'medium', timeStyle: 'short' }).format(date);

export const formatNumber = (n: number, locale: string): string => intl(Intl.NumberFormat, locale).format(n);

/** "`n` new notifications" in `locale`'s language (the live region's announcement, the feed's "new" button). */
export const newNotifications = (locale: string, n: number): string => translationFor(locale).newNotifications(n, formatNumber(n, locale));

/** The largest count a badge shows as it is: past it, "99+". */
export const BADGE_MAX = 99;

/** A count as a badge shows it: the number, or "99+" past `max`. */
export const formatCount = (count: number, locale: string, max = BADGE_MAX): string =>
  count > max ? formatNumber(max, locale) + '+' : formatNumber(count, locale);
