// The wait before asking again after failures, shared by the poller and the stream.
import type { NotifApiError } from '../../api/request.ts';

/** The longest wait, whatever the number of failures. */
export const MAX_BACKOFF = 5 * 60_000;

/**
 * Exponential backoff with jitter: `base` doubled for each of `failures`, at most MAX_BACKOFF, then
 * between half and all of that; or the failure's `Retry-After` when the server asks for longer.
 */
export function backoff(base: number, failures: number, failure?: NotifApiError): number {
  const exponential = Math.min(MAX_BACKOFF, base * 2 ** failures);
  const jittered = exponential * (0.5 + Math.random() / 2);
  const retryAfter = (failure?.retryAfter ?? 0) * 1000;
  return Math.max(jittered, retryAfter);
}
