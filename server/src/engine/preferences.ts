import { bool } from '../json.ts';
import { CHANNELS, type Channel } from '../schemas.ts';
import type { Store } from '../db/store.ts';
import type { WorkflowRow } from '../db/rows.ts';

// A subscriber's preferences, as the preferences table holds them: one boolean per (workflow, setting),
// where workflow '' is global and setting is 'enabled' or a channel. Anything not set is on.
// Critical workflows ignore them: they always deliver, and their preferences cannot be changed.

/** The subscriber's settings, keyed `<workflow row id or ''>/<setting>`. */
export type PreferenceSettings = Map<string, boolean>;

export const GLOBAL = '';

export async function loadPreferences(store: Store, subscriberRowId: string): Promise<PreferenceSettings> {
  const rows = await store.kysely
    .selectFrom('preferences')
    .select(['workflow_id', 'setting', 'enabled'])
    .where('subscriber_id', '=', subscriberRowId)
    .execute();
  return new Map(rows.map((row) => [`${row.workflow_id}/${row.setting}`, bool(row.enabled)]));
}

/** A setting's value: on unless the subscriber turned it off. */
export const isOn = (settings: PreferenceSettings, workflow: string, setting: 'enabled' | Channel) =>
  settings.get(`${workflow}/${setting}`) !== false;

/** Whether a step of this type in this workflow obeys preferences: a channel step of a non-critical workflow. */
export const obeysPreferences = (workflow: WorkflowRow | undefined, stepType: string): workflow is WorkflowRow =>
  !!workflow && !bool(workflow.critical) && (CHANNELS as readonly string[]).includes(stepType);

/**
 * Why a `channel` step of `workflow` must not deliver to this subscriber, or null when it may:
 * everything off, the channel off globally, the workflow off, or the channel off for the workflow.
 */
export function preferenceBlock(settings: PreferenceSettings, workflow: WorkflowRow | undefined, channel: string): string | null {
  if (!obeysPreferences(workflow, channel)) return null;
  const stepChannel = channel as Channel;
  const name = `'${workflow.workflow_id}'`;
  if (!isOn(settings, GLOBAL, 'enabled')) return 'the subscriber turned every notification off (global preference)';
  if (!isOn(settings, GLOBAL, stepChannel)) return `the subscriber turned ${stepChannel} off for every workflow (global preference)`;
  if (!isOn(settings, workflow.id, 'enabled')) return `the subscriber turned workflow ${name} off (workflow preference)`;
  if (!isOn(settings, workflow.id, stepChannel)) return `the subscriber turned ${stepChannel} off for workflow ${name} (workflow preference)`;
  return null;
}
