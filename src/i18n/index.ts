export type { Translation } from './translation.ts';
export { default as en } from './en.ts';
export { default as de } from './de.ts';
export { registerTranslation, translationFor, localeOf, relativeTime, formatCount, formatNumber } from './localize.ts';
