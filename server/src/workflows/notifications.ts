import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { withDigestEvents, withPayloads } from '../db/payloads.ts';
import type { Db, Dialect } from '../db/index.ts';
import type { Tenant } from '../db/keys.ts';
import type { JobRow, NotificationRow, StoredStep, SubscriberRow, WorkflowRow } from '../db/rows.ts';
import type { Database } from '../db/schema.ts';
import type { Store } from '../db/store.ts';
import { notFound, unprocessable } from '../errors.ts';
import { newId } from '../ids.ts';
import { bool, optional, parseJson, toJson } from '../json.ts';
import type { ExecutionDetail } from '../engine/types.ts';
import { stepView, templateView } from './views.ts';

// Notifications, the runs of triggers: get one (endpoint 16), list them (17), cancel a triggered
// event (18). Everything is confined to the key's environment: another environment's
// notification is a 404.

export const SEVERITIES = ['high', 'medium', 'low', 'none'] as const;

/** Job statuses of a run that has not finished: endpoint 18 cancels these. */
export const CANCELABLE_STATUSES = ['pending', 'queued', 'delayed', 'running'] as const;

/** Endpoint 17's query, as its schema validated it. */
export interface NotificationQuery {
  channels?: string[];
  templates?: string[];
  emails?: string[];
  /** Deprecated: matches the transactionId, or the subscriber's subscriberId or email. */
  search?: string;
  subscriberIds?: string[];
  severity?: (typeof SEVERITIES)[number][];
  page: number;
  limit: number;
  transactionId?: string;
  topicKey?: string;
  contextKeys?: string[];
  after?: string;
  before?: string;
}

/** Endpoint 16: one notification of the environment, with its jobs; 404 when there is none. */
export async function getNotification(db: Db, tenant: Tenant, notificationId: string) {
  const row = await db.kysely
    .selectFrom('notifications')
    .selectAll()
    .where('environment_id', '=', tenant.environmentId)
    .where('id', '=', notificationId)
    .executeTakeFirst();
  if (!row) throw notFound('Notification', notificationId);
  const [view] = await views(db, [row]);
  return view;
}

/** Endpoint 17: a page of the environment's notifications, newest first, filtered as the query says. */
export async function listNotifications(db: Db, tenant: Tenant, q: NotificationQuery) {
  const k = db.kysely;
  const dialect = db.dialect;
  const environmentId = tenant.environmentId;
  const after = q.after === undefined ? undefined : timestamp('after', q.after);
  const before = q.before === undefined ? undefined : timestamp('before', q.before);

  let query = k.selectFrom('notifications').selectAll().where('environment_id', '=', environmentId);
  if (q.channels?.length) query = query.where(jsonArrayHasAny(dialect, 'channels', q.channels));
  if (q.templates?.length) query = query.where('template_id', 'in', q.templates);
  if (q.transactionId !== undefined) query = query.where('transaction_id', '=', q.transactionId);
  if (q.severity?.length) {
    const severities = q.severity;
    query = query.where((eb) =>
      severities.includes('none') ? eb.or([eb('severity', 'in', severities), eb('severity', 'is', null)]) : eb('severity', 'in', severities),
    );
  }
  if (q.topicKey !== undefined) query = query.where(hasTopic(dialect, q.topicKey));
  if (q.contextKeys?.length) query = query.where(jsonArrayEqualsSet(dialect, 'context_keys', [...new Set(q.contextKeys)]));
  if (after) query = query.where('created_at', '>=', after);
  if (before) query = query.where('created_at', '<=', before);

  // Filters on the subscriber: by its subscriberId or its email (case-insensitive).
  const subscribersWhere = (where: (eb: ExpressionBuilder<Database, 'subscribers'>) => Expression<SqlBool>) =>
    k.selectFrom('subscribers').select('id').where('environment_id', '=', environmentId).where(where);
  if (q.subscriberIds?.length) {
    const ids = q.subscriberIds;
    query = query.where('subscriber_id', 'in', subscribersWhere((eb) => eb('subscriber_id', 'in', ids)));
  }
  if (q.emails?.length) {
    const emails = q.emails.map((email) => email.toLowerCase());
    query = query.where('subscriber_id', 'in', subscribersWhere((eb) => eb(eb.fn('lower', ['email']), 'in', emails)));
  }
  if (q.search) {
    const term = q.search;
    query = query.where((eb) =>
      eb.or([
        eb('transaction_id', '=', term),
        eb(
          'subscriber_id',
          'in',
          subscribersWhere((s) => s.or([s('subscriber_id', '=', term), s(s.fn('lower', ['email']), '=', term.toLowerCase())])),
        ),
      ]),
    );
  }

  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .offset(q.page * q.limit)
    .execute();
  const hasMore = rows.length > q.limit;
  const data = await views(db, rows.slice(0, q.limit));
  return { data, hasMore, pageSize: q.limit, page: q.page };
}

/**
 * Endpoint 18: cancels the unfinished jobs of a transaction; whether any was canceled (404 when
 * the environment knows no such transaction).
 */
