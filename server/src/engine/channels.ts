import type { Insertable } from 'kysely';
import type { MessageTable } from '../db/schema.ts';
import { parseJson, toJson } from '../json.ts';
import { renderText } from '../render.ts';
import { executionDetail, finishJob, messageRow } from './jobs.ts';
import { renderContextFor } from './render-context.ts';
import type { ExecutionDetail, JobOutcome, RunContext, StepHandler } from './types.ts';
import { mapBounded, postWebhook, WEBHOOK_CONCURRENCY, type WebhookOutcome } from './webhook.ts';
import { webhookFailures } from './metrics.ts';
import { inTransaction, type Store } from '../db/store.ts';
import type { JobRow, StoredStep } from '../db/rows.ts';

// The delivery channels besides in_app. email, sms and push go through the environment's active
// integration of the channel (its primary one first): the service holds no provider SDKs, so the
// delivery is recorded (execution detail `Success` with the integration's providerId, and a message
// of the channel with status `sent`), or it fails when there is no integration or no address.
// chat really POSTs `{text}` to the subscriber's chat webhooks (webhook.ts).
//
// A failed delivery fails its job (status `failed`, message status `error` with errorId/errorText);
// the run goes on with the next step, as a step's `shouldStopOnFail` is false.

/** Providers of subscriber credentials that are chat: the spec's, and the ones Novu's SDK adds (the others are push). */
export const CHAT_PROVIDERS = new Set([
  'slack', 'discord', 'msteams', 'mattermost', 'ryver', 'zulip', 'grafana-on-call', 'getstream', 'rocket-chat',
  'whatsapp-business', 'chat-webhook', 'service-slack', 'webex-messaging', 'line', 'novu-slack', 'telegram', 'sendblue',
  'novu-web-chat',
]);
export const PUSH_PROVIDERS = new Set(['fcm', 'apns', 'expo', 'one-signal', 'pushpad', 'push-webhook', 'pusher-beams', 'appio']);

interface ChannelEntry {
  providerId: string;
  integrationIdentifier?: string;
  credentials?: { webhookUrl?: string; deviceTokens?: string[] };
}

type Channel = 'email' | 'sms' | 'push' | 'chat';

interface Delivery {
  /** null when delivered */
  error: { id: string; text: string } | null;
  providerId: string | null;
  detail: string;
  raw?: unknown;
  fields?: Partial<Insertable<MessageTable>>;
}

/** The environment's active integration of a channel, its primary one first (then the oldest). */
export async function activeIntegration(store: Store, environmentId: string, channel: string) {
  return store.kysely
    .selectFrom('integrations')
    .select(['id', 'provider_id', 'identifier'])
    .where('environment_id', '=', environmentId)
    .where('channel', '=', channel)
    .where('active', '=', 1)
    .orderBy('primary', 'desc')
    .orderBy('created_at')
    .orderBy('id')
    .executeTakeFirst();
}

function rendered(job: JobRow, ctx: RunContext) {
  const step = parseJson<StoredStep>(job.step, { _id: '', name: '', type: job.type as StoredStep['type'], controlValues: {} });
  const controls = step.controlValues as Record<string, unknown>;
  const render = renderContextFor(job, ctx);
  const text = (v: unknown) => (typeof v === 'string' ? renderText(v, render) : '');
  return {
    step,
    subject: text(controls.subject ?? controls.title),
    body: text(controls.body ?? controls.content ?? controls.text),
  };
}

function deliveryRow(job: JobRow, ctx: RunContext, channel: Channel, subject: string, body: string, delivery: Delivery) {
  return messageRow(job, ctx, {
    channel,
    subject: subject || null,
    content: toJson([{ type: 'text', content: body }]),
    status: delivery.error ? 'error' : 'sent',
    error_id: delivery.error?.id ?? null,
    error_text: delivery.error?.text ?? null,
    provider_id: delivery.providerId,
    ...delivery.fields,
  });
}

/** Stores one message per delivery and finishes the job (failed when any delivery failed), in one transaction. */
async function record(store: Store, job: JobRow, ctx: RunContext, channel: Channel, subject: string, body: string, deliveries: Delivery[]): Promise<JobOutcome> {
  const failed = deliveries.some((delivery) => delivery.error);
  await inTransaction(store, async (trx) => {
    const details: ExecutionDetail[] = [];
    for (const delivery of deliveries) {
      const row = deliveryRow(job, ctx, channel, subject, body, delivery);
      await trx.kysely.insertInto('messages').values(row).execute();
      details.push(
        executionDetail(ctx.now, delivery.error ? 'Failed' : 'Success', delivery.detail, {
          providerId: delivery.providerId ?? 'novu',
          source: delivery.providerId ? 'Credentials' : 'Internal',
          raw: toJson({ messageId: row.id, ...(delivery.raw as object | undefined) }),
        }),
      );
    }
    // Every detail but the last is appended as part of the job's history; the last one finishes it.
    const last = details.pop()!;
    if (details.length > 0) {
      const all = [...parseJson<ExecutionDetail[]>(job.execution_details, []), ...details];
      job.execution_details = toJson(all);
    }
    const providerId = deliveries.find((delivery) => delivery.providerId)?.providerId ?? job.provider_id;
    await finishJob(trx, job, failed ? 'failed' : 'completed', last, ctx.now, providerId);
  });
  // Webhook deliveries that failed (error ids webhook_*), for /metrics.
  webhookFailures.inc(deliveries.filter((delivery) => delivery.error?.id.startsWith('webhook_')).length);
  return failed ? 'failed' : 'completed';
}

