// Delivery of a chat message to a subscriber's webhook: one JSON POST, with a timeout. Never throws:
// every outcome (an answer of any status, a refused connection, a timeout, a bad URL) is returned.

export const WEBHOOK_TIMEOUT_MS = 5000;
/** At most this much of the receiver's answer is kept (in the execution detail's `raw`). */
const BODY_KEEP = 512;

export interface WebhookOutcome {
  ok: boolean;
  /** The receiver's HTTP status, when it answered. */
  statusCode?: number;
  /** Why it failed, when it did. */
  error?: string;
  /** The start of the receiver's answer. */
  body?: string;
  ms: number;
}

/** True for an absolute http(s) URL with a host and no user:password part. */
export function isWebhookUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 2048) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && !url.username && !url.password;
  } catch {
    return false;
  }
}

export async function postWebhook(url: string, body: unknown, timeoutMs = WEBHOOK_TIMEOUT_MS): Promise<WebhookOutcome> {
  const started = Date.now();
  if (!isWebhookUrl(url)) return { ok: false, error: 'not an http(s) URL', ms: 0 };
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'notif-inbox' },
      body: JSON.stringify(body),
      // A redirect is an answer like any other: it is recorded, not followed.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await readStart(res);
    const ok = res.status >= 200 && res.status < 300;
    return {
      ok,
      statusCode: res.status,
      body: text,
      ...(ok ? {} : { error: `answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}` }),
      ms: Date.now() - started,
    };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const error =
      e.name === 'TimeoutError' || e.name === 'AbortError'
        ? `no answer within ${timeoutMs} ms`
        : [e.cause?.code, e.cause?.message ?? e.message].filter(Boolean).join(': ');
    return { ok: false, error: error || 'request failed', ms: Date.now() - started };
  }
}

async function readStart(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < BODY_KEEP) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // A receiver that resets the connection mid-answer still answered with its status.
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, BODY_KEEP);
}
