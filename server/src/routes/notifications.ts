import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Channel, StringEnum } from '../schemas.ts';
import { cancelTransaction, getNotification, listNotifications, SEVERITIES } from '../workflows/notifications.ts';

// Endpoints 16 (get notification), 17 (list notifications) and 18 (cancel a triggered event).

const Id = Type.String({ minLength: 1, maxLength: 255 });
const List = (item = Type.String({ minLength: 1, maxLength: 255 })) => Type.Array(item, { maxItems: 100 });

const ListQuery = Type.Object({
  channels: Type.Optional(Type.Array(Channel, { maxItems: 5 })),
  templates: Type.Optional(List()),
  emails: Type.Optional(List()),
  /** Deprecated: matches the transactionId, or the subscriber's subscriberId or email. */
  search: Type.Optional(Type.String({ maxLength: 255 })),
  subscriberIds: Type.Optional(List()),
  severity: Type.Optional(Type.Array(StringEnum(SEVERITIES), { maxItems: 4 })),
  page: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 }),
  transactionId: Type.Optional(Id),
  topicKey: Type.Optional(Id),
  contextKeys: Type.Optional(List(Type.String({ minLength: 3, maxLength: 255, pattern: '^[^:]+:.+$' }))),
  after: Type.Optional(Type.String({ maxLength: 64 })),
  before: Type.Optional(Type.String({ maxLength: 64 })),
});

const notifications: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  // 16
  app.get('/v1/notifications/:notificationId', { schema: { params: Type.Object({ notificationId: Id }) } }, async (request) => {
    return getNotification(db, request.tenant, request.params.notificationId);
  });

  // 17
  app.get('/v1/notifications', { schema: { querystring: ListQuery } }, async (request) => {
    return listNotifications(db, request.tenant, request.query);
  });

  // 18: the answer is the bare JSON `true` when a job was canceled, `false` when none was left to cancel.
  app.delete('/v1/events/trigger/:transactionId', { schema: { params: Type.Object({ transactionId: Id }) } }, async (request, reply) => {
    const canceled = await cancelTransaction(db, request.tenant, request.params.transactionId);
    return reply.code(200).type('application/json; charset=utf-8').send(JSON.stringify(canceled));
  });
};

export default notifications;
