import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { encode, THRESHOLD } from './compress.ts';

// The feed's answers, kept as sent (compressed) and served again while the subscriber's inbox has
// not changed. An entry's key holds the inbox's version, read from the database on every request
// (migration 0008: triggers change it with every write a feed answer could show, in the writing
// transaction, on SQLite and PostgreSQL), so an answer is never served after a change, whichever
// process made it: the next request reads the new version and finds no entry. Old versions'
// entries are never asked for again and leave as the least recently used.

/** A finished answer: its bytes as sent, their encoding, and its entity tag. */
export interface Answer {
  body: Buffer;
  encoding?: 'br' | 'gzip';
  etag: string;
}

/** Bytes an entry costs beyond its body and key (the objects, the Map's slot). */
const OVERHEAD = 200;

/** A least-recently-used map of answers bounded by their total size in bytes. */
export class AnswerCache {
  #entries = new Map<string, Answer>();
  #bytes = 0;
  hits = 0;
  misses = 0;

  constructor(readonly maxBytes: number) {}

  get(key: string): Answer | undefined {
    const answer = this.#entries.get(key);
    if (!answer) return void this.misses++;
    this.hits++;
    // Most recently used last: the Map keeps insertion order.
    this.#entries.delete(key);
    this.#entries.set(key, answer);
    return answer;
  }

  set(key: string, answer: Answer): void {
    const size = sizeOf(key, answer);
    // One answer may take at most a tenth of the cache (a page of 100 full messages is ~270 KB raw).
    if (size > this.maxBytes / 10) return;
    const old = this.#entries.get(key);
    if (old) (this.#entries.delete(key), (this.#bytes -= sizeOf(key, old)));
    this.#entries.set(key, answer);
    this.#bytes += size;
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= sizeOf(oldest, entry);
    }
  }

  get stats() {
    return { entries: this.#entries.size, bytes: this.#bytes, maxBytes: this.maxBytes, hits: this.hits, misses: this.misses };
  }
}

const sizeOf = (key: string, answer: Answer) => answer.body.length + key.length * 2 + OVERHEAD;

/**
 * The answer for JSON `text` in `encoding` (none below THRESHOLD, as compress.ts does). Its entity
 * tag is a hash of the text, so equal answers have equal tags whatever produced them, with the
 * encoding appended (a strong tag names one sequence of bytes).
 */
export function makeAnswer(text: string, encoding: 'br' | 'gzip' | undefined): Answer {
  const hash = createHash('sha256').update(text).digest('base64url').slice(0, 27);
  const raw = Buffer.from(text);
  if (!encoding || raw.length < THRESHOLD) return { body: raw, etag: `"${hash}"` };
  return { body: encode(raw, encoding), encoding, etag: `"${hash}-${encoding}"` };
}

/**
 * True when `If-None-Match` names the answer: by the weak comparison RFC 9110 asks for, and
 * ignoring the encoding's suffix (the same text in another encoding is as current).
 */
export function notModified(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '').replace(/-(br|gzip)"$/, '"');
  const own = bare(etag);
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === own);
}

/**
 * Sends `answer`: 304 with no body when the request's `If-None-Match` names it. A browser keeps it
 * and revalidates every time (`private, no-cache`); it differs by encoding and by key.
 */
export function sendAnswer(request: FastifyRequest, reply: FastifyReply, answer: Answer) {
  reply.header('etag', answer.etag).header('cache-control', 'private, no-cache').header('vary', 'accept-encoding, authorization');
  if (notModified(request.headers['if-none-match'], answer.etag)) return reply.code(304).send();
  if (answer.encoding) reply.header('content-encoding', answer.encoding);
  return reply.type('application/json; charset=utf-8').send(answer.body);
}
