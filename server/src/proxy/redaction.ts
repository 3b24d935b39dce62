// What the proxy removes from the service's answers before they reach a browser: delivery
// credentials (a subscriber's `channels`, a Message's own `deviceTokens` and `directWebhookUrl`)
// and a failed delivery's `errorText`, from JSON answers and from the stream's events alike.

/** The longest event of a stream, in characters; past it the stream ends (the client reconnects). The service's are a few KB. */
const MAX_EVENT_LENGTH = 1024 * 1024;

/**
 * Removes delivery credentials from a parsed answer: `channels` from every subscriber (each object
 * that is the value of a `subscriber` key, at any depth: a feed's Messages, mark-as's, an action's,
 * a stream event's, and a spec server's `{data: ...}` envelope alike), and a Message's own
 * `deviceTokens`, `directWebhookUrl` and `errorText` (a push or chat message's: mark-as and actions
 * take any of the subscriber's messages). True when it removed one.
 */
export function redactCredentials(value: unknown): boolean {
  let removed = false;
  // An explicit stack: a deeply nested answer cannot overflow the call stack.
  const stack = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === null || typeof next !== 'object') continue;
    if (Array.isArray(next)) {
      for (const item of next) stack.push(item);
      continue;
    }
    const object = next as Record<string, unknown>;
    const subscriber = object.subscriber;
    if (Object.hasOwn(object, 'subscriber') && subscriber !== null && typeof subscriber === 'object' && !Array.isArray(subscriber) && Object.hasOwn(subscriber, 'channels')) {
      delete (subscriber as Record<string, unknown>).channels;
      removed = true;
    }
    for (const key of MESSAGE_CREDENTIALS) {
      if (!Object.hasOwn(object, key)) continue;
      delete object[key];
      removed = true;
    }
    for (const item of Object.values(object)) stack.push(item);
  }
  return removed;
}

/**
 * A Message's own delivery credentials (spec: Message), and its delivery error's text: a failed
 * webhook's says which host it named and what that resolved to ("... resolves to 10.0.0.7 is a
 * private address"), an oracle of the host's network for anyone whose app lets them set a webhook.
 * (`errorId` stays: a code such as `webhook_unreachable` names nothing.)
 */
const MESSAGE_CREDENTIALS = ['deviceTokens', 'directWebhookUrl', 'errorText'];

/**
 * JSON `text` without its subscribers' channels: the new text, undefined when it had none to
 * remove, null when it is not JSON (or nests too deep to be written again).
 */
export function redactJson(text: string): string | undefined | null {
  try {
    const value: unknown = JSON.parse(text);
    return redactCredentials(value) ? JSON.stringify(value) : undefined;
  } catch {
    return null;
  }
}

const KEYS = ['"channels"', ...MESSAGE_CREDENTIALS.map((key) => `"${key}"`), '\\u'];
const KEY_BYTES = KEYS.map((key) => Buffer.from(key));
/**
 * False when the text cannot hold a key redactCredentials removes: JSON writes one as itself, or
 * with \u escapes (no other escape writes a letter). The elements' pages mostly hold none.
 */
export function mayHoldCredentials(bytes: Buffer): boolean {
  return KEY_BYTES.some((key) => bytes.includes(key));
}

/**
 * A Server-Sent Events stream with its subscribers' channels removed, event by event: each event
 * passes as soon as its blank line has come (several in one chunk pass together), as it was unless
 * its data held a subscriber's channels. An event whose data may hold them but is not JSON is left
 * out; an event past MAX_EVENT_LENGTH ends the stream.
 */
export function redactEvents(): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = '';
  /** The last chunk's text ended with a CR (a line break, or the first half of a CRLF). */
  let cr = false;
  const take = (controller: TransformStreamDefaultController<Uint8Array>, last: boolean) => {
    let out = '';
    let end = eventEnd(pending);
    while (end >= 0) {
      out += redactEvent(pending.slice(0, end));
      pending = pending.slice(end);
      end = eventEnd(pending);
    }
    if (last && pending) {
      out += redactEvent(pending);
      pending = '';
    }
    if (pending.length > MAX_EVENT_LENGTH) throw new Error('an event larger than the proxy passes');
    if (out) controller.enqueue(encoder.encode(out));
  };
  return new TransformStream({
    transform(chunk, controller) {
      const text = decoder.decode(chunk, { stream: true });
      pending += text;
      // A chunk with no line break ends no event (nor a CR's line before it): the pending text is
      // not read again for each chunk of a long data line (reading it whole each time was quadratic).
      const ended = cr || /[\r\n]/.test(text);
      if (text) cr = text.endsWith('\r');
      if (ended) take(controller, false);
      else if (pending.length > MAX_EVENT_LENGTH) throw new Error('an event larger than the proxy passes');
    },
    flush(controller) {
      pending += decoder.decode();
      take(controller, true);
    },
  });
}

/** Where the first event of `text` ends (after its blank line), or -1 while it has not. */
function eventEnd(text: string): number {
  let start = 0;
  for (const lineBreak of text.matchAll(/\r\n|\r|\n/g)) {
    // A CR last may be the first half of a CRLF.
    if (lineBreak[0] === '\r' && lineBreak.index === text.length - 1) return -1;
    // A line break where a line starts ends an empty line: the blank line that ends the event.
    if (lineBreak.index === start) return lineBreak.index + lineBreak[0].length;
    start = lineBreak.index + lineBreak[0].length;
  }
  return -1;
}

/** One event's text, as it was, or with its data's subscribers' channels removed (its data then one line), or '' when its data cannot be read. */
function redactEvent(event: string): string {
  if (!KEYS.some((key) => event.includes(key))) return event;
  const kept: string[] = [];
  const data: string[] = [];
  let at = -1;
  for (const line of event.split(/\r\n|\r|\n/)) {
    if (!line) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data') {
      kept.push(line);
      continue;
    }
    if (at < 0) at = kept.length;
    data.push(colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, ''));
  }
  if (at < 0) return event;
  const text = redactJson(data.join('\n'));
  if (text === null) return '';
  if (text === undefined) return event;
  kept.splice(at, 0, `data: ${text}`);
  return `${kept.join('\n')}\n\n`;
}
