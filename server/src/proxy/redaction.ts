// What the proxy removes from the service's answers before they reach a browser: delivery
// credentials (a subscriber's `channels`, a Message's own `deviceTokens` and `directWebhookUrl`)
// and a failed delivery's `errorText`, from JSON answers and from the stream's events alike.

/**
 * The longest event of a stream the proxy passes, in characters; one longer is passed as a
 * `refetch` with its id (the client reads its first page), and the stream goes on. The service's
 * are NOTIF_STREAM_EVENT_BYTES at most (16 KB by default).
 */
const MAX_EVENT_LENGTH = 1024 * 1024;
/** A blank line: two line breaks in a row (a CR alone, an LF alone, or a CRLF each). */
const BLANK_LINE = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)/;
/** Characters of skipped text kept to find a blank line split between two chunks. */
const SKIPPED_TAIL_LENGTH = 3;

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

/** The `id:` field of an event's text (its lines before its data), or undefined when it has none there. */
function eventId(text: string): string | undefined {
  let id: string | undefined;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line.startsWith('data')) break;
    if (line.startsWith('id:')) id = line.slice('id:'.length).replace(/^ /, '');
  }
  return id;
}

/** What the proxy passes for an event too long to pass: a refetch, with the event's id when it had one. */
function refetchEvent(id: string | undefined): string {
  const idLine = id === undefined ? '' : `id: ${id}\n`;
  return `${idLine}data: ${JSON.stringify({ ...(id === undefined ? {} : { id }), refetch: true })}\n\n`;
}

/**
 * A Server-Sent Events stream with its subscribers' channels removed, event by event: each event
 * passes as soon as its blank line has come (several in one chunk pass together), as it was unless
 * its data held a subscriber's channels. An event whose data may hold them but is not JSON is left
 * out; an event past MAX_EVENT_LENGTH is skipped to its end without being held, and a `refetch`
 * with its id passes instead: the stream goes on.
 */
export function redactEvents(): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = '';
  /** The last chunk's text ended with a CR (a line break, or the first half of a CRLF). */
  let cr = false;
  /** Skipping an event too long to pass: its id, and the last characters skipped (a blank line may be split between chunks). */
  let skipping: { id: string | undefined; tail: string } | undefined;
  const enqueue = (controller: TransformStreamDefaultController<Uint8Array>, text: string) => {
    if (text) controller.enqueue(encoder.encode(text));
  };
  /** Skips `text` up to the end of the event being skipped; the text after it, or undefined while the event goes on. */
  const skip = (controller: TransformStreamDefaultController<Uint8Array>, text: string): string | undefined => {
    const state = skipping!;
    const searched = state.tail + text;
    const blank = BLANK_LINE.exec(searched);
    if (!blank) {
      state.tail = searched.slice(-SKIPPED_TAIL_LENGTH);
      return undefined;
    }
    skipping = undefined;
    enqueue(controller, refetchEvent(state.id));
    return searched.slice(blank.index + blank[0].length);
  };
  /** The event under way is too long: its text so far is dropped, and the rest skipped as it comes. */
  const startSkipping = (controller: TransformStreamDefaultController<Uint8Array>) => {
    skipping = { id: eventId(pending.slice(0, MAX_EVENT_LENGTH)), tail: '' };
    const text = pending;
    pending = '';
    const rest = skip(controller, text);
    if (rest !== undefined) {
      pending = rest;
      take(controller, false);
    }
  };
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
    enqueue(controller, out);
    if (pending.length > MAX_EVENT_LENGTH) startSkipping(controller);
  };
  return new TransformStream({
    transform(chunk, controller) {
      let text = decoder.decode(chunk, { stream: true });
      if (skipping) {
        const rest = skip(controller, text);
        if (rest === undefined) return;
        text = rest;
        cr = false;
      }
      pending += text;
      // A chunk with no line break ends no event (nor a CR's line before it): the pending text is
      // not read again for each chunk of a long data line (reading it whole each time was quadratic).
      const ended = cr || /[\r\n]/.test(text);
      if (text) cr = text.endsWith('\r');
      if (ended) take(controller, false);
      else if (pending.length > MAX_EVENT_LENGTH) startSkipping(controller);
    },
    flush(controller) {
      if (skipping) return;
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