export async function cancelTransaction(db: Db, tenant: Tenant, transactionId: string): Promise<boolean> {
  const environmentId = tenant.environmentId;
  const canceled = await db.kysely.transaction().execute(async (trx) => {
    let select = trx
      .selectFrom('jobs')
      .select(['id', 'status', 'execution_details'])
      .where('environment_id', '=', environmentId)
      .where('transaction_id', '=', transactionId)
      .where('status', 'in', CANCELABLE_STATUSES);
    // Hold the rows, so a scheduler that claims due jobs with FOR UPDATE SKIP LOCKED passes them by.
    if (db.dialect === 'postgres') select = select.forUpdate();
    const jobs = await select.execute();
    const now = new Date();
    let count = 0;
    for (const job of jobs) {
      const details = parseJson<unknown[]>(job.execution_details, []);
      details.push(cancelDetail(now, transactionId, job.status));
      // Only if nothing moved it on since it was read (SQLite takes no row locks).
      const result = await trx
        .updateTable('jobs')
        .set({ status: 'canceled', execution_details: toJson(details), run_at: null, updated_at: now.toISOString() })
        .where('id', '=', job.id)
        .where('status', '=', job.status)
        .executeTakeFirst();
      count += Number(result.numUpdatedRows);
    }
    return count;
  });
  if (canceled === 0) {
    const known = await db.kysely
      .selectFrom('notifications')
      .select('id')
      .where('environment_id', '=', environmentId)
      .where('transaction_id', '=', transactionId)
      .executeTakeFirst();
    if (!known) throw notFound('Transaction', transactionId);
  }
  return canceled > 0;
}

/** An execution detail saying the job was canceled: a `Warning` (Novu's statuses have no other for it) whose detail begins "Canceled". */
function cancelDetail(now: Date, transactionId: string, previousStatus: string): ExecutionDetail {
  return {
    _id: newId(now.getTime()),
    createdAt: now.toISOString(),
    status: 'Warning',
    detail: `Canceled (it was ${previousStatus}) by a request to cancel transaction '${transactionId}'`,
    isRetry: false,
    isTest: false,
    providerId: 'novu',
    raw: '',
    source: 'Internal',
  };
}

/** A query timestamp (ISO-8601, or epoch milliseconds) as stored ISO text; a 422 when it is neither. */
function timestamp(field: string, value: string): string {
  const ms = /^\d{1,15}$/.test(value) ? Number(value) : Date.parse(value);
  const date = new Date(ms);
  if (!Number.isFinite(ms) || Number.isNaN(date.getTime())) {
    throw unprocessable(`${field} must be a timestamp (ISO-8601 or epoch milliseconds)`, {
      [field]: { messages: ['must be a timestamp (ISO-8601 or epoch milliseconds)'], value },
    });
  }
  return date.toISOString();
}

// JSON filters: text columns holding JSON, read with each database's JSON functions.

type JsonColumn = 'channels' | 'context_keys';

/** The JSON array of strings in `column` holds at least one of `values`. */
function jsonArrayHasAny(dialect: Dialect, column: JsonColumn, values: readonly string[]) {
  const col = sql.ref(`notifications.${column}`);
  return dialect === 'postgres'
    ? sql<SqlBool>`(${col})::jsonb ?| ${sql.val([...values])}::text[]`
    : sql<SqlBool>`exists (select 1 from json_each(${col}) where json_each.value in (${sql.join(values)}))`;
}

/** The JSON array of strings in `column` holds exactly the set `values` (order and repeats aside). */
function jsonArrayEqualsSet(dialect: Dialect, column: JsonColumn, values: readonly string[]) {
  const col = sql.ref(`notifications.${column}`);
  if (dialect === 'postgres') {
    const given = JSON.stringify(values);
    return sql<SqlBool>`((${col})::jsonb @> ${given}::jsonb and ${given}::jsonb @> (${col})::jsonb)`;
  }
  return sql<SqlBool>`((select count(distinct json_each.value) from json_each(${col})) = ${values.length}
    and (select count(distinct json_each.value) from json_each(${col}) where json_each.value in (${sql.join(values)})) = ${values.length})`;
}

/** The notification's topics (`[{_topicId, topicKey}]`) include `topicKey`. */
function hasTopic(dialect: Dialect, topicKey: string) {
  const col = sql.ref('notifications.topics');
  return dialect === 'postgres'
    ? sql<SqlBool>`(${col})::jsonb @> ${JSON.stringify([{ topicKey }])}::jsonb`
    : sql<SqlBool>`exists (select 1 from json_each(${col}) where json_extract(json_each.value, '$.topicKey') = ${topicKey})`;
}

// Views: the spec's Notification and Job.

