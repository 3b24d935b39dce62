import type { Tenant } from '../db/keys.ts';
import type { StoredStep, WorkflowRow } from '../db/rows.ts';
import type { Store } from '../db/store.ts';
import { GLOBAL, isOn, loadPreferences, type PreferenceSettings } from '../engine/preferences.ts';
import { notFound, unprocessable } from '../errors.ts';
import { nowIso } from '../ids.ts';
import { bool, int, parseJson } from '../json.ts';
import { CHANNELS, type Channel } from '../schemas.ts';
import { familyWorkflowView } from './family-views.ts';
import { findSubscriber } from './subscribers.ts';

// A subscriber's preferences: read (endpoint 14), and changed (extensions in Novu's shape,
// decisions.md): the global ones, or one workflow's. A change answers the preferences as endpoint
// 14 does with criticality=all. A critical workflow always delivers: its preferences are shown on
// and cannot be changed (422).

/** Which workflows endpoint 14 lists. */
export const CRITICALITIES = ['critical', 'nonCritical', 'all'] as const;
export type Criticality = (typeof CRITICALITIES)[number];

/** A change of preferences: the settings it names; the others keep their value. */
export interface PreferencesInput {
  enabled?: boolean;
  channels?: Partial<Record<Channel, boolean>>;
}

/** Endpoint 14: the environment's workflows, each with its channel steps, and the subscriber's settings. */
export async function subscriberPreferences(store: Store, tenant: Tenant, subscriberId: string, criticality: Criticality) {
  const subscriber = await findSubscriber(store, tenant, subscriberId);
  return preferencesView(store, tenant, subscriber.id, criticality);
}

/** Changes the subscriber's global preferences; its preferences after. */
export async function saveGlobalPreferences(store: Store, tenant: Tenant, subscriberId: string, input: PreferencesInput) {
  const subscriber = await findSubscriber(store, tenant, subscriberId);
  await save(store, tenant, subscriber.id, GLOBAL, input);
  return preferencesView(store, tenant, subscriber.id, 'all');
}

/** Changes the subscriber's preferences for one workflow (404 when there is none; 422 when it is critical); its preferences after. */
export async function saveWorkflowPreferences(store: Store, tenant: Tenant, subscriberId: string, workflowId: string, input: PreferencesInput) {
  const subscriber = await findSubscriber(store, tenant, subscriberId);
  const workflow = await changeableWorkflow(store, tenant, workflowId);
  await save(store, tenant, subscriber.id, workflow.id, input);
  return preferencesView(store, tenant, subscriber.id, 'all');
}

/**
 * The workflow whose preferences a change names, by its workflowId or its _id: 404 when there is
 * none, 422 when it is critical.
 */
async function changeableWorkflow(store: Store, tenant: Tenant, workflowId: string) {
  const workflow = await store.kysely
    .selectFrom('workflows')
    .selectAll()
    .where('environment_id', '=', tenant.environmentId)
    .where((eb) => eb.or([eb('workflow_id', '=', workflowId), eb('id', '=', workflowId)]))
    .orderBy('workflow_id')
    .executeTakeFirst();
  if (!workflow) throw notFound('Workflow', workflowId);
  if (bool(workflow.critical)) {
    throw unprocessable(`Workflow '${workflowId}' is critical: it always delivers, and its preferences cannot be changed`);
  }
  return workflow;
}

/** A change in the shape of Novu's `PATCH /v2/subscribers/{id}/preferences`: without a workflowId, the global channels. */
export interface PreferencesChange {
  workflowId?: string;
  channels?: Partial<Record<Channel, boolean>>;
}

/** `PATCH /v2/subscribers/{id}/preferences`: the global channels, or one workflow's; the preferences after. */
export function savePreferences(store: Store, tenant: Tenant, subscriberId: string, change: PreferencesChange) {
  const input = { channels: change.channels };
  return change.workflowId === undefined
    ? saveGlobalPreferences(store, tenant, subscriberId, input)
    : saveWorkflowPreferences(store, tenant, subscriberId, change.workflowId, input);
}

/**
 * `PATCH /v2/subscribers/{id}/preferences/bulk`: several workflows' channels at once (every
 * workflow is checked before anything is saved); each workflow's preference after, in Novu's shape.
 */
