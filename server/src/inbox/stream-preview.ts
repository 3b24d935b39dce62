import { bool, optional } from '../json.ts';

// What a stream event tells of a message: a preview, bounded in bytes whatever the message's size
// (its payload may be a megabyte, its rendered texts 64 KB each). It has the fields the elements
// show (the feed's projection), never the embedded subscriber or template; a client that needs the
// whole message reads it (the elements read their first page on every message event anyway).
// The read itself is bounded: each text column is read cut at a few more characters than an event
// may take, with its length, so a column read whole is known to be whole.

/** The most bytes one stream event takes, when nothing else is set (NOTIF_STREAM_EVENT_BYTES). */
export const DEFAULT_STREAM_EVENT_BYTES = 16 * 1024;

/** A message's row as the stream reads it: the preview's columns, each text cut, and its length. */
export interface PreviewRow {
  id: string;
  seq: number | string;
  subscriber_id: string;
  template_identifier: string | null;
  transaction_id: string | null;
  feed_identifier: string | null;
  created_at: string;
  read: number | boolean;
  seen: number | boolean;
  subject: string | null;
  subject_length: number | string | null;
  /** JSON array of content blocks (cut: not JSON). */
  content: string | null;
  content_length: number | string | null;
  avatar: string | null;
  avatar_length: number | string | null;
  /** JSON of cta (cut: not JSON). */
  cta: string | null;
  cta_length: number | string | null;
  /** JSON of the trigger's payload (cut: not JSON). */
  payload: string | null;
  payload_length: number | string | null;
}

/** The text columns of a preview, read cut (see previewColumns). */
export const PREVIEW_TEXT_COLUMNS = ['subject', 'content', 'avatar', 'cta', 'payload'] as const;

/** Fields left out, in this order, while a preview is larger than its event may be (the subject is cut last). */
const DROPPED_FIRST = ['payload', 'cta', 'content', 'avatar'] as const;

/** The size of a preview as a stream writes it (JSON, U+2028 and U+2029 escaped: see sseJson). */
export type Measure = (message: Record<string, unknown>) => number;

/** Whether a column cut at `readChars` characters was read whole. */
function whole(text: string | null, length: number | string | null, readChars: number): text is string {
  return text !== null && Number(length) <= readChars;
}

/** `text` shortened by at least `excessBytes` bytes of its UTF-8 (never a lone surrogate at its end). */
function shorten(text: string, excessBytes: number): string {
  let cut = text.slice(0, Math.max(0, text.length - excessBytes));
  const last = cut.charCodeAt(cut.length - 1);
  const HIGH_SURROGATE_FIRST = 0xd800;
  const HIGH_SURROGATE_LAST = 0xdbff;
  if (last >= HIGH_SURROGATE_FIRST && last <= HIGH_SURROGATE_LAST) cut = cut.slice(0, -1);
  return cut;
}

/**
 * The preview of `row` within `budgetBytes` (as `measure` counts them), and whether anything of the
 * message was left out or cut (the client then reads the message for the rest). `readChars` is how
 * many characters of each text column were read.
 */
export function messagePreview(row: PreviewRow, readChars: number, budgetBytes: number, measure: Measure): { message: Record<string, unknown>; cut: boolean } {
  let cut = false;
  const json = (text: string | null, length: number | string | null): unknown => {
    if (text === null) return undefined;
    if (whole(text, length, readChars)) return JSON.parse(text);
    cut = true;
    return undefined;
  };
  let subject = optional(row.subject);
  if (subject !== undefined && !whole(row.subject, row.subject_length, readChars)) cut = true;
  const avatar = whole(row.avatar, row.avatar_length, readChars) ? row.avatar : undefined;
  if (row.avatar !== null && avatar === undefined) cut = true;
  const message: Record<string, unknown> = {
    _id: row.id,
    templateIdentifier: optional(row.template_identifier),
    transactionId: optional(row.transaction_id),
    createdAt: row.created_at,
    subject,
    content: json(row.content, row.content_length),
    avatar,
    cta: json(row.cta, row.cta_length),
    read: bool(row.read),
    seen: bool(row.seen),
    payload: json(row.payload, row.payload_length),
    // With its feed's identifier, so a client can tell whether a feed filtered by it shows the message.
    feedIdentifier: optional(row.feed_identifier),
  };
  let size = measure(message);
  for (const field of DROPPED_FIRST) {
    if (size <= budgetBytes) break;
    if (message[field] === undefined) continue;
    message[field] = undefined;
    cut = true;
    size = measure(message);
  }
  while (size > budgetBytes && subject) {
    subject = shorten(subject, size - budgetBytes);
    message.subject = subject;
    cut = true;
    size = measure(message);
  }
  return { message, cut };
}
