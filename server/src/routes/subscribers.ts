import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CREDENTIAL_PROVIDERS, updateCredentials } from '../inbox/credentials.ts';
import { SEARCH_DIRECTIONS, SEARCH_ORDER_FIELDS, searchSubscribers } from '../inbox/subscriber-search.ts';
import { createSubscribers, findSubscriber, MAX_BULK_SUBSCRIBERS, patchSubscriber, removeSubscriber, saveSubscriber } from '../inbox/subscribers.ts';
import { subscriberView } from '../inbox/views.ts';
import { NullableObject, NullableString, StringEnum, SubscriberIdParam } from '../schemas.ts';

// Subscribers: create (8), get (3), search (6), credentials append/replace (4, 5); and, with Novu's
// paths and shapes, change (PATCH), remove (DELETE) and bulk create. Preferences (14) are in
// preferences.ts. Every query is confined to the API key's environment.

/** A string that may also be null (null clears the field on update). */

const CreateSubscriberBody = Type.Object(
  {
    subscriberId: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }),
    firstName: Type.Optional(NullableString(255)),
    lastName: Type.Optional(NullableString(255)),
    email: Type.Optional(NullableString(320)),
    phone: Type.Optional(NullableString(64)),
    avatar: Type.Optional(NullableString(2048)),
    locale: Type.Optional(NullableString(64)),
    timezone: Type.Optional(NullableString(64)),
    data: Type.Optional(NullableObject),
  },
  { additionalProperties: false },
);

/** The profile fields alone (PATCH): a field left out keeps its value, null clears it. */
const PatchSubscriberBody = Type.Omit(CreateSubscriberBody, ['subscriberId'], { additionalProperties: false });

const BulkCreateBody = Type.Object(
  { subscribers: Type.Array(CreateSubscriberBody, { minItems: 1, maxItems: MAX_BULK_SUBSCRIBERS }) },
  { additionalProperties: false },
);

const CreateSubscriberQuery = Type.Object({ failIfExists: Type.Boolean({ default: false }) }, { additionalProperties: false });

const SearchQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    before: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    orderBy: StringEnum(SEARCH_ORDER_FIELDS, { default: '_id' }),
    orderDirection: StringEnum(SEARCH_DIRECTIONS, { default: 'DESC' }),
    includeCursor: Type.Boolean({ default: false }),
    email: Type.Optional(Type.String({ maxLength: 320 })),
    name: Type.Optional(Type.String({ maxLength: 512 })),
    phone: Type.Optional(Type.String({ maxLength: 64 })),
    subscriberId: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);

const HttpUrl = Type.String({ minLength: 1, maxLength: 2048 });

const CredentialsBody = Type.Object(
  {
    providerId: StringEnum(CREDENTIAL_PROVIDERS),
    integrationIdentifier: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    credentials: Type.Object(
      {
        webhookUrl: Type.Optional(HttpUrl),
        channel: Type.Optional(Type.String({ maxLength: 255 })),
        deviceTokens: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { maxItems: 500 })),
        alertUid: Type.Optional(Type.String({ maxLength: 255 })),
        title: Type.Optional(Type.String({ maxLength: 1024 })),
        imageUrl: Type.Optional(HttpUrl),
        state: Type.Optional(Type.String({ maxLength: 255 })),
        externalUrl: Type.Optional(HttpUrl),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const subscribers: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  // 8. Create subscriber; an existing subscriberId is updated unless failIfExists=true (409).
  app.post('/v2/subscribers', { schema: { querystring: CreateSubscriberQuery, body: CreateSubscriberBody } }, async (request, reply) => {
    const subscriber = await saveSubscriber(db, request.tenant, request.body, request.query.failIfExists);
    return reply.code(201).send(subscriberView(subscriber));
  });

  app.patch('/v2/subscribers/:subscriberId', { schema: { params: SubscriberIdParam, body: PatchSubscriberBody } }, async (request) => {
    return subscriberView(await patchSubscriber(db, request.tenant, request.params.subscriberId, request.body));
  });

  // Removes the subscriber with its messages, preferences and topic subscriptions.
  app.delete('/v2/subscribers/:subscriberId', { schema: { params: SubscriberIdParam } }, async (request) => {
    await removeSubscriber(db, request.tenant, request.params.subscriberId);
    return { acknowledged: true, status: 'deleted' };
  });

  // Creates (or updates) up to 500 subscribers: which were created, updated, failed.
  app.post('/v1/subscribers/bulk', { schema: { body: BulkCreateBody } }, async (request, reply) => {
    return reply.code(201).send(await createSubscribers(db, request.tenant, request.body.subscribers));
  });

  // 3. Get subscriber.
  app.get('/v2/subscribers/:subscriberId', { schema: { params: SubscriberIdParam } }, async (request) => {
    return subscriberView(await findSubscriber(db, request.tenant, request.params.subscriberId));
  });

  // 6. Search subscribers, with cursors.
  app.get('/v2/subscribers', { schema: { querystring: SearchQuery } }, async (request) => {
    return searchSubscribers(db, request.tenant.environmentId, request.query);
  });

  // 4, 5. Append (PATCH) or replace (PUT) the credentials of one channel entry.
  for (const method of ['PATCH', 'PUT'] as const) {
    app.route({
      method,
      url: '/v1/subscribers/:subscriberId/credentials',
      schema: { params: SubscriberIdParam, body: CredentialsBody },
      handler: async (request) => {
        const subscriber = await updateCredentials(db, request.tenant, request.params.subscriberId, request.body, method === 'PATCH');
        return subscriberView(subscriber);
      },
    });
  }
};

export default subscribers;