/** Notifications with their jobs, subscriber and template, in three queries for the whole page. */
async function views(store: Store, rows: NotificationRow[]) {
  if (rows.length === 0) return [];
  const k = store.kysely;
  const ids = rows.map((r) => r.id);
  // The payloads stored once per trigger (db/payloads.ts), in the notifications and their jobs.
  await withPayloads(store, rows);
  const [jobs, subscribers, workflows] = await Promise.all([
    k
      .selectFrom('jobs')
      .selectAll()
      .where('notification_id', 'in', ids)
      .orderBy('notification_id')
      .orderBy('step_index')
      .execute()
      .then(async (found) => withDigestEvents(store, await withPayloads(store, found))),
    k.selectFrom('subscribers').selectAll().where('id', 'in', [...new Set(rows.map((r) => r.subscriber_id))]).execute(),
    k.selectFrom('workflows').selectAll().where('id', 'in', [...new Set(rows.map((r) => r.template_id))]).execute(),
  ]);
  const jobsOf = new Map<string, JobRow[]>();
  for (const job of jobs) {
    const list = jobsOf.get(job.notification_id) ?? [];
    list.push(job);
    jobsOf.set(job.notification_id, list);
  }
  const subscriberById = new Map(subscribers.map((s) => [s.id, s]));
  const workflowById = new Map(workflows.map((w) => [w.id, w]));
  return rows.map((row) =>
    notificationView(row, jobsOf.get(row.id) ?? [], subscriberById.get(row.subscriber_id), workflowById.get(row.template_id)),
  );
}

export function notificationView(row: NotificationRow, jobs: JobRow[], subscriber: SubscriberRow | undefined, workflow: WorkflowRow | undefined) {
  const to = parseJson<unknown>(row.to, {});
  return {
    _id: row.id,
    _environmentId: row.environment_id,
    _organizationId: row.organization_id,
    _subscriberId: row.subscriber_id,
    _templateId: row.template_id,
    _digestedNotificationId: optional(row.digested_notification_id),
    transactionId: row.transaction_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    channels: parseJson<string[]>(row.channels, []),
    subscriber: {
      _id: row.subscriber_id,
      subscriberId: subscriber?.subscriber_id ?? '',
      firstName: optional(subscriber?.first_name),
      lastName: optional(subscriber?.last_name),
      email: optional(subscriber?.email),
      phone: optional(subscriber?.phone),
    },
    template: {
      _id: row.template_id,
      name: workflow?.name ?? '',
      // Novu's SDK takes one of its origins; a workflow made through this API is `external`.
      origin: 'external',
      triggers: workflow ? templateView(workflow).triggers : [],
    },
    jobs: jobs.map((job) => jobView(job, workflow)),
    payload: parseJson<Record<string, unknown>>(row.payload, {}),
    controls: parseJson<Record<string, unknown>>(row.controls, {}),
    // A trigger's `to` may be a bare subscriberId; the spec's Notification.to is an object.
    to: typeof to === 'string' ? { subscriberId: to } : to,
    tags: parseJson<string[]>(row.tags, []),
    topics: parseJson<{ _topicId: string; topicKey: string }[]>(row.topics, []),
    severity: row.severity ?? 'none',
    critical: bool(row.critical),
    contextKeys: parseJson<string[]>(row.context_keys, []),
  };
}

function jobView(job: JobRow, workflow: WorkflowRow | undefined) {
  const stored = parseJson<Partial<StoredStep>>(job.step, {});
  const step = stepView(
    { _id: stored._id ?? job.id, name: stored.name ?? job.type, type: (stored.type ?? job.type) as StoredStep['type'], controlValues: stored.controlValues ?? {} },
    job.template_id,
  );
  return {
    _id: job.id,
    type: job.type,
    status: job.status,
    digest: job.digest === null ? undefined : parseJson<Record<string, unknown>>(job.digest, {}),
    executionDetails: parseJson<ExecutionDetail[]>(job.execution_details, []).map(executionDetailView),
    step: {
      _id: step._id,
      _templateId: step._templateId,
      name: step.name,
      active: step.active,
      replyCallback: step.replyCallback,
      controlVariables: stored.controlValues ?? {},
      metadata: step.metadata ?? {},
      issues: {},
      template: step.template,
      filters: step.filters,
      variants: [],
    },
    overrides: {
      ...parseJson<Record<string, unknown>>(job.overrides, {}),
      workflowId: workflow?.workflow_id ?? '',
      stepId: step._id,
    },
    payload: parseJson<Record<string, unknown>>(job.payload, {}),
    // A job no integration ran (in-app, delay, digest, canceled) was run by the service itself.
    providerId: job.provider_id ?? 'novu',
    updatedAt: job.updated_at,
    createdAt: job.created_at,
    scheduleExtensionsCount: 0,
  };
}

/** The statuses an execution detail may show (Novu's SDK refuses any other). */
const DETAIL_STATUSES = new Set(['Success', 'Warning', 'Failed', 'Pending', 'Queued', 'ReadConfirmation']);

/**
 * An execution detail as answers show it. The service records finer statuses (Canceled, Skipped,
 * Merged) than the ones a detail may show: those show as `Warning`, and their detail text (which
 * begins with what happened: "Canceled", "Step skipped", "Digested into") tells which.
 */
function executionDetailView(detail: ExecutionDetail): ExecutionDetail {
  return DETAIL_STATUSES.has(detail.status) ? detail : { ...detail, status: 'Warning' };
}
