import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createIntegration, listIntegrations, updateIntegration } from '../workflows/integrations.ts';
import { Channel } from '../schemas.ts';

// Integrations: create (11), update (2), list (15); workflows/integrations.ts keeps their secrets
// sealed at rest and masked in every answer but the create's and update's.

const Str = (maxLength = 8192) => Type.Optional(Type.String({ maxLength }));

/** The spec's Integration credentials; unknown fields are dropped. */
const IntegrationCredentials = Type.Object(
  {
    apiKey: Str(), user: Str(), secretKey: Str(65536), domain: Str(), password: Str(), host: Str(), port: Str(),
    region: Str(), accountSid: Str(), messageProfileId: Str(), token: Str(), from: Str(), senderName: Str(),
    projectName: Str(), applicationId: Str(), clientId: Str(), baseUrl: Str(), webhookUrl: Str(), redirectUrl: Str(),
    serviceAccount: Str(65536), ipPoolName: Str(), apiKeyRequestHeader: Str(), secretKeyRequestHeader: Str(),
    idPath: Str(), datePath: Str(), apiToken: Str(), authenticationTokenKey: Str(), instanceId: Str(), alertUid: Str(),
    title: Str(), imageUrl: Str(), state: Str(), externalLink: Str(), channelId: Str(), phoneNumberIdentification: Str(),
    accessKey: Str(), appSid: Str(), senderId: Str(), AppIOBaseUrl: Str(),
    secure: Type.Optional(Type.Boolean()),
    requireTls: Type.Optional(Type.Boolean()),
    ignoreTls: Type.Optional(Type.Boolean()),
    hmac: Type.Optional(Type.Boolean()),
    authenticateByToken: Type.Optional(Type.Boolean()),
    tlsOptions: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

const Filter = Type.Object(
  {
    isNegated: Type.Optional(Type.Boolean()),
    type: Str(64),
    value: Str(64),
    children: Type.Optional(
      Type.Array(
        Type.Object(
          { field: Str(255), value: Str(1024), operator: Str(64), on: Str(64) },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
  },
  { additionalProperties: false },
);

/** Free-form, but the two named fields are typed; other keys are kept as given. */
const Configurations = Type.Object(
  {
    inboundWebhookEnabled: Type.Optional(Type.Boolean()),
    inboundWebhookSigningKey: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: true },
);

const NonBlank = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '\\S' });
const ProviderId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' });

const CreateIntegrationBody = Type.Object(
  {
    providerId: ProviderId,
    channel: Channel,
    name: Type.Optional(NonBlank(255)),
    identifier: Type.Optional(NonBlank(255)),
    _environmentId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    credentials: Type.Optional(IntegrationCredentials),
    active: Type.Optional(Type.Boolean()),
    /** Accepted for compatibility; this service does not call providers to check them. */
    check: Type.Optional(Type.Boolean()),
    conditions: Type.Optional(Type.Array(Filter, { maxItems: 50 })),
    configurations: Type.Optional(Configurations),
  },
  { additionalProperties: false },
);

// Every field of a create, all optional, but the provider and the channel, which stay as created.
const UpdateIntegrationBody = Type.Partial(Type.Omit(CreateIntegrationBody, ['providerId', 'channel']), { additionalProperties: false });

const IntegrationIdParam = Type.Object({ integrationId: Type.String({ minLength: 1, maxLength: 64 }) });

const integrations: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  // 11. Create integration.
  app.post('/v1/integrations', { schema: { body: CreateIntegrationBody } }, async (request, reply) => {
    return reply.code(201).send(await createIntegration(db, request.tenant, request.body));
  });

  // 2. Update integration: every field optional; `credentials` and `configurations` replace the stored ones.
  app.put('/v1/integrations/:integrationId', { schema: { params: IntegrationIdParam, body: UpdateIntegrationBody } }, async (request) => {
    return updateIntegration(db, request.tenant, request.params.integrationId, request.body);
  });

  // 15. List integrations of the key's organization (all its environments).
  app.get('/v1/integrations', async (request) => listIntegrations(db, request.tenant));
};

export default integrations;
