import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CRITICALITIES, saveGlobalPreferences, saveWorkflowPreferences, subscriberPreferences } from '../inbox/preferences.ts';
import { StringEnum, SubscriberIdParam } from '../schemas.ts';

// Preferences: read (14), and change (extensions in Novu's shape, decisions.md): the global ones
// with PATCH /v1/subscribers/{subscriberId}/preferences, one workflow's with
// PATCH /v1/subscribers/{subscriberId}/preferences/{workflowId}. Both answer the preferences as
// endpoint 14 does with criticality=all.

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

  app.patch('/v1/subscribers/:subscriberId/preferences/:workflowId', { schema: { params: WorkflowParams, body: PreferencesBody } }, async (request) => {
    const { subscriberId, workflowId } = request.params;
    return saveWorkflowPreferences(db, request.tenant, subscriberId, workflowId, request.body);
  });
};

export default preferences;
