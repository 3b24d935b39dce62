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
import type { JobRow, StoredStep, SubscriberRow } from '../db/rows.ts';

/** What `{{subscriber.x}}` placeholders can read. */
export function subscriberVariables(row: SubscriberRow): Record<string, unknown> {
  return {
    subscriberId: row.subscriber_id,
    firstName: row.first_name ?? undefined,
    lastName: row.last_name ?? undefined,
    email: row.email ?? undefined,
    phone: row.phone ?? undefined,
    avatar: row.avatar ?? undefined,
    locale: row.locale ?? undefined,
    timezone: row.timezone ?? undefined,
    data: parseJson<Record<string, unknown> | undefined>(row.data, undefined),
  };
}

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
export function buildCta(cv: InAppControls, ctx: RenderContext) {
  const url = renderUrl(cv.redirect?.url, ctx);
  const buttons = [
    ...(cv.primaryAction ? [button('primary', cv.primaryAction, ctx)] : []),
    ...(cv.secondaryAction ? [button('secondary', cv.secondaryAction, ctx)] : []),
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

/** The message an in_app job writes for its run (`feedId`: the step's feed, when it names one). */
export function inAppMessage(job: JobRow, ctx: RunContext, cv: InAppControls, feedId: string | null): Insertable<MessageTable> {
  const render = renderContextFor(job, ctx);
  return messageRow(job, ctx, {
    channel: 'in_app',
    subject: cv.subject ? renderText(cv.subject, render) : null,
    // The spec gives a message's content as an array of content blocks: the rendered body is one text block.
    content: toJson([{ type: 'text', content: renderText(cv.body ?? '', render) }]),
    avatar: renderUrl(cv.avatar, render) ?? null,
    cta: toJson(buildCta(cv, render)),
    feed_id: feedId,
    feed_identifier: cv.feedIdentifier ?? null,
    job_key: job.id,
  });
}

/**
 * Runs an `in_app` step: writes the Message and completes the job, in one transaction that checks the
 * job is still pending. The message is keyed by its job, so a step run again (after a crash, or by
 * two processes at once) never writes a second one. (fan-out.ts does the same for many runs at once.)
 */
export async function inAppStep(store: Store, job: JobRow, ctx: RunContext): Promise<JobOutcome> {
  const cv = inAppControls(job);
  const now = ctx.now;

  await inTransaction(store, async (trx) => {
    const feedId = cv.feedIdentifier ? await feedIdFor(trx, job.environment_id, cv.feedIdentifier, now) : null;
    const row = inAppMessage(job, ctx, cv, feedId);
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
