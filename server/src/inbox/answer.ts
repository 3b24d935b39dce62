import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { encode, encoder, POOL_THRESHOLD, THRESHOLD } from '../encoding.ts';
import { entityTag, TAG_LENGTH } from '../etag.ts';

// The feed's answer, finished: its bytes as sent, their encoding, and its entity tag. The tag is a
// hash of the JSON text, so equal answers have equal tags whatever produced them (and a browser's
// `If-None-Match` gets a 304 without any version kept or read), with the encoding appended (a
// strong tag names one sequence of bytes). Nothing is kept between requests: under the load model
// (DESIGN.md) nearly every feed request follows a change of the inbox, so a kept answer was
// almost never asked for again (bench:capacity: 7 hits in 13,981 pages).

export interface Answer {
  /** The bytes; a large answer's as a stream of its pieces (compressed as they are written). */
  body: Buffer | Readable;
  encoding?: 'br' | 'gzip';
  etag: string;
}

/**
 * Characters of a large answer's text turned into bytes and hashed in one turn of the event loop:
 * a page of ten 1 MB messages is ten such steps, with other requests answered between them, not
 * one stretch of the whole 10 MB (encoding it, copying it for the thread pool's hash, copying it
 * again whole for the compressor and the compressed bytes whole for the socket: 0.1 to 0.3 s on
 * a busy machine). The pieces are then written as they are, through a compressor on the thread
 * pool when the client takes one, as the connection takes them.
 */
const STEP_CHARACTERS = 1024 * 1024;
const HIGH_SURROGATE_FIRST = 0xd800;
const HIGH_SURROGATE_LAST = 0xdbff;

const turnOfTheLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The answer for JSON text given in parts, in `encoding` (none below THRESHOLD, as the compression
 * plugin does). A large one (POOL_THRESHOLD bytes and more: a page of large messages) is encoded
 * and hashed in steps of STEP_CHARACTERS, and sent as a stream of those pieces, compressed on the
 * thread pool, so it never holds the event loop long.
 */
export async function buildAnswer(parts: string[], encoding: 'br' | 'gzip' | undefined): Promise<Answer> {
  let length = 0;
  for (const part of parts) length += Buffer.byteLength(part);
  if (length < THRESHOLD) return { body: Buffer.from(parts.join('')), etag: entityTag(parts) };
  const tagged = (tag: string, suffix: string) => `${tag.slice(0, -1)}${suffix}"`;
  if (length < POOL_THRESHOLD) {
    const tag = entityTag(parts);
    const text = parts.join('');
    if (!encoding) return { body: Buffer.from(text), etag: tag };
    return { body: encode(text, encoding, length), encoding, etag: tagged(tag, `-${encoding}`) };
  }
  const hash = createHash('sha256');
  const chunks: Buffer[] = [];
  for (const part of parts) {
    for (let start = 0; start < part.length; ) {
      let end = Math.min(part.length, start + STEP_CHARACTERS);
      // (Never between the two halves of a surrogate pair.)
      const last = part.charCodeAt(end - 1);
      if (end < part.length && last >= HIGH_SURROGATE_FIRST && last <= HIGH_SURROGATE_LAST) end--;
      const chunk = Buffer.from(part.slice(start, end));
      hash.update(chunk);
      chunks.push(chunk);
      start = end;
      if (chunk.length >= STEP_CHARACTERS) await turnOfTheLoop();
    }
  }
  const tag = `"${hash.digest('base64url').slice(0, TAG_LENGTH)}"`;
  const pieces = Readable.from(chunks, { objectMode: false });
  if (!encoding) return { body: pieces, etag: tag };
  return { body: pieces.pipe(encoder(encoding, length)), encoding, etag: tagged(tag, `-${encoding}`) };
}
