import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SEVERITIES, parseDataFilter, type FamilyFilter } from '../inbox/family-filter.ts';
import {
  ACTION_KINDS,
  BULK_ACTIONS,
  bulkChange,
  changeNotification,
  countNotifications,
  deleteNotification,
  listNotifications,
  parseCountFilters,
  type MessageChange,
} from '../inbox/family.ts';
import { JsonObject, StringEnum, StringList, SubscriberIdParam } from '../schemas.ts';

// The subscriber notifications family, with the paths, bodies and status codes of Novu's published
// SDK (@novu/api): GET list and count answer 200, a PATCH of one message 200 with its item, DELETE
// and the bulk POSTs 204 with no body (the SDK refuses any other status). inbox/family.ts does the work.

const BASE = '/v2/subscribers/:subscriberId/notifications';

/** Largest `filters` text of a count: 30 filters of a few tags each fit many times over. */
const MAX_FILTERS_TEXT = 32_768;
/** Largest `data` filter text. */
const MAX_DATA_TEXT = 8192;
/** The most ids a bulk `seen` names. */
const MAX_BULK_IDS = 1000;

const NotificationId = Type.String({ minLength: 1, maxLength: 64 });
const Severity = StringEnum(SEVERITIES);

const ListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  after: Type.Optional(NotificationId),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
  read: Type.Optional(Type.Boolean()),
  seen: Type.Optional(Type.Boolean()),
  archived: Type.Optional(Type.Boolean()),
  snoozed: Type.Optional(Type.Boolean()),
  severity: Type.Optional(Type.Array(Severity, { maxItems: SEVERITIES.length })),
  tags: Type.Optional(StringList()),
  data: Type.Optional(Type.String({ maxLength: MAX_DATA_TEXT })),
  createdGte: Type.Optional(Type.Number({ minimum: 0 })),
  createdLte: Type.Optional(Type.Number({ minimum: 0 })),
  contextKeys: Type.Optional(StringList()),
});

const CountQuery = Type.Object({ filters: Type.String({ minLength: 1, maxLength: MAX_FILTERS_TEXT }) });

const MessageParams = Type.Object({ subscriberId: SubscriberIdParam.properties.subscriberId, notificationId: NotificationId });
const ActionParams = Type.Object({
  subscriberId: SubscriberIdParam.properties.subscriberId,
  notificationId: NotificationId,
  actionType: StringEnum(ACTION_KINDS),
  change: StringEnum(['complete', 'revert'] as const),
});

const SnoozeBody = Type.Object({ snoozeUntil: Type.String({ minLength: 1, maxLength: 64 }) });

const BulkBody = Type.Object({
  tags: Type.Optional(Type.Unknown()),
  data: Type.Optional(Type.Union([Type.String({ maxLength: MAX_DATA_TEXT }), JsonObject, Type.Null()])),
  notificationIds: Type.Optional(Type.Array(NotificationId, { maxItems: MAX_BULK_IDS })),
  contextKeys: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 })),
  // Extensions: filter a bulk change as the list filters, so a tab's "archive all" touches what it shows.
  severity: Type.Optional(Type.Array(Severity, { maxItems: SEVERITIES.length })),
  read: Type.Optional(Type.Boolean()),
  archived: Type.Optional(Type.Boolean()),
  snoozed: Type.Optional(Type.Boolean()),
});

/** The PATCHes of one message that take no body. */
const SIMPLE_CHANGES = ['read', 'unread', 'archive', 'unarchive', 'unsnooze'] as const;

const family: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  app.get(BASE, { schema: { params: SubscriberIdParam, querystring: ListQuery } }, async (request) => {
    const { data, ...rest } = request.query;
    const query = { ...rest, data: parseDataFilter(data) } as Parameters<typeof listNotifications>[3];
    return listNotifications(db, request.tenant, request.params.subscriberId, query);
  });

  app.get(`${BASE}/count`, { schema: { params: SubscriberIdParam, querystring: CountQuery } }, async (request) => {
    const filters: FamilyFilter[] = parseCountFilters(request.query.filters);
    return countNotifications(db, request.tenant, request.params.subscriberId, filters);
  });

  for (const kind of SIMPLE_CHANGES) {
    app.patch(`${BASE}/:notificationId/${kind}`, { schema: { params: MessageParams } }, async (request) => {
      const { subscriberId, notificationId } = request.params;
      return changeNotification(db, request.tenant, subscriberId, notificationId, { kind });
    });
  }

  app.patch(`${BASE}/:notificationId/snooze`, { schema: { params: MessageParams, body: SnoozeBody } }, async (request) => {
    const { subscriberId, notificationId } = request.params;
    return changeNotification(db, request.tenant, subscriberId, notificationId, { kind: 'snooze', snoozeUntil: request.body.snoozeUntil });
  });

  app.patch(`${BASE}/:notificationId/actions/:actionType/:change`, { schema: { params: ActionParams } }, async (request) => {
    const { subscriberId, notificationId, actionType, change } = request.params;
    const messageChange: MessageChange = { kind: change, action: actionType };
    return changeNotification(db, request.tenant, subscriberId, notificationId, messageChange);
  });

  app.delete(`${BASE}/:notificationId`, { schema: { params: MessageParams } }, async (request, reply) => {
    const { subscriberId, notificationId } = request.params;
    await deleteNotification(db, request.tenant, subscriberId, notificationId);
    return reply.code(204).send();
  });

  for (const action of BULK_ACTIONS) {
    app.post(`${BASE}/${action}`, { schema: { params: SubscriberIdParam, body: BulkBody } }, async (request, reply) => {
      await bulkChange(db, request.tenant, request.params.subscriberId, action, request.body);
      return reply.code(204).send();
    });
  }
};

export default family;
