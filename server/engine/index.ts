// The workflow engine: trigger -> notification -> jobs -> messages.
export { trigger, planRun, type TriggerInput, type TriggerOptions, type TriggerResult } from './trigger.ts';
export { advance, runJob, stepHandlers, executionDetail, finishJob, type AdvanceOptions } from './run.ts';
export { inAppStep, buildCta, subscriberVariables } from './in-app.ts';
export { resolveRecipients, normalizeRecipients, type RecipientInput } from './subscribers.ts';
export { feedIdFor } from './feeds.ts';
export { controlErrors, InAppControls, DelayControls, DigestControls, TIME_UNITS, UNIT_MS, FEED_IDENTIFIER_PATTERN } from './controls.ts';
export * from './types.ts';
