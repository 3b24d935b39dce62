import { parseJson } from '../json.ts';
import type { RenderContext } from '../render.ts';
import type { RunContext } from './types.ts';
import type { JobRow, SubscriberRow } from '../db/rows.ts';

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

/** The payload parsed last, by the id it is stored under (db/payloads.ts). */
let lastParsed: { id: string; text: string; payload: Record<string, unknown> } | undefined;

/**
 * A job's payload, parsed: once per trigger, not once per job (a trigger's jobs share one stored
 * payload, and a large one to many recipients through many steps would be parsed that many times).
 * Rendering only reads it.
 */
function payloadOf(job: JobRow): Record<string, unknown> {
  if (!job.payload_id) return parseJson<Record<string, unknown>>(job.payload, {});
  if (lastParsed?.id === job.payload_id && lastParsed.text === job.payload) return lastParsed.payload;
  const payload = parseJson<Record<string, unknown>>(job.payload, {});
  lastParsed = { id: job.payload_id, text: job.payload, payload };
  return payload;
}

/**
 * What a step's templates can read: `{{payload.x}}`, `{{subscriber.x}}`, and after a digest step
 * (Novu's names) `{{step.events}}` (the digested payloads, first trigger first),
 * `{{step.total_count}}` (their number; `{{step.events.length}}` reads the same) and
 * `{{step.digest.events}}` / `{{step.digest.total_count}}`, the same values grouped.
 * `{{step.events.0.name}}` reads one event's field.
 */
export function renderContextFor(job: JobRow, ctx: RunContext): RenderContext {
  const payload = payloadOf(job);
  const render: RenderContext & { step?: Record<string, unknown> } = { payload, subscriber: subscriberVariables(ctx.subscriber) };
  if (ctx.digest) {
    const events = ctx.digest.events;
    render.step = { events, total_count: events.length, digest: { events, total_count: events.length } };
  }
  return render;
}
