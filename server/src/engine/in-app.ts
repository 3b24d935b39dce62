import type { Insertable } from 'kysely';
import type { MessageTable } from '../db/schema.ts';
import { parseJson, toJson } from '../json.ts';
import { renderText, renderUrl, type RenderContext } from '../render.ts';
import { renderContextFor } from './render-context.ts';
import type { InAppControls } from './controls.ts';
import { feedIdFor } from './feeds.ts';
import { executionDetail, finishJob, messageRow } from './jobs.ts';
import { sequenceMessages } from './sequence.ts';
import type { JobOutcome, RunContext } from './types.ts';
import { inTransaction, type Store } from '../db/store.ts';
import type { JobRow, StoredStep } from '../db/rows.ts';

type Action = NonNullable<InAppControls['primaryAction']>;

function button(type: 'primary' | 'secondary', action: Action, ctx: RenderContext) {
  const url = renderUrl(action.redirect?.url, ctx);
  return {
    type,
    content: renderText(action.label, ctx),
    ...(action.resultContent !== undefined ? { resultContent: renderText(action.resultContent, ctx) } : {}),
    // Not in the spec's button shape: where the button leads, when the step gives a redirect.
    ...(url ? { url } : {}),
  };
}

/** The message's `cta`: a redirect (its url dropped when unsafe once rendered) and the action buttons. */
export function buildCta(controls: InAppControls, ctx: RenderContext) {
  const url = renderUrl(controls.redirect?.url, ctx);
  const buttons = [
    ...(controls.primaryAction ? [button('primary', controls.primaryAction, ctx)] : []),
    ...(controls.secondaryAction ? [button('secondary', controls.secondaryAction, ctx)] : []),
  ];
  return {
    type: 'redirect',
    data: url ? { url } : {},
    ...(buttons.length > 0 ? { action: { status: 'pending', buttons } } : {}),
  };
}

/** An in_app job's controls. */
export function inAppControls(job: JobRow): InAppControls {
  return parseJson<StoredStep>(job.step, { _id: '', name: '', type: 'in_app', controlValues: {} }).controlValues as InAppControls;
}

/** The in-app step's `data` control with every string rendered as the body is (nested objects and lists too). */
function renderData(value: unknown, ctx: RenderContext): unknown {
  if (typeof value === 'string') return renderText(value, ctx);
  if (Array.isArray(value)) return value.map((item) => renderData(item, ctx));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, renderData(item, ctx)]));
  return value;
}

const SEVERITY_VALUES = new Set(['high', 'medium', 'low']);

/**
 * A message's severity: the trigger's `overrides.severity` when it names one, else the workflow's;
 * null for `none`.
 */
function severityOf(job: JobRow, ctx: RunContext): string | null {
  const overrides = parseJson<{ severity?: unknown }>(job.overrides, {});
  const severity = typeof overrides.severity === 'string' ? overrides.severity : ctx.workflow?.severity;
  return severity && SEVERITY_VALUES.has(severity) ? severity : null;
}

/** The message an in_app job writes for its run (`feedId`: the step's feed, when it names one). */
export function inAppMessage(job: JobRow, ctx: RunContext, controls: InAppControls, feedId: string | null): Insertable<MessageTable> {
  const render = renderContextFor(job, ctx);
  return messageRow(job, ctx, {
    channel: 'in_app',
    subject: controls.subject ? renderText(controls.subject, render) : null,
    // The spec gives a message's content as an array of content blocks: the rendered body is one text block.
    content: toJson([{ type: 'text', content: renderText(controls.body ?? '', render) }]),
    avatar: renderUrl(controls.avatar, render) ?? null,
    cta: toJson(buildCta(controls, render)),
    feed_id: feedId,
    feed_identifier: controls.feedIdentifier ?? null,
    job_key: job.id,
    // The notifications family filters by these: copied now, so a filter reads the message alone.
    severity: severityOf(job, ctx),
    tags: ctx.workflow?.tags ?? '[]',
    data: controls.data ? toJson(renderData(controls.data, render)) : null,
  });
}

/**
 * Runs an `in_app` step: writes the Message and completes the job, in one transaction that checks the
 * job is still pending. The message is keyed by its job, so a step run again (after a crash, or by
 * two processes at once) never writes a second one. (fan-out.ts does the same for many runs at once.)
 */
export async function inAppStep(store: Store, job: JobRow, ctx: RunContext): Promise<JobOutcome> {
  const controls = inAppControls(job);
  const now = ctx.now;

  await inTransaction(store, async (trx) => {
    const feedId = controls.feedIdentifier ? await feedIdFor(trx, job.environment_id, controls.feedIdentifier, now) : null;
    const row = inAppMessage(job, ctx, controls, feedId);
    // A job replayed after a crash writes nothing twice (job_key is unique), and tells no stream twice.
    const { numInsertedOrUpdatedRows } = await trx.kysely.insertInto('messages').values(row).onConflict((oc) => oc.column('job_key').doNothing()).executeTakeFirst();
    await finishJob(trx, job, 'completed', executionDetail(now, 'Success', 'Message created'), now, 'novu');
    if (numInsertedOrUpdatedRows) {
      // Open streams hear of it (on PostgreSQL at the commit); numbered last, as that holds a lock to the commit.
      await trx.changes?.publish(trx.kysely, { subscriberId: row.subscriber_id, messageId: row.id });
      await sequenceMessages(trx, [row.id]);
    }
  });
  return 'completed';
}
