import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ACTION_STATUSES, ACTION_TYPES, deleteMessage, deleteTransactionMessages, MARK_AS, markAll, markMessages, setActionStatus } from '../inbox/messages.ts';
import { Channel, JsonObject, StringEnum, SubscriberIdParam } from '../schemas.ts';

// Messages: mark-all (7), mark-as (extension), message action (1), delete by id (9) and by
// transaction (12).

const FeedIdentifierInput = Type.Union([Type.String({ maxLength: 2000 }), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 })]);

const MarkAllBody = Type.Object({
  markAs: StringEnum(MARK_AS),
  feedIdentifier: Type.Optional(FeedIdentifierInput),
});

const MessageId = Type.String({ minLength: 1, maxLength: 64 });

const MarkAsBody = Type.Object({
  messageId: Type.Union([MessageId, Type.Array(MessageId, { minItems: 1, maxItems: 100 })]),
  markAs: StringEnum(MARK_AS),
});

const ActionParams = Type.Object({
  subscriberId: SubscriberIdParam.properties.subscriberId,
  messageId: MessageId,
  type: StringEnum(ACTION_TYPES),
});

const ActionBody = Type.Object({
  status: StringEnum(ACTION_STATUSES),
  payload: Type.Optional(JsonObject),
});

/** Beyond the spec: `?subscriberId=` deletes the message only if it is that subscriber's (the proxy adds it, since a message id alone names no subscriber). */
const DeleteQuery = Type.Object({ subscriberId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) });

const TransactionParams = Type.Object({ transactionId: Type.String({ minLength: 1, maxLength: 255 }) });

const messages: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  // 7. Mark all messages of a subscriber: 201 with the bare number of messages changed.
  app.post('/v1/subscribers/:subscriberId/messages/mark-all', { schema: { params: SubscriberIdParam, body: MarkAllBody } }, async (request, reply) => {
    const { markAs, feedIdentifier } = request.body;
    const count = await markAll(db, request.tenant, request.params.subscriberId, markAs, feedIdentifier);
    return reply.code(201).send(count);
  });

  // Extension: mark one or several messages -> 201 Message[] (in the order asked; one deleted meanwhile is left out).
  app.post('/v1/subscribers/:subscriberId/messages/mark-as', { schema: { params: SubscriberIdParam, body: MarkAsBody } }, async (request, reply) => {
    const { messageId, markAs } = request.body;
    const ids = Array.isArray(messageId) ? messageId : [messageId];
    return reply.code(201).send(await markMessages(db, request.tenant, request.params.subscriberId, ids, markAs));
  });

  // 1. Set message action status: 201 Message with cta.action.status and cta.action.result set.
  app.post('/v1/subscribers/:subscriberId/messages/:messageId/actions/:type', { schema: { params: ActionParams, body: ActionBody } }, async (request, reply) => {
    const { subscriberId, messageId, type } = request.params;
    const view = await setActionStatus(db, request.tenant, subscriberId, messageId, { type, ...request.body });
    return reply.code(201).send(view);
  });

  // 9. Delete a message.
  app.delete('/v1/messages/:messageId', { schema: { params: Type.Object({ messageId: MessageId }), querystring: DeleteQuery } }, async (request) => {
    await deleteMessage(db, request.tenant, request.params.messageId, request.query.subscriberId);
    return { acknowledged: true, status: 'deleted' };
  });

  // 12. Delete the messages of a transaction, optionally of one channel: 204, or 404 when none matched.
  app.delete(
    '/v1/messages/transaction/:transactionId',
    { schema: { params: TransactionParams, querystring: Type.Object({ channel: Type.Optional(Channel) }) } },
    async (request, reply) => {
      await deleteTransactionMessages(db, request.tenant, request.params.transactionId, request.query.channel);
      return reply.code(204).send();
    },
  );
};

export default messages;