export async function saveWorkflowPreferencesInBulk(store: Store, tenant: Tenant, subscriberId: string, changes: (PreferencesChange & { workflowId: string })[]) {
  const subscriber = await findSubscriber(store, tenant, subscriberId);
  const workflows = [];
  for (const change of changes) workflows.push(await changeableWorkflow(store, tenant, change.workflowId));
  for (const [index, change] of changes.entries()) await save(store, tenant, subscriber.id, workflows[index]!.id, { channels: change.channels });
  const settings = await loadPreferences(store, subscriber.id);
  return workflows.map((row) => ({
    level: 'template',
    workflow: familyWorkflowView(row),
    enabled: isOn(settings, row.id, 'enabled'),
    channels: channelMap(workflowChannels(row.steps), settings, row.id),
  }));
}

/** Writes each setting the input names as its own row (an upsert), so concurrent changes of different settings all stay. */
async function save(store: Store, tenant: Tenant, subscriberRowId: string, workflowRowId: string, body: PreferencesInput) {
  const now = nowIso();
  const settings: [string, boolean][] = [];
  if (body.enabled !== undefined) settings.push(['enabled', body.enabled]);
  for (const channel of CHANNELS) {
    const value = body.channels?.[channel];
    if (value !== undefined) settings.push([channel, value]);
  }
  if (settings.length === 0) return;
  await store.kysely
    .insertInto('preferences')
    .values(
      settings.map(([setting, enabled]) => ({
        environment_id: tenant.environmentId,
        subscriber_id: subscriberRowId,
        workflow_id: workflowRowId,
        setting,
        enabled: int(enabled),
        updated_at: now,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['subscriber_id', 'workflow_id', 'setting']).doUpdateSet((eb) => ({
        enabled: eb.ref('excluded.enabled'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/**
 * Endpoint 14's body. `global.channels` names every channel some workflow of the environment has;
 * a workflow's `channels` its own channel steps, each on unless the subscriber turned it off for
 * that workflow (listed in `overrides` with source `subscriber`). Critical workflows show all on.
 */
async function preferencesView(store: Store, tenant: Tenant, subscriberRowId: string, criticality: Criticality) {
  const [rows, settings] = await Promise.all([
    store.kysely
      .selectFrom('workflows')
      .select(['id', 'workflow_id', 'name', 'steps', 'critical'])
      .where('environment_id', '=', tenant.environmentId)
      .orderBy('created_at')
      .orderBy('id')
      .execute(),
    loadPreferences(store, subscriberRowId),
  ]);
  const all = rows.map((row) => ({ row, channels: workflowChannels(row.steps) }));
  // Every channel some workflow has, and every channel the subscriber set globally.
  const global = new Set([...all.flatMap((w) => [...w.channels]), ...CHANNELS.filter((c) => settings.has(`${GLOBAL}/${c}`))]);
  const wanted = all.filter(({ row }) => {
    if (criticality === 'all') return true;
    return criticality === 'critical' ? bool(row.critical) : !bool(row.critical);
  });
  return {
    global: { enabled: isOn(settings, GLOBAL, 'enabled'), channels: channelMap(global, settings, GLOBAL) },
    workflows: wanted.map(({ row, channels }) => workflowPreference(row, channels, bool(row.critical) ? new Map() : settings)),
  };
}

function workflowPreference(row: Pick<WorkflowRow, 'id' | 'workflow_id' | 'name'>, channels: Set<Channel>, settings: PreferenceSettings) {
  return {
    enabled: isOn(settings, row.id, 'enabled'),
    channels: channelMap(channels, settings, row.id),
    overrides: [...channels].filter((c) => settings.has(`${row.id}/${c}`)).map((channel) => ({ channel, source: 'subscriber' })),
    workflow: { slug: row.workflow_id, identifier: row.workflow_id, name: row.name },
  };
}

function workflowChannels(stepsJson: string): Set<Channel> {
  const channels = new Set<Channel>();
  for (const step of parseJson<StoredStep[]>(stepsJson, [])) {
    if ((CHANNELS as readonly string[]).includes(step.type)) channels.add(step.type as Channel);
  }
  return channels;
}

function channelMap(channels: Set<Channel>, settings: PreferenceSettings, workflow: string): Partial<Record<Channel, boolean>> {
  const map: Partial<Record<Channel, boolean>> = {};
  for (const c of CHANNELS) if (channels.has(c)) map[c] = isOn(settings, workflow, c);
  return map;
}
