// Rendering of workflow step templates. Text only: placeholders are replaced by plain values and
// nothing is interpreted as HTML (the components render message content as text). URLs are allowed
// only for http(s) and relative paths, both when a workflow is saved and after rendering.

/** `{{payload.a.b}}`, `{{subscriber.firstName}}`; whitespace inside the braces is allowed. */
const PLACEHOLDER = /\{\{\s*([A-Za-z_$][\w$]*(?:\.[\w$-]+)*)\s*\}\}/g;

export interface RenderContext {
  payload: Record<string, unknown>;
  subscriber: Record<string, unknown>;
}

/** The value at a dotted path, reading own properties only (no prototype walks). */
function lookup(root: Record<string, unknown>, path: string): unknown {
  let value: unknown = root;
  for (const segment of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

function toText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

/**
 * The most characters (UTF-16 code units) a rendered text holds; the rest is cut. A template may
 * repeat a placeholder (a body of 10,000 characters holds 769 `{{payload.x}}`), and the payload may
 * be as large as the body limit: rendered in full, one trigger wrote a message of 231 MB (a third
 * of a second per message to read it back, and past 512 MB the step failed), multiplied by every
 * recipient. Every rendered text goes through here: in-app subject, body, button labels, and the
 * other channels' texts.
 */
export const MAX_RENDERED_LENGTH = 65_536;

/** The prefix of a payload variable's path (`payload.name`). */
const PAYLOAD_PREFIX = 'payload.';

/**
 * Replaces every placeholder; a missing value (a payload variable the trigger did not send, a
 * subscriber field left empty) renders as the empty string, as a null does: end users never read
 * template syntax. The trigger records each missing payload variable as a Warning execution detail
 * (GET /v1/notifications/:id) and in the service's log, so a developer finds it. At most
 * MAX_RENDERED_LENGTH characters.
 */
export function renderText(template: string, ctx: RenderContext): string {
  if (!template.includes('{{')) return cut(template);
  let out = '';
  let from = 0;
  for (const placeholder of template.matchAll(PLACEHOLDER)) {
    out += template.slice(from, placeholder.index) + toText(lookup(ctx as unknown as Record<string, unknown>, placeholder[1]!));
    from = placeholder.index + placeholder[0].length;
    if (out.length >= MAX_RENDERED_LENGTH) return cut(out);
  }
  return cut(out + template.slice(from));
}

/** The first half of a surrogate pair is a code unit in this range. */
const HIGH_SURROGATE_FIRST = 0xd800;
const HIGH_SURROGATE_LAST = 0xdbff;

/** `text` cut to MAX_RENDERED_LENGTH, never between the two halves of a surrogate pair. */
function cut(text: string): string {
  if (text.length <= MAX_RENDERED_LENGTH) return text;
  const last = text.charCodeAt(MAX_RENDERED_LENGTH - 1);
  const isHighSurrogate = last >= HIGH_SURROGATE_FIRST && last <= HIGH_SURROGATE_LAST;
  return text.slice(0, isHighSurrogate ? MAX_RENDERED_LENGTH - 1 : MAX_RENDERED_LENGTH);
}

/** The payload variables a template uses (`payload.x.y` -> `x.y`). */
export function payloadVariables(template: string): string[] {
  const names: string[] = [];
  for (const placeholder of template.matchAll(PLACEHOLDER)) {
    const path = placeholder[1]!;
    if (path.startsWith(PAYLOAD_PREFIX)) names.push(path.slice(PAYLOAD_PREFIX.length));
  }
  return names;
}

/** Every text in a step's control values (its subject, body, button labels, URLs, at any depth). */
function textsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) textsOf(item, out);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) textsOf(item, out);
  return out;
}

/** The payload variables a step's control values use that `payload` does not have (`x.y`), each once. */
export function missingPayloadVariables(controlValues: unknown, payload: Record<string, unknown>): string[] {
  const used = textsOf(controlValues).flatMap(payloadVariables);
  return [...new Set(used)].filter((name) => lookup(payload, name) === undefined);
}

/** The longest URL a message carries (as its schemas allow). */
export const MAX_URL_LENGTH = 2048;

// Control characters, and backslashes (browsers read `/\host` as `//host`), are never part of a safe URL.
const UNSAFE_CHARS = /[\u0000-\u001f\u007f\\]/;

/** True for an absolute http(s) URL or a same-origin relative path (`/path`, not `//host`). */
export function isSafeUrl(url: string): boolean {
  if (url.length === 0 || url.length > MAX_URL_LENGTH || UNSAFE_CHARS.test(url)) return false;
  if (url.startsWith('/')) return !url.startsWith('//');
  if (!/^https?:\/\//i.test(url)) return false;
  try {
    const parsed = new URL(url);
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * For a URL template saved in a workflow: a template that starts with a placeholder is checked
 * only once rendered; any other must be a safe URL with its placeholders filled in.
 */
export function isSafeUrlTemplate(template: string): boolean {
  if (/^\{\{/.test(template.trim())) return true;
  return isSafeUrl(template.replace(PLACEHOLDER, 'x'));
}

/** Renders a URL template; undefined when the result is empty or not a safe URL (it is dropped). */
export function renderUrl(template: string | undefined, ctx: RenderContext): string | undefined {
  if (typeof template !== 'string') return undefined;
  const url = renderText(template, ctx).trim();
  return isSafeUrl(url) ? url : undefined;
}
