// One schema for SQLite and PostgreSQL. Portable column types only: text, integer, bigint.
// Booleans are 0/1 integers, JSON is text, timestamps are ISO-8601 UTC text (they sort as text).
// Every row that belongs to an environment carries environment_id, and every query filters on it.

import type { ColumnType } from 'kysely';

export interface OrganizationTable {
  id: string;
  name: string;
  created_at: string;
}

export interface EnvironmentTable {
  id: string;
  organization_id: string;
  name: string;
  created_at: string;
}

export interface ApiKeyTable {
  /** sha256 of the key; the key itself is never stored. */
  key_hash: string;
  environment_id: string;
  created_at: string;
}

/** Small key/value store: the demo environment's development key, encryption salt. */
export interface SettingTable {
  name: string;
  value: string;
}

export interface SubscriberTable {
  id: string;
  environment_id: string;
  organization_id: string;
  subscriber_id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  avatar: string | null;
  locale: string | null;
  timezone: string | null;
  /** JSON object */
  data: string | null;
  /** JSON array of channel credential entries */
  channels: string;
  /** JSON array of strings */
  topics: string;
  is_online: number;
  last_online_at: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface IntegrationTable {
  id: string;
  environment_id: string;
  organization_id: string;
  name: string;
  identifier: string;
  provider_id: string;
  channel: string;
  /** encrypted JSON (see db/secrets.ts) */
  credentials: string;
  /** JSON, inboundWebhookSigningKey encrypted inside it */
  configurations: string;
  /** JSON array of filters */
  conditions: string;
  active: number;
  primary: number;
  created_at: string;
  updated_at: string;
}

export interface WorkflowTable {
  id: string;
  environment_id: string;
  organization_id: string;
  workflow_id: string;
  name: string;
  description: string | null;
  /** JSON array of steps: {_id, name, type, controlValues} */
  steps: string;
  /** JSON array of strings */
  tags: string;
  active: number;
  critical: number;
  /** high | medium | low | none; null (rows older than the column) is none */
  severity: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: string;
  updated_at: string;
}

export interface FeedTable {
  id: string;
  environment_id: string;
  identifier: string;
  created_at: string;
}

export interface NotificationTable {
  id: string;
  environment_id: string;
  organization_id: string;
  subscriber_id: string;
  template_id: string;
  transaction_id: string;
  digested_notification_id: string | null;
  /** JSON array of channel names */
  channels: string;
  payload: string;
  controls: string;
  to: string;
  tags: string;
  topics: string;
  severity: string | null;
  critical: number;
  context_keys: string;
  created_at: string;
  updated_at: string;
  /** The trigger's payload and overrides, stored once (payloads); null for rows written before, which hold their own. */
  payload_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface JobTable {
  id: string;
  notification_id: string;
  environment_id: string;
  organization_id: string;
  subscriber_id: string;
  template_id: string;
  transaction_id: string;
  step_index: number;
  /** JSON of the workflow step this job runs */
  step: string;
  type: string;
  /** pending | queued | running | delayed | completed | failed | canceled | merged | skipped */
  status: string;
  payload: string;
  overrides: string;
  /** The trigger's payload and overrides, stored once (payloads); null for rows written before, which hold their own. */
  payload_id: ColumnType<string | null, string | null | undefined, string | null>;
  digest: string | null;
  execution_details: string;
  provider_id: string | null;
  /** epoch milliseconds when a waiting job is due */
  run_at: number | null;
  locked_by: string | null;
  locked_until: number | null;
  created_at: string;
  updated_at: string;
}

export interface MessageTable {
  id: string;
  environment_id: string;
  organization_id: string;
  subscriber_id: string;
  notification_id: string | null;
  template_id: string | null;
  message_template_id: string | null;
  template_identifier: string | null;
  transaction_id: string | null;
  channel: string;
  subject: string | null;
  /** JSON array of content blocks */
  content: string;
  avatar: string | null;
  /** JSON of cta */
  cta: string;
  feed_id: string | null;
  feed_identifier: string | null;
  read: number;
  seen: number;
  last_read_date: string | null;
  last_seen_date: string | null;
  status: string;
  error_id: string | null;
  error_text: string | null;
  payload: string;
  overrides: string;
  context_keys: string;
  provider_id: string | null;
  email: string | null;
  phone: string | null;
  device_tokens: string | null;
  direct_webhook_url: string | null;
  title: string | null;
  delivered_at: string;
  created_at: string;
  updated_at: string;
  /** The in-app job that wrote this message (unique: a replayed step writes nothing twice); null otherwise. */
  job_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** Commit order of in-app messages (engine/sequence.ts); null until given, and for other channels. */
  seq: ColumnType<number | null, number | null | undefined, number | null>;
  /** 1 while archived (the default feed and the counts leave it out); migration 0011. */
  archived: ColumnType<number, number | undefined, number>;
  archived_at: ColumnType<string | null, string | null | undefined, string | null>;
  /** ISO time a snoozed message comes back (message_wakes holds its wake-up); null when not snoozed. */
  snoozed_until: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON array of the ISO times a snoozed message came back: `deliveredAt` is delivered_at and these. */
  redelivered_at: ColumnType<string, string | undefined, string>;
  /** high | medium | low; null is `none`. Copied from the workflow (or the trigger's overrides) when written. */
  severity: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON array of the workflow's tags when written. */
  tags: ColumnType<string, string | undefined, string>;
  /** JSON object: the in-app step's `data` control, rendered; null when it has none. */
  data: ColumnType<string | null, string | null | undefined, string | null>;
  /** The trigger's payload and overrides, stored once (payloads); null for rows written before, which hold their own. */
  payload_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** The wake-up of a snoozed message: one per message, claimed by a scheduler like a due job (engine/snooze.ts). */
export interface MessageWakeTable {
  message_id: string;
  /** the subscriber's row id */
  subscriber_id: string;
  environment_id: string;
  /** When it is due, epoch ms. */
  run_at: number;
  locked_by: string | null;
  locked_until: number | null;
  created_at: string;
}

/** A trigger's payload and overrides, stored once for all its notifications, jobs and messages (migration 0013). */
export interface PayloadTable {
  id: string;
  environment_id: string;
  organization_id: string;
  transaction_id: string | null;
  payload: string;
  overrides: string;
  /** The payload's and overrides' bytes together. */
  bytes: number;
  created_at: string;
}

export interface IdempotencyTable {
  organization_id: string;
  key: string;
  request_hash: string;
  /** in_flight | done */
  state: string;
  status_code: number | null;
  body: string | null;
  created_at: number;
  /** Whose request it was: `environmentId subscriberId` (the route's subscriber), or null (none named). */
  subscriber_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** The answer's size before sealing, in bytes. */
  bytes: ColumnType<number, number | undefined, number>;
}

/** One preference of a subscriber: `workflow_id` '' is global; `setting` is 'enabled' or a channel. */
export interface PreferenceTable {
  environment_id: string;
  /** the subscriber's row id */
  subscriber_id: string;
  /** the workflow's row id, or '' */
  workflow_id: string;
  setting: string;
  enabled: number;
  updated_at: string;
}

export interface TopicTable {
  id: string;
  environment_id: string;
  organization_id: string;
  key: string;
  name: string | null;
  /** JSON object */
  data: string | null;
  created_at: string;
  updated_at: string;
}

/** A subscriber's subscription to a topic: one per (topic, subscriber). */
export interface TopicSubscriptionTable {
  id: string;
  environment_id: string;
  topic_id: string;
  /** the subscriber's row id */
  subscriber_id: string;
  identifier: string;
  created_at: string;
  updated_at: string;
}

export interface Database {
  organizations: OrganizationTable;
  environments: EnvironmentTable;
  api_keys: ApiKeyTable;
  settings: SettingTable;
  subscribers: SubscriberTable;
  integrations: IntegrationTable;
  workflows: WorkflowTable;
  feeds: FeedTable;
  notifications: NotificationTable;
  jobs: JobTable;
  messages: MessageTable;
  idempotency_keys: IdempotencyTable;
  payloads: PayloadTable;
  preferences: PreferenceTable;
  topics: TopicTable;
  topic_subscriptions: TopicSubscriptionTable;
  message_wakes: MessageWakeTable;
  /** SQLite only: kept by triggers (migration 0007), read by inbox/feed.ts. */
  inbox_counts: InboxCountTable;
}

export interface InboxCountTable {
  subscriber_id: string;
  total: number;
  unseen: number;
  unread: number;
}