function channelEntries(ctx: RunContext): ChannelEntry[] {
  return parseJson<ChannelEntry[]>(ctx.subscriber.channels, []);
}

/** email, sms and push: through the environment's active integration of the channel. */
function integrationStep(channel: 'email' | 'sms' | 'push'): StepHandler {
  return async (store, job, ctx) => {
    const { subject, body } = rendered(job, ctx);
    const integration = await activeIntegration(store, job.environment_id, channel);
    let delivery: Delivery;
    if (!integration) {
      delivery = {
        error: { id: 'no_active_integration', text: `There is no active ${channel} integration in this environment` },
        providerId: null,
        detail: `Failed: there is no active ${channel} integration in this environment`,
      };
    } else {
      const providerId = integration.provider_id;
      const base = { providerId, raw: { integrationIdentifier: integration.identifier } };
      if (channel === 'email') {
        const email = ctx.subscriber.email;
        delivery = email
          ? { ...base, error: null, detail: `Message sent through ${providerId} to ${email}`, fields: { email } }
          : { ...base, error: { id: 'missing_email', text: 'The subscriber has no email address' }, detail: 'Failed: the subscriber has no email address' };
      } else if (channel === 'sms') {
        const phone = ctx.subscriber.phone;
        delivery = phone
          ? { ...base, error: null, detail: `Message sent through ${providerId} to ${phone}`, fields: { phone } }
          : { ...base, error: { id: 'missing_phone', text: 'The subscriber has no phone number' }, detail: 'Failed: the subscriber has no phone number' };
      } else {
        const tokens = [
          ...new Set(channelEntries(ctx).filter((entry) => entry.providerId === providerId).flatMap((entry) => entry.credentials?.deviceTokens ?? [])),
        ];
        delivery =
          tokens.length > 0
            ? { ...base, error: null, detail: `Message sent through ${providerId} to ${tokens.length} device(s)`, fields: { device_tokens: toJson(tokens), title: subject || null } }
            : {
                ...base,
                error: { id: 'missing_device_tokens', text: `The subscriber has no ${providerId} device tokens` },
                detail: `Failed: the subscriber has no ${providerId} device tokens`,
              };
      }
    }
    return record(store, job, ctx, channel, subject, body, [delivery]);
  };
}

/**
 * chat: POSTs `{text}` (the rendered body) to every chat webhook of the subscriber (credentials of a
 * chat provider with a `webhookUrl`), one message each, recording the receiver's answer.
 */
export const chatStep: StepHandler = async (store, job, ctx) => {
  const { subject, body } = rendered(job, ctx);
  const targets = channelEntries(ctx).filter((entry) => CHAT_PROVIDERS.has(entry.providerId) && entry.credentials?.webhookUrl);
  const deliveries: Delivery[] = [];
  if (targets.length === 0) {
    deliveries.push({
      error: { id: 'missing_webhook_url', text: 'The subscriber has no chat webhookUrl' },
      providerId: null,
      detail: 'Failed: the subscriber has no chat credentials with a webhookUrl',
    });
  }
  // Every receiver at once (a few at a time), so silent ones cost one timeout, not one each.
  const outcomes = await mapBounded(targets, WEBHOOK_CONCURRENCY, (target) => postWebhook(target.credentials!.webhookUrl!, { text: body }));
  for (const [index, target] of targets.entries()) {
    const outcome = outcomes[index]!;
    // The receiver's status only: its answer is never echoed back through the API.
    const raw = { statusCode: outcome.statusCode ?? null, error: outcome.error ?? null, ms: outcome.ms };
    if (outcome.ok) {
      deliveries.push({ error: null, providerId: target.providerId, detail: `Webhook answered ${outcome.statusCode}`, raw });
      continue;
    }
    deliveries.push({
      error: { id: webhookErrorId(outcome), text: `Webhook ${outcome.error}` },
      providerId: target.providerId,
      detail: `Failed: webhook ${outcome.error}`,
      raw,
    });
  }
  return record(store, job, ctx, 'chat', subject, body, deliveries);
};

/** A failed webhook delivery's error id: its address refused, the status it answered, or no answer. */
function webhookErrorId(outcome: WebhookOutcome): string {
  if (outcome.refused) return 'webhook_address_refused';
  if (outcome.statusCode !== undefined) return `webhook_status_${outcome.statusCode}`;
  return 'webhook_unreachable';
}

export const emailStep = integrationStep('email');
export const smsStep = integrationStep('sms');
export const pushStep = integrationStep('push');
