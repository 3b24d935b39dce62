import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  deleteTopic,
  findTopic,
  listSubscriptions,
  listTopics,
  MAX_SUBSCRIPTIONS_PER_REQUEST,
  subscribe,
  TOPIC_KEY_PATTERN,
  topicView,
  unsubscribe,
  updateTopic,
  upsertTopic,
  type SubscriptionTarget,
} from '../inbox/topics.ts';
import { JsonObject, StringEnum } from '../schemas.ts';

// Topics and their subscriptions, with Novu's paths and shapes (inbox/topics.ts). A trigger
// addresses a topic with `to: {type: 'Topic', topicKey}` (engine/topic-fan-out.ts).

const TopicKey = Type.String({ minLength: 1, maxLength: 255, pattern: TOPIC_KEY_PATTERN });
const KeyParam = Type.Object({ topicKey: TopicKey });
const Name = Type.String({ maxLength: 255 });
const SubscriberId = Type.String({ minLength: 1, maxLength: 255 });

const CreateTopicBody = Type.Object({ key: TopicKey, name: Type.Optional(Name), data: Type.Optional(JsonObject) });
const CreateTopicQuery = Type.Object({ failIfExists: Type.Boolean({ default: false }) });
const UpdateTopicBody = Type.Object({ name: Type.Optional(Name), data: Type.Optional(JsonObject) });

/** Cursor, page size and order of a list (inbox/topics.ts); other query keys Novu's SDK sends are taken and have no effect. */
const ListQuery = {
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  before: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  includeCursor: Type.Boolean({ default: false }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  orderDirection: StringEnum(['ASC', 'DESC'] as const, { default: 'DESC' }),
};
const TopicsQuery = Type.Object({ ...ListQuery, key: Type.Optional(TopicKey), name: Type.Optional(Name) });
const SubscriptionsQuery = Type.Object({ ...ListQuery, subscriberId: Type.Optional(SubscriberId) });

/** The subscribers a request names: subscriberIds, or objects with an identifier for the subscription. */
const Targets = Type.Array(
  Type.Union([SubscriberId, Type.Object({ subscriberId: SubscriberId, identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })), name: Type.Optional(Name) })]),
  { maxItems: MAX_SUBSCRIPTIONS_PER_REQUEST },
);
/** Novu's bodies: `subscriptions` (current) or `subscriberIds` (older); either or both. */
const SubscriptionsBody = Type.Object({
  subscriptions: Type.Optional(Targets),
  subscriberIds: Type.Optional(Type.Array(SubscriberId, { maxItems: MAX_SUBSCRIPTIONS_PER_REQUEST })),
});

function targetsOf(body: { subscriptions?: (string | SubscriptionTarget)[]; subscriberIds?: string[] }): SubscriptionTarget[] {
  const given = [...(body.subscriptions ?? []), ...(body.subscriberIds ?? [])];
  return given.map((target) => (typeof target === 'string' ? { subscriberId: target } : { subscriberId: target.subscriberId, identifier: target.identifier }));
}

const topics: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  // Creates the topic (201), or updates the one with that key (200); failIfExists: 409 instead.
  app.post('/v2/topics', { schema: { querystring: CreateTopicQuery, body: CreateTopicBody } }, async (request, reply) => {
    const { row, created } = await upsertTopic(db, request.tenant, request.body, request.query.failIfExists);
    return reply.code(created ? 201 : 200).send(topicView(row));
  });

  app.get('/v2/topics', { schema: { querystring: TopicsQuery } }, async (request) => listTopics(db, request.tenant, request.query));

  app.get('/v2/topics/:topicKey', { schema: { params: KeyParam } }, async (request) => topicView(await findTopic(db, request.tenant, request.params.topicKey)));

  app.patch('/v2/topics/:topicKey', { schema: { params: KeyParam, body: UpdateTopicBody } }, async (request) => {
    return topicView(await updateTopic(db, request.tenant, request.params.topicKey, request.body));
  });

  app.delete('/v2/topics/:topicKey', { schema: { params: KeyParam } }, async (request) => {
    await deleteTopic(db, request.tenant, request.params.topicKey);
    return { acknowledged: true };
  });

  app.get('/v2/topics/:topicKey/subscriptions', { schema: { params: KeyParam, querystring: SubscriptionsQuery } }, async (request) => {
    return listSubscriptions(db, request.tenant, request.params.topicKey, request.query);
  });

  app.post('/v2/topics/:topicKey/subscriptions', { schema: { params: KeyParam, body: SubscriptionsBody } }, async (request, reply) => {
    return reply.code(201).send(await subscribe(db, request.tenant, request.params.topicKey, targetsOf(request.body)));
  });

  app.delete('/v2/topics/:topicKey/subscriptions', { schema: { params: KeyParam, body: SubscriptionsBody } }, async (request) => {
    return unsubscribe(db, request.tenant, request.params.topicKey, targetsOf(request.body));
  });
};

export default topics;
