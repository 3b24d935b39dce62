import { columnList } from '../db/read.ts';
import type { MessageRow, SubscriberRow } from '../db/rows.ts';
import { bool, optional, parseJson } from '../json.ts';
import type { TemplateView } from '../workflows/views.ts';

// The inbox's rows as the spec's resource shapes. Unset optional fields are left out, as Novu leaves them out.

export function subscriberView(row: SubscriberRow) {
  return {
    _id: row.id,
    subscriberId: row.subscriber_id,
    firstName: optional(row.first_name),
    lastName: optional(row.last_name),
    email: optional(row.email),
    phone: optional(row.phone),
    avatar: optional(row.avatar),
    locale: optional(row.locale),
    timezone: optional(row.timezone),
    // (Entries stored before every entry had to belong to an integration are left out: Novu's SDK reads none without.)
    channels: parseJson<{ _integrationId?: string }[]>(row.channels, []).filter((entry) => entry._integrationId),
    topics: parseJson<string[]>(row.topics, []),
    isOnline: bool(row.is_online),
    lastOnlineAt: optional(row.last_online_at),
    __v: row.version,
    data: parseJson<Record<string, unknown> | undefined>(row.data, undefined),
    _organizationId: row.organization_id,
    _environmentId: row.environment_id,
    deleted: false,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export type SubscriberView = ReturnType<typeof subscriberView>;

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
  archived: 'archived',
};

/**
 * The spec's Message. `subscriber` and `template` are embedded; the caller looks them up once
 * for a whole page of messages (see loadEmbeds in inbox/embeds.ts).
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
    _templateId: optional(row.template_id),
    _environmentId: row.environment_id,
    _messageTemplateId: optional(row.message_template_id),
    _organizationId: row.organization_id,
    _notificationId: optional(row.notification_id),
    _subscriberId: row.subscriber_id,
    subscriber,
    template,
    templateIdentifier: optional(row.template_identifier),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deliveredAt: [row.delivered_at],
    lastSeenDate: optional(row.last_seen_date),
    lastReadDate: optional(row.last_read_date),
    content: json<unknown[]>(row.content, []),
    transactionId: optional(row.transaction_id),
    subject: optional(row.subject),
    channel: row.channel,
    read: bool(row.read),
    seen: bool(row.seen),
    email: optional(row.email),
    phone: optional(row.phone),
    directWebhookUrl: optional(row.direct_webhook_url),
    providerId: optional(row.provider_id),
    deviceTokens: row.device_tokens ? json<string[]>(row.device_tokens, []) : undefined,
    title: optional(row.title),
    avatar: optional(row.avatar),
    cta: json<Record<string, unknown>>(row.cta, {}),
    _feedId: optional(row.feed_id),
    status: row.status,
    errorId: optional(row.error_id),
    errorText: optional(row.error_text),
    payload: json<Record<string, unknown>>(row.payload, {}),
    overrides: json<Record<string, unknown>>(row.overrides, {}),
    contextKeys: json<string[]>(row.context_keys, []),
    archived: bool(row.archived),
  };
}

/** The columns of a feed item's fields: a Message's, and `_jobId` (`archived` reads none). */
export const FEED_ITEM_COLUMNS: Record<string, keyof MessageRow> = { ...MESSAGE_COLUMNS, _jobId: 'job_key' };

/**
 * The columns of a whole Message or feed item (and of its embedded objects' lookup, and of its
 * payload stored apart), named. PostgreSQL prepares the hot reads once per connection
 * (db.prepared), and a prepared `select *` fails at every use ("cached plan must not change result
 * type") once a column is added to messages, as a process of the next version does when it
 * migrates at start while this one still serves.
 */
export const EVERY_COLUMN = columnList([...Object.values(FEED_ITEM_COLUMNS), 'payload_id']);

/**
 * An item of the in-app feed (endpoint 10): the Message in the shape of Novu's feed item, whose
 * `content` is the rendered body as text (a Message's content blocks are for email), with the id of
 * the job that wrote it and whether it is archived (never, yet).
 */
export function feedItemView<V extends object>(view: V, row: MessageRow) {
  return { ...view, content: contentText(row.content), _jobId: row.job_key ?? '', archived: false };
}

/** The text of a message's stored content: its text blocks' content, one per line. */
export function contentText(stored: string | null | undefined): string {
  const content = parseJson<unknown>(stored, []);
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => (block as { content?: unknown } | null)?.content)
    .filter((text): text is string => typeof text === 'string')
    .join('\n');
}
