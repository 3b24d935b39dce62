import { Type, type Static } from '@sinclair/typebox';
import type { App, AppContext } from '../app.ts';
import type { Tenant } from '../auth.ts';
import { findSubscriber } from '../db/lookups.ts';
import { notFound, unprocessable } from '../errors.ts';
import { nowIso } from '../ids.ts';
import { bool, int, parseJson } from '../json.ts';
import { GLOBAL, isOn, loadPreferences, type PreferenceSettings } from '../engine/preferences.ts';
import type { Store } from '../engine/types.ts';
import { CHANNELS, StringEnum, SubscriberIdParam, type Channel } from '../schemas.ts';
import type { StoredStep, WorkflowRow } from '../views.ts';

// Preferences: read (14), and change (extensions in Novu's shape, decisions.md): the global ones
// with PATCH /v1/subscribers/{subscriberId}/preferences, one workflow's with
// PATCH /v1/subscribers/{subscriberId}/preferences/{workflowId}. Both answer the preferences as
// endpoint 14 does with criticality=all. A critical workflow always delivers: its preferences are
// shown on and cannot be changed (422).

const PreferencesQuery = Type.Object(
  { criticality: StringEnum(['critical', 'nonCritical', 'all'] as const, { default: 'nonCritical' }) },
  { additionalProperties: false },
);
type Criticality = Static<typeof PreferencesQuery>['criticality'];

const PreferencesBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    channels: Type.Optional(
      Type.Object(
        {
          in_app: Type.Optional(Type.Boolean()),
          email: Type.Optional(Type.Boolean()),
          sms: Type.Optional(Type.Boolean()),
          chat: Type.Optional(Type.Boolean()),
          push: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  // Strict (app.ts): an unknown key, at any level, is a 422 naming it.
  { additionalProperties: false, strict: true },
);
type PreferencesBody = Static<typeof PreferencesBody>;

const WorkflowParams = Type.Object({
  subscriberId: SubscriberIdParam.properties.subscriberId,
  workflowId: Type.String({ minLength: 1, maxLength: 128 }),
});

export function preferenceRoutes(app: App, ctx: AppContext) {
  // 14. Preferences: the environment's workflows, each with its channel steps, and the subscriber's settings.
  app.get(
    '/v2/subscribers/:subscriberId/preferences',
    { schema: { params: SubscriberIdParam, querystring: PreferencesQuery } },
    async (request) => {
      const subscriber = await findSubscriber(ctx.db, request.tenant, request.params.subscriberId);
      return preferencesView(ctx.db, request.tenant, subscriber.id, request.query.criticality);
    },
  );

  app.patch(
    '/v1/subscribers/:subscriberId/preferences',
    { schema: { params: SubscriberIdParam, body: PreferencesBody } },
    async (request) => {
      const subscriber = await findSubscriber(ctx.db, request.tenant, request.params.subscriberId);
      await save(ctx.db, request.tenant, subscriber.id, GLOBAL, request.body);
      return preferencesView(ctx.db, request.tenant, subscriber.id, 'all');
    },
  );

  app.patch(
    '/v1/subscribers/:subscriberId/preferences/:workflowId',
    { schema: { params: WorkflowParams, body: PreferencesBody } },
    async (request) => {
      const subscriber = await findSubscriber(ctx.db, request.tenant, request.params.subscriberId);
      const { workflowId } = request.params;
      const workflow = await ctx.db.kysely
        .selectFrom('workflows')
        .select(['id', 'critical'])
        .where('environment_id', '=', request.tenant.environmentId)
        .where('workflow_id', '=', workflowId)
        .executeTakeFirst();
      if (!workflow) throw notFound('Workflow', workflowId);
      if (bool(workflow.critical)) {
        throw unprocessable(`Workflow '${workflowId}' is critical: it always delivers, and its preferences cannot be changed`);
      }
      await save(ctx.db, request.tenant, subscriber.id, workflow.id, request.body);
      return preferencesView(ctx.db, request.tenant, subscriber.id, 'all');
    },
  );
}

/** Writes each setting the body names as its own row (an upsert), so concurrent changes of different settings all stay. */
async function save(store: Store, tenant: Tenant, subscriberRowId: string, workflowRowId: string, body: PreferencesBody) {
  const now = nowIso();
  const settings: [string, boolean][] = [];
  if (body.enabled !== undefined) settings.push(['enabled', body.enabled]);
  for (const c of CHANNELS) {
    const value = body.channels?.[c];
    if (value !== undefined) settings.push([c, value]);
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
  const global = new Set(all.flatMap((w) => [...w.channels]));
  const wanted = all.filter(({ row }) =>
    criticality === 'all' ? true : criticality === 'critical' ? bool(row.critical) : !bool(row.critical),
  );
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
