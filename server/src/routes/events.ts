import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { trigger, type TriggerInput } from '../engine/trigger.ts';
import { HttpError } from '../errors.ts';
import { TOPIC_KEY_PATTERN } from '../inbox/topics.ts';
import { JsonObject, NullableObject, NullableString, StringEnum } from '../schemas.ts';
import type { Store } from '../db/store.ts';

// POST /v1/events/trigger (decisions.md, "Beyond the spec"): runs a workflow for one or more
// subscribers; unknown subscribers are created, subscriber objects update the fields they give (a
// field given as null is left as it is). A trigger to more recipients than RUNS_WRITTEN_BEFORE_ANSWER,
// and a topic in `to`, reach their subscribers in the background, after the answer.
// An inactive workflow answers 201 `trigger_not_active` and does nothing, as Novu does.
// POST /v1/events/trigger/bulk: up to 100 triggers, one answer each, in order.

const SubscriberString = Type.String({ minLength: 1, maxLength: 255 });
// A profile field given as null (Novu's SDK may send it) leaves the subscriber's value as it is.
const RecipientObject = Type.Object({
  subscriberId: SubscriberString,
  firstName: Type.Optional(NullableString(1024)),
  lastName: Type.Optional(NullableString(1024)),
  email: Type.Optional(NullableString(1024)),
  phone: Type.Optional(NullableString(1024)),
  avatar: Type.Optional(NullableString(2048)),
  locale: Type.Optional(NullableString(1024)),
  timezone: Type.Optional(NullableString(1024)),
  data: Type.Optional(NullableObject),
});
/** The most subscriberIds a topic recipient's `exclude` names. */
const MAX_EXCLUDED = 1000;
const TopicRecipient = Type.Object({
  type: Type.Optional(StringEnum(['Topic', 'Subscriber'] as const)),
  topicKey: Type.String({ minLength: 1, maxLength: 255, pattern: TOPIC_KEY_PATTERN }),
  exclude: Type.Optional(Type.Array(SubscriberString, { maxItems: MAX_EXCLUDED })),
});
const Recipient = Type.Union([SubscriberString, RecipientObject, TopicRecipient]);

const TriggerBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 128 }),
  to: Type.Union([Recipient, Type.Array(Recipient, { minItems: 1, maxItems: 100 })]),
  payload: Type.Optional(JsonObject),
  overrides: Type.Optional(JsonObject),
  transactionId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  actor: Type.Optional(Type.Union([SubscriberString, RecipientObject])),
});

/** The most triggers one bulk request holds (as Novu). */
const MAX_BULK_EVENTS = 100;
const BulkBody = Type.Object({ events: Type.Array(TriggerBody, { minItems: 1, maxItems: MAX_BULK_EVENTS }) });

const events: FastifyPluginAsyncTypebox = async (app) => {
  /** Fan-outs still running after their answers (large triggers', topics'): the app waits for them when it closes. */
  const background = new Set<Promise<void>>();
  app.addHook('onClose', async () => {
    await Promise.allSettled([...background]);
  });

  /** Triggers one event; its answer. */
  async function triggerOne(store: Store, request: Pick<FastifyRequest, 'tenant' | 'log'>, input: TriggerInput, record?: (trx: Store, answer: unknown) => Promise<void>) {
    const answer = (transactionId: string) => ({ acknowledged: true, status: 'processed', transactionId });
    const result = await trigger(store, request.tenant, input, {
      onRecorded: record ? (trx, recorded) => record(trx, answer(recorded)) : undefined,
    });
    // Rendered empty in the messages, and named in each step's execution details: a developer's mistake.
    if (result.missingVariables.length > 0) {
      request.log.warn({ workflow: input.name, transactionId: result.transactionId, missingVariables: result.missingVariables }, "the trigger's payload lacks variables the workflow's steps use");
    }
    if (result.status === 'trigger_not_active') return { acknowledged: true, status: 'trigger_not_active' };
    if (result.background) {
      const running = result.background
        .catch((err: unknown) => app.log.error({ err, transactionId: result.transactionId }, 'fan-out after the answer failed'))
        .finally(() => background.delete(running));
      background.add(running);
    }
    return answer(result.transactionId);
  }

  app.post('/v1/events/trigger', { schema: { body: TriggerBody } }, async (request, reply) => {
    // The idempotency key is answered in the transaction that records the runs: a retry after a
    // crash replays this answer, never triggers again.
    const record = await request.answerRecorder(201);
    return reply.code(201).send(await triggerOne(app.db, request, request.body as TriggerInput, record));
  });

  // Each event in order; one that fails answers `{acknowledged: true, status: 'error', error: [why]}` in its place, and the others go on.
  app.post('/v1/events/trigger/bulk', { schema: { body: BulkBody } }, async (request, reply) => {
    const answers = [];
    for (const event of request.body.events) {
      try {
        answers.push(await triggerOne(app.db, request, event as TriggerInput));
      } catch (err) {
        if (!(err instanceof HttpError)) throw err;
        answers.push({ acknowledged: true, status: 'error', error: [err.message] });
      }
    }
    return reply.code(201).send(answers);
  });
};

export default events;
