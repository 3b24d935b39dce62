import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CRITICALITIES, saveGlobalPreferences, savePreferences, saveWorkflowPreferences, saveWorkflowPreferencesInBulk, subscriberPreferences } from '../inbox/preferences.ts';
import { JsonObject, StringEnum, SubscriberIdParam } from '../schemas.ts';

// Preferences: read (14), and change (extensions in Novu's shape, decisions.md): the global ones
// with PATCH /v1/subscribers/{subscriberId}/preferences, one workflow's with
// PATCH /v1/subscribers/{subscriberId}/preferences/{workflowId}; and as Novu's SDK sends them,
// PATCH /v2/subscribers/{subscriberId}/preferences[/bulk]. They answer the preferences as endpoint 14
// does with criticality=all (the bulk change: each named workflow's).

const PreferencesQuery = Type.Object({ criticality: StringEnum(CRITICALITIES, { default: 'nonCritical' }) }, { additionalProperties: false });

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
  // Strict (plugins/validation.ts): an unknown key, at any level, is a 422 naming it.
  { additionalProperties: false, strict: true },
);

/** Channels as Novu's `PATCH /v2/subscribers/{id}/preferences` sends them (`tool` is taken and has no effect: there is no such channel here). */
const ChannelsV2 = Type.Object(
  {
    in_app: Type.Optional(Type.Boolean()),
    email: Type.Optional(Type.Boolean()),
    sms: Type.Optional(Type.Boolean()),
    chat: Type.Optional(Type.Boolean()),
    push: Type.Optional(Type.Boolean()),
    tool: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** A workflow's identifier or _id. */
const WorkflowRef = Type.String({ minLength: 1, maxLength: 128 });

/** Novu's body; `schedule` and `context` are taken and have no effect. */
const PreferencesBodyV2 = Type.Object({
  channels: Type.Optional(ChannelsV2),
  workflowId: Type.Optional(WorkflowRef),
  schedule: Type.Optional(JsonObject),
  context: Type.Optional(JsonObject),
});

/** The most workflows one bulk change names. */
const MAX_BULK_PREFERENCES = 100;

const BulkPreferencesBody = Type.Object({
  preferences: Type.Array(Type.Object({ workflowId: WorkflowRef, channels: Type.Optional(ChannelsV2) }), { minItems: 1, maxItems: MAX_BULK_PREFERENCES }),
  context: Type.Optional(JsonObject),
});

const WorkflowParams = Type.Object({
  subscriberId: SubscriberIdParam.properties.subscriberId,
  workflowId: Type.String({ minLength: 1, maxLength: 128 }),
});

const preferences: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  // 14. Preferences: the environment's workflows, each with its channel steps, and the subscriber's settings.
  app.get('/v2/subscribers/:subscriberId/preferences', { schema: { params: SubscriberIdParam, querystring: PreferencesQuery } }, async (request) => {
    return subscriberPreferences(db, request.tenant, request.params.subscriberId, request.query.criticality);
  });

  app.patch('/v1/subscribers/:subscriberId/preferences', { schema: { params: SubscriberIdParam, body: PreferencesBody } }, async (request) => {
    return saveGlobalPreferences(db, request.tenant, request.params.subscriberId, request.body);
  });

  // Novu's v2 change: the global channels, or (workflowId: an identifier or _id) one workflow's.
  app.patch('/v2/subscribers/:subscriberId/preferences', { schema: { params: SubscriberIdParam, body: PreferencesBodyV2 } }, async (request) => {
    return savePreferences(db, request.tenant, request.params.subscriberId, request.body);
  });

  app.patch('/v2/subscribers/:subscriberId/preferences/bulk', { schema: { params: SubscriberIdParam, body: BulkPreferencesBody } }, async (request) => {
    return saveWorkflowPreferencesInBulk(db, request.tenant, request.params.subscriberId, request.body.preferences);
  });

  app.patch('/v1/subscribers/:subscriberId/preferences/:workflowId', { schema: { params: WorkflowParams, body: PreferencesBody } }, async (request) => {
    const { subscriberId, workflowId } = request.params;
    return saveWorkflowPreferences(db, request.tenant, subscriberId, workflowId, request.body);
  });
};

export default preferences;
