import type { Selectable } from 'kysely';
import type { MessageTable, SubscriberTable, WorkflowTable } from './db/schema.ts';
import { bool, parseJson } from './json.ts';

// Rows to the spec's resource shapes. Unset optional fields are left out, as Novu leaves them out.

export type SubscriberRow = Selectable<SubscriberTable>;
export type WorkflowRow = Selectable<WorkflowTable>;
export type MessageRow = Selectable<MessageTable>;

const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

export function subscriberView(row: SubscriberRow) {
  return {
    _id: row.id,
    subscriberId: row.subscriber_id,
    firstName: opt(row.first_name),
    lastName: opt(row.last_name),
    email: opt(row.email),
    phone: opt(row.phone),
    avatar: opt(row.avatar),
    locale: opt(row.locale),
    timezone: opt(row.timezone),
    channels: parseJson<unknown[]>(row.channels, []),
    topics: parseJson<string[]>(row.topics, []),
    isOnline: bool(row.is_online),
    lastOnlineAt: opt(row.last_online_at),
    __v: row.version,
    data: parseJson<Record<string, unknown> | undefined>(row.data, undefined),
    _organizationId: row.organization_id,
    _environmentId: row.environment_id,
    deleted: false,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A workflow step as stored: the shape `POST /v2/workflows` takes, with an `_id` added. */
export interface StoredStep {
  _id: string;
  name: string;
  type: 'in_app' | 'email' | 'sms' | 'chat' | 'push' | 'delay' | 'digest';
  controlValues: Record<string, unknown>;
}

/** The spec's Step (inside a message's or notification's template) for a stored step. */
export function stepView(step: StoredStep, workflowId: string) {
  const cv = step.controlValues ?? {};
  const metadata =
    step.type === 'delay' || step.type === 'digest'
      ? {
          amount: cv.amount,
          unit: cv.unit,
          ...(step.type === 'digest' ? { digestKey: cv.digestKey } : {}),
          type: 'regular',
        }
      : {};
  return {
    _id: step._id,
    uuid: step._id,
    name: step.name,
    _templateId: workflowId,
    active: true,
    shouldStopOnFail: false,
    template: { type: step.type, ...cv },
    filters: [],
    metadata,
    replyCallback: { active: false },
    variants: [],
  };
}

/** The spec's Workflow template for a stored workflow. */
export function templateView(row: WorkflowRow) {
  const steps = parseJson<StoredStep[]>(row.steps, []);
  const variables = new Set<string>();
  for (const s of steps) {
    for (const m of JSON.stringify(s.controlValues ?? {}).matchAll(/\{\{\s*payload\.([\w.]+)\s*\}\}/g)) {
      variables.add(m[1]!);
    }
  }
  const channels = new Set(steps.map((s) => s.type));
  return {
    _id: row.id,
    name: row.name,
    description: row.description ?? '',
    active: bool(row.active),
    draft: false,
    critical: bool(row.critical),
    preferenceSettings: {
      email: channels.has('email'),
      sms: channels.has('sms'),
      in_app: channels.has('in_app'),
      chat: channels.has('chat'),
      push: channels.has('push'),
    },
    tags: parseJson<string[]>(row.tags, []),
    steps: steps.map((s) => stepView(s, row.id)),
    _organizationId: row.organization_id,
    _creatorId: row.organization_id,
    _environmentId: row.environment_id,
    _notificationGroupId: row.environment_id,
    triggers: [
      {
        type: 'event',
        identifier: row.workflow_id,
        variables: [...variables].map((name) => ({ name })),
        subscriberVariables: [],
      },
    ],
    deleted: false,
    notificationGroup: {
      _id: row.environment_id,
      name: 'General',
      _environmentId: row.environment_id,
      _organizationId: row.organization_id,
    },
    data: {},
    workflowIntegrationStatus: {},
  };
}

export type SubscriberView = ReturnType<typeof subscriberView>;
export type TemplateView = ReturnType<typeof templateView>;

/**
 * The column each field of messageView reads (the embedded `subscriber` and `template` are looked
 * up by theirs): a projection of the feed selects only the columns of the fields it names.
 * test/server/views.test.ts checks it against messageView.
 */
export const MESSAGE_COLUMNS: Record<string, keyof MessageRow> = {
  _id: 'id',
  _templateId: 'template_id',
  _environmentId: 'environment_id',
  _messageTemplateId: 'message_template_id',
  _organizationId: 'organization_id',
  _notificationId: 'notification_id',
  _subscriberId: 'subscriber_id',
  subscriber: 'subscriber_id',
  template: 'template_id',
  templateIdentifier: 'template_identifier',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  deliveredAt: 'delivered_at',
  lastSeenDate: 'last_seen_date',
  lastReadDate: 'last_read_date',
  content: 'content',
  transactionId: 'transaction_id',
  subject: 'subject',
  channel: 'channel',
  read: 'read',
  seen: 'seen',
  email: 'email',
  phone: 'phone',
  directWebhookUrl: 'direct_webhook_url',
  providerId: 'provider_id',
  deviceTokens: 'device_tokens',
  title: 'title',
  avatar: 'avatar',
  cta: 'cta',
  _feedId: 'feed_id',
  status: 'status',
  errorId: 'error_id',
  errorText: 'error_text',
  payload: 'payload',
  overrides: 'overrides',
  contextKeys: 'context_keys',
};

/**
 * The spec's Message. `subscriber` and `template` are embedded; the caller looks them up once
 * for a whole page of messages (see loadEmbeds in routes/messages.ts).
 */
export function messageView<J = never>(
  row: MessageRow,
  subscriber: SubscriberView | undefined,
  template: TemplateView | undefined,
  /** How JSON columns are read: parsed, or (the feed: rawJson) kept as their text. */
  json: <T>(text: string | null | undefined, fallback: T) => T | J = parseJson,
) {
  return {
    _id: row.id,
    _templateId: opt(row.template_id),
    _environmentId: row.environment_id,
    _messageTemplateId: opt(row.message_template_id),
    _organizationId: row.organization_id,
    _notificationId: opt(row.notification_id),
    _subscriberId: row.subscriber_id,
    subscriber,
    template,
    templateIdentifier: opt(row.template_identifier),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deliveredAt: [row.delivered_at],
    lastSeenDate: opt(row.last_seen_date),
    lastReadDate: opt(row.last_read_date),
    content: json<unknown[]>(row.content, []),
    transactionId: opt(row.transaction_id),
    subject: opt(row.subject),
    channel: row.channel,
    read: bool(row.read),
    seen: bool(row.seen),
    email: opt(row.email),
    phone: opt(row.phone),
    directWebhookUrl: opt(row.direct_webhook_url),
    providerId: opt(row.provider_id),
    deviceTokens: row.device_tokens ? json<string[]>(row.device_tokens, []) : undefined,
    title: opt(row.title),
    avatar: opt(row.avatar),
    cta: json<Record<string, unknown>>(row.cta, {}),
    _feedId: opt(row.feed_id),
    status: row.status,
    errorId: opt(row.error_id),
    errorText: opt(row.error_text),
    payload: json<Record<string, unknown>>(row.payload, {}),
    overrides: json<Record<string, unknown>>(row.overrides, {}),
    contextKeys: json<string[]>(row.context_keys, []),
  };
}

// --- Integrations ------------------------------------------------------------------------------

export type IntegrationRow = Selectable<import('./db/schema.ts').IntegrationTable>;

/**
 * The spec's Integration. `credentials` and `configurations` are stored sealed (server/secrets.ts);
 * the route opens them and passes the plain values in.
 */
export function integrationView(row: IntegrationRow, credentials: Record<string, unknown>, configurations: Record<string, unknown>) {
  return {
    _id: row.id,
    _environmentId: row.environment_id,
    _organizationId: row.organization_id,
    name: row.name,
    identifier: row.identifier,
    providerId: row.provider_id,
    channel: row.channel,
    credentials,
    configurations,
    active: bool(row.active),
    deleted: false,
    primary: bool(row.primary),
    conditions: parseJson<unknown[]>(row.conditions, []),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
