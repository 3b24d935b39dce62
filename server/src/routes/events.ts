import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { trigger } from '../engine/trigger.ts';
import { JsonObject } from '../schemas.ts';

// POST /v1/events/trigger (decisions.md, "Beyond the spec"): runs a workflow for one or more
// subscribers; unknown subscribers are created, subscriber objects update the fields they give.

const SubscriberString = Type.String({ minLength: 1, maxLength: 255 });
const Text = Type.String({ maxLength: 1024 });
const RecipientObject = Type.Object({
  subscriberId: SubscriberString,
  firstName: Type.Optional(Text),
  lastName: Type.Optional(Text),
  email: Type.Optional(Text),
  phone: Type.Optional(Text),
  avatar: Type.Optional(Type.String({ maxLength: 2048 })),
  locale: Type.Optional(Text),
  timezone: Type.Optional(Text),
  data: Type.Optional(JsonObject),
});
const Recipient = Type.Union([SubscriberString, RecipientObject]);

const TriggerBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128 }),
  to: Type.Union([Recipient, Type.Array(Recipient, { minItems: 1, maxItems: 100 })]),
  payload: Type.Optional(JsonObject),
  overrides: Type.Optional(JsonObject),
  transactionId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  actor: Type.Optional(Recipient),
});

const events: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/v1/events/trigger', { schema: { body: TriggerBody } }, async (request, reply) => {
    const answer = (transactionId: string) => ({ acknowledged: true, status: 'processed', transactionId });
    // The idempotency key is answered in the transaction that records the runs: a retry after a
    // crash replays this answer, never triggers again.
    const record = await request.answerRecorder(201);
    const { transactionId, missingVariables } = await trigger(app.db, request.tenant, request.body, {
      onRecorded: record ? (trx, recorded) => record(trx, answer(recorded)) : undefined,
    });
    // Rendered empty in the messages, and named in each step's execution details: a developer's mistake.
    if (missingVariables.length > 0) {
      request.log.warn({ workflow: request.body.name, transactionId, missingVariables }, "the trigger's payload lacks variables the workflow's steps use");
    }
    return reply.code(201).send(answer(transactionId));
  });
};

export default events;
