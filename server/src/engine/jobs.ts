import { STORED_APART } from '../db/payloads.ts';
import type { Insertable } from 'kysely';
import type { MessageTable } from '../db/schema.ts';
import { newId } from '../ids.ts';
import { parseJson, toJson } from '../json.ts';
import type { ExecutionDetail, RunContext } from './types.ts';
import type { Store } from '../db/store.ts';
import type { JobRow, StoredStep } from '../db/rows.ts';

/** A new execution detail; `providerId` 'novu' and `source` 'Internal' unless given. */
export function executionDetail(now: Date, status: string, detail: string, extra: Partial<ExecutionDetail> = {}): ExecutionDetail {
  return {
    _id: newId(now.getTime()),
    createdAt: now.toISOString(),
    status,
    detail,
    isRetry: false,
    isTest: false,
    providerId: 'novu',
    raw: '',
    source: 'Internal',
    ...extra,
  };
}

/**
 * Thrown when a job is no longer in the status it was read in: endpoint 18 canceled it, or another
 * process ran it. Whatever the handler wrote in the same transaction is rolled back with it.
 */
export class JobMovedError extends Error {
  constructor(readonly jobId: string) {
    super(`job ${jobId} changed status while it ran`);
  }
}

/**
 * Sets a job's status and appends an execution detail to it, only if the job is still in the status
 * it was read in (`job.status`); otherwise throws JobMovedError, so a canceled job never completes.
 * Releases the job's scheduler lock.
 */
export async function finishJob(
  store: Store,
  job: JobRow,
  status: string,
  detail: ExecutionDetail,
  now: Date,
  providerId: string | null = job.provider_id,
  extra: { run_at?: number | null; digest?: string | null } = {},
): Promise<void> {
  const details = parseJson<ExecutionDetail[]>(job.execution_details, []);
  details.push(detail);
  const result = await store.kysely
    .updateTable('jobs')
    .set({
      status,
      execution_details: toJson(details),
      provider_id: providerId,
      locked_by: null,
      locked_until: null,
      updated_at: now.toISOString(),
      ...extra,
    })
    .where('id', '=', job.id)
    .where('status', '=', job.status)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw new JobMovedError(job.id);
  job.status = status;
  job.execution_details = toJson(details);
  job.provider_id = providerId;
  job.locked_by = null;
  job.locked_until = null;
  if (extra.run_at !== undefined) job.run_at = extra.run_at;
  if (extra.digest !== undefined) job.digest = extra.digest;
}

/**
 * A message written by a job: the references every message of a run carries (environment,
 * subscriber, notification, workflow, step, transaction, payload), defaults for the rest, then
 * what the step itself sets (`fields`: at least the channel).
 */
export function messageRow(
  job: JobRow,
  ctx: RunContext,
  fields: Pick<Insertable<MessageTable>, 'channel'> & Partial<Insertable<MessageTable>>,
): Insertable<MessageTable> {
  const iso = ctx.now.toISOString();
  const step = parseJson<Partial<StoredStep>>(job.step, {});
  return {
    id: newId(ctx.now.getTime()),
    environment_id: job.environment_id,
    organization_id: job.organization_id,
    subscriber_id: job.subscriber_id,
    notification_id: job.notification_id,
    template_id: job.template_id,
    message_template_id: step._id ?? null,
    template_identifier: ctx.workflow?.workflow_id ?? null,
    transaction_id: job.transaction_id,
    subject: null,
    content: '[]',
    avatar: null,
    cta: '{}',
    feed_id: null,
    feed_identifier: null,
    read: 0,
    seen: 0,
    last_read_date: null,
    last_seen_date: null,
    status: 'sent',
    error_id: null,
    error_text: null,
    // The first trigger's payload, after a digest too (its events stay on the digest job): a
    // reference to it when it is stored apart (db/payloads.ts).
    payload: job.payload_id ? STORED_APART : job.payload,
    overrides: job.payload_id ? STORED_APART : job.overrides,
    payload_id: job.payload_id ?? null,
    context_keys: '[]',
    provider_id: null,
    email: null,
    phone: null,
    device_tokens: null,
    direct_webhook_url: null,
    title: null,
    delivered_at: iso,
    created_at: iso,
    updated_at: iso,
    job_key: null,
    archived: 0,
    archived_at: null,
    snoozed_until: null,
    redelivered_at: '[]',
    severity: null,
    tags: '[]',
    data: null,
    ...fields,
  };
}

