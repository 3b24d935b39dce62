import { parseJson } from '../json.ts';
import type { RenderContext } from '../render.ts';
import { subscriberVariables } from './in-app.ts';
import type { RunContext } from './types.ts';
import type { JobRow } from '../db/rows.ts';

/**
 * What a step's templates can read: `{{payload.x}}`, `{{subscriber.x}}`, and after a digest step
 * (Novu's names) `{{step.events}}` (the digested payloads, first trigger first),
 * `{{step.total_count}}` (their number; `{{step.events.length}}` reads the same) and
 * `{{step.digest.events}}` / `{{step.digest.total_count}}`, the same values grouped.
 * `{{step.events.0.name}}` reads one event's field.
 */
export function renderContextFor(job: JobRow, ctx: RunContext): RenderContext {
  const payload = parseJson<Record<string, unknown>>(job.payload, {});
  const render: RenderContext & { step?: Record<string, unknown> } = { payload, subscriber: subscriberVariables(ctx.subscriber) };
  if (ctx.digest) {
    const events = ctx.digest.events;
    render.step = { events, total_count: events.length, digest: { events, total_count: events.length } };
  }
  return render;
}
