// The workflow engine: trigger -> notification -> jobs -> messages.
export { trigger, planRun, type TriggerInput, type TriggerOptions, type TriggerResult } from './trigger.ts';
export { advance, runJob, stepHandlers, executionDetail, finishJob, JobMovedError, type AdvanceOptions } from './run.ts';
export { inAppStep, buildCta } from './in-app.ts';
export { resolveRecipients, normalizeRecipients, type RecipientInput } from './subscribers.ts';
export { feedIdFor } from './feeds.ts';
export { controlErrors, InAppControls, DelayControls, DigestControls, TIME_UNITS, UNIT_MS, FEED_IDENTIFIER_PATTERN } from './controls.ts';
export * from './types.ts';
export { Scheduler, type SchedulerOptions } from './scheduler.ts';
export { delayStep, digestStep, onScheduled } from './waits.ts';
export { emailStep, smsStep, pushStep, chatStep, activeIntegration, CHAT_PROVIDERS, PUSH_PROVIDERS } from './channels.ts';
export { postWebhook, isWebhookUrl, refusedAddress, refusedHost, WEBHOOK_TIMEOUT_MS } from './webhook.ts';
export { configureEngine, engineSettings, DEFAULT_RUN_LEASE_MS, type EngineSettings } from './settings.ts';
export { renderContextFor, subscriberVariables } from './render-context.ts';
