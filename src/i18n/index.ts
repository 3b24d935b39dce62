export type { Translation, PreferencesTranslation } from './translation.ts';
export { default as en } from './en.ts';
export { default as de } from './de.ts';
export { default as enPreferences } from './en-preferences.ts';
export { registerTranslation, translationFor, localeOf, relativeTime, formatCount, formatNumber } from './localize.ts';
