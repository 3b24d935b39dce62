import { encode, encodeInPool, POOL_THRESHOLD, THRESHOLD } from '../encoding.ts';
import { entityTag, entityTagInPool } from '../etag.ts';

// The feed's answer, finished: its bytes as sent, their encoding, and its entity tag. The tag is a
// hash of the JSON text, so equal answers have equal tags whatever produced them (and a browser's
// `If-None-Match` gets a 304 without any version kept or read), with the encoding appended (a
// strong tag names one sequence of bytes). Nothing is kept between requests: under the load model
// (DESIGN.md) nearly every feed request follows a change of the inbox, so a kept answer was
// almost never asked for again (bench:capacity: 7 hits in 13,981 pages).

export interface Answer {
  body: Buffer;
  encoding?: 'br' | 'gzip';
  etag: string;
}

/**
 * The answer for JSON text given in parts, in `encoding` (none below THRESHOLD, as the compression
 * plugin does). A large one (POOL_THRESHOLD bytes and more: a page of large messages) is hashed and
 * compressed on the thread pool, so it does not hold the event loop while that runs.
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
  const text = Buffer.from(parts.join(''));
  if (!encoding) return { body: text, etag: await entityTagInPool(text) };
  const [tag, body] = await Promise.all([entityTagInPool(text), encodeInPool(text, encoding, length)]);
  return { body, encoding, etag: tagged(tag, `-${encoding}`) };
}
