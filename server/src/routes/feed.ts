import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { chooseEncoding } from '../encoding.ts';
import { Feed } from '../inbox/feed.ts';
import { onSubscriberRemoved } from '../inbox/subscribers.ts';
import { StringList, SubscriberIdParam } from '../schemas.ts';

// The in-app feed (10) and the unseen count (13): the hot paths (inbox/feed.ts).

const FeedQuery = Type.Object({
  page: Type.Integer({ minimum: 0, maximum: 100_000, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  read: Type.Optional(Type.Boolean()),
  seen: Type.Optional(Type.Boolean()),
  payload: Type.Optional(Type.String({ maxLength: 8192 })),
  feedIdentifier: Type.Optional(StringList()),
  // Extension: the projection. Top-level Message fields, comma-separated or repeated; `_id` always.
  fields: Type.Optional(Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 50 })),
});

const UnseenQuery = Type.Object({
  seen: Type.Boolean({ default: false }),
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
});

const feedRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const feed = new Feed(app.db, { unseen: app.unseen });
  const stopForgetting = onSubscriberRemoved((environmentId, subscriberId) => feed.forget(environmentId, subscriberId));
  app.addHook('onClose', async () => {
    stopForgetting();
  });

  // 10. The in-app feed: newest first, paged from 0; `totalCount` is the real number of matches.
  app.get('/v1/subscribers/:subscriberId/notifications/feed', { schema: { params: SubscriberIdParam, querystring: FeedQuery } }, async (request, reply) => {
    // A HEAD answers the headers the same GET would: its encoding, and so its tag, too.
    const encoding = chooseEncoding(request.headers['accept-encoding']);
    return reply.sendAnswer(await feed.page(request.tenant, request.params.subscriberId, request.query, encoding));
  });

  // 13. The unseen (or, with seen=true, seen) count, capped at `limit`.
  app.get('/v1/subscribers/:subscriberId/notifications/unseen', { schema: { params: SubscriberIdParam, querystring: UnseenQuery } }, async (request) => {
    const { seen, limit } = request.query;
    return { count: await feed.unseenCount(request.tenant, request.params.subscriberId, seen, limit) };
  });
};

export default feedRoutes;
