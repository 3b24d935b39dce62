import { encode, encodeInPool, POOL_THRESHOLD, THRESHOLD } from '../encoding.ts';
import { entityTag, entityTagInPool } from '../etag.ts';

// The feed's answers, kept as sent (compressed) and served again while the subscriber's inbox has
// not changed. An entry's key holds the inbox's version, read from the database on every request
// (migration 0008: triggers change it with every write a feed answer could show, in the writing
// transaction, on SQLite and PostgreSQL), so an answer is never served after a change, whichever
// process made it: the next request reads the new version and finds no entry. Old versions'
// entries are never asked for again and leave as the least recently used.
//
// One process serves many environments, and the cache is shared between them so that none takes
// it all (a busy one walking pages, or many subscribers polling, would otherwise evict every other
// environment's answers, which then fall to the uncached speed). An environment's share is the
// cache's bound divided by the number of environments holding answers. When an answer makes the
// cache too large, room is made from the environment that set it if that one holds more than its
// share (its own least recently used answers go first), else from the environment holding the most
// (which then holds more than its share). So:
// - an environment holding no more than its share never loses an answer to another environment;
// - a lone environment may use the whole cache, and gives room back as others come;
// - when the cache is full, every environment that keeps answers ends up with an even share, or
//   all it asks for, if less.
// What an environment holds counts its answers and the embedded objects they hold (kept per
// environment: each counted to the one that holds it, released with its last answer there). The
// price of the rule: a hit looks up its environment before its answer (one Map lookup more); a set
// that must evict finds where at once when it is its environment, else in one pass over the
// environments holding answers (not their answers). And an environment's answers stay while it
// holds no more than its share, even ones nobody asks for any more (old versions'), until it sets
// more or more environments make the share smaller.

/**
 * A finished answer: its bytes as sent, their encoding, and its entity tag. An uncompressed answer
 * of THRESHOLD bytes and more is kept as its own bytes and the embedded objects' JSON it holds
 * (`layout`: a number is that many of its own bytes, a Shared the bytes of an embedded object),
 * so that the one subscriber of a page and the templates every subscriber's page embeds are held
 * once in the cache, not in every message of every answer: a full page of 20 is more than half
 * template and subscriber.
 */
export interface Answer {
  body?: Buffer;
  own?: Buffer;
  layout?: (number | Shared)[];
  length: number;
  encoding?: 'br' | 'gzip';
  etag: string;
}

/** An embedded object's JSON, held once by the cache for every answer of its environment that embeds it. */
interface Shared {
  text: string;
  bytes: Buffer;
  answers: number;
}

/** What one environment holds: its answers, least recently used first, their embedded objects, and the bytes of both. */
interface Holding {
  environment: string;
  entries: Map<string, Answer>;
  shared: Map<string, Shared>;
  bytes: number;
}

/** Bytes an entry costs beyond its body and key (the objects, the Map's slot). */
const OVERHEAD = 200;
/** Bytes a layout's part costs (a number, or a reference to an embedded object). */
const LAYOUT_PART_BYTES = 8;
/** Bytes a key's character costs: a string may hold two-byte characters. */
const BYTES_PER_CHARACTER = 2;
/** The largest share of the cache one answer may take. */
const MAX_ANSWER_SHARE = 1 / 10;

/** A least-recently-used map of answers bounded by their total size in bytes, shared between environments (see above). */
export class AnswerCache {
  #holdings = new Map<string, Holding>();
  #bytes = 0;
  hits = 0;
  misses = 0;

  constructor(readonly maxBytes: number) {}

  get(environment: string, key: string): Answer | undefined {
    const entries = this.#holdings.get(environment)?.entries;
    const answer = entries?.get(key);
    if (!answer) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Most recently used last: the Map keeps insertion order.
    entries!.delete(key);
    entries!.set(key, answer);
    return answer;
  }

  set(environment: string, key: string, answer: Answer): void {
    let holding = this.#holdings.get(environment);
    // One answer may take at most a tenth of the cache (a page of 100 full messages is ~270 KB raw),
    // the embedded objects it would add counted (each once): else one could evict every other.
    const added = new Map<string, Shared>();
    for (const part of answer.layout ?? []) {
      if (typeof part !== 'number' && !holding?.shared.has(part.text)) added.set(part.text, part);
    }
    let size = sizeOf(key, answer);
    for (const part of added.values()) size += sharedSize(part);
    if (size > this.maxBytes * MAX_ANSWER_SHARE) return;
    if (holding) this.#drop(holding, key);
    // (Dropping its last answer may have let the environment go.)
    holding = this.#holdings.get(environment);
    if (!holding) {
      holding = { environment, entries: new Map(), shared: new Map(), bytes: 0 };
      this.#holdings.set(environment, holding);
    }
    const own = holding;
    // The embedded objects it holds: the ones its environment already keeps take the place of its own copies.
    const layout = answer.layout?.map((part) => {
      if (typeof part === 'number') return part;
      let kept = own.shared.get(part.text);
      if (!kept) {
        kept = { ...part, answers: 0 };
        own.shared.set(part.text, kept);
        this.#count(own, sharedSize(kept));
      }
      kept.answers++;
      return kept;
    });
    own.entries.set(key, layout ? { ...answer, layout } : answer);
    this.#count(own, sizeOf(key, answer));
    // Room: from its own environment past its share, else from the one holding the most (see above).
    while (this.#bytes > this.maxBytes) {
      let from = own;
      if (own.bytes <= this.maxBytes / this.#holdings.size) {
        for (const other of this.#holdings.values()) {
          if (other.bytes > from.bytes) from = other;
        }
      }
      this.#drop(from, from.entries.keys().next().value!);
    }
  }

  #count(holding: Holding, bytes: number) {
    holding.bytes += bytes;
    this.#bytes += bytes;
  }

  /** Removes an entry, the embedded objects no other entry of its environment holds, and the environment once it holds nothing. */
  #drop(holding: Holding, key: string) {
    const answer = holding.entries.get(key);
    if (!answer) return;
    holding.entries.delete(key);
    this.#count(holding, -sizeOf(key, answer));
    for (const part of answer.layout ?? []) {
      if (typeof part === 'number') continue;
      part.answers--;
      if (part.answers > 0) continue;
      holding.shared.delete(part.text);
      this.#count(holding, -sharedSize(part));
    }
    if (holding.entries.size === 0) this.#holdings.delete(holding.environment);
  }

  get stats() {
    let entries = 0;
    let shared = 0;
    for (const holding of this.#holdings.values()) {
      entries += holding.entries.size;
      shared += holding.shared.size;
    }
    return { entries, shared, environments: this.#holdings.size, bytes: this.#bytes, maxBytes: this.maxBytes, hits: this.hits, misses: this.misses };
  }
}

/** What an entry costs the cache: its bytes, its layout, its key, and the rest. */
function sizeOf(key: string, answer: Answer): number {
  const bytes = (answer.body ?? answer.own!).length;
  const layout = (answer.layout?.length ?? 0) * LAYOUT_PART_BYTES;
  return bytes + layout + key.length * BYTES_PER_CHARACTER + OVERHEAD;
}

/** What an embedded object costs the cache (its text is the map's key). */
function sharedSize(part: Shared): number {
  return part.bytes.length + part.text.length * BYTES_PER_CHARACTER + OVERHEAD;
}

/**
 * The answer for JSON text given in parts (feedParts: own text at even indexes, embedded objects'
 * JSON at odd ones) in `encoding` (none below THRESHOLD, as the compression plugin does). Its entity tag is a
 * hash of the text, so equal answers have equal tags whatever produced them, with the encoding
 * appended (a strong tag names one sequence of bytes).
 */
export function makeAnswer(parts: string[], encoding: 'br' | 'gzip' | undefined): Answer {
  const tag = entityTag(parts).slice(1, -1);
  let length = 0;
  for (const part of parts) length += Buffer.byteLength(part);
  if (length < THRESHOLD) return { body: exact(parts.join('')), length, etag: `"${tag}"` };
  if (encoding) {
    const body = exact(encode(parts.join(''), encoding, length));
    return { body, length: body.length, encoding, etag: `"${tag}-${encoding}"` };
  }
  // Own text at even indexes (kept by its length), embedded objects at odd ones (kept as objects).
  const isEmbedded = (index: number) => index % 2 === 1;
  const layout = parts.map((text, index) => (isEmbedded(index) ? { text, bytes: exact(text), answers: 0 } : Buffer.byteLength(text)));
  const own = parts.filter((_, index) => !isEmbedded(index)).join('');
  return { own: exact(own), layout, length, etag: `"${tag}"` };
}

/**
 * As makeAnswer, a large compressed one (POOL_THRESHOLD bytes and more) compressed on the thread
 * pool, so a page of large messages does not hold the event loop while it is compressed.
 */
export async function buildAnswer(parts: string[], encoding: 'br' | 'gzip' | undefined): Promise<Answer> {
  let length = 0;
  for (const part of parts) length += Buffer.byteLength(part);
  if (!encoding || length < POOL_THRESHOLD) return makeAnswer(parts, encoding);
  // Hashed and compressed on the thread pool (the same tag as entityTag of the parts).
  const text = Buffer.from(parts.join(''));
  const [tag, compressed] = await Promise.all([entityTagInPool(text), encodeInPool(text, encoding, length)]);
  const body = exact(compressed);
  return { body, length: body.length, encoding, etag: `"${tag.slice(1, -1)}-${encoding}"` };
}

/**
 * Bytes with a memory of their own, exactly their size. A kept answer must cost what the cache
 * counts: a small Buffer.from() is a view of an 8 KB pool, and zlib's output one of its 16 KB chunk,
 * either of which a view kept in the cache holds whole (a 1.5 KB page would keep 16 KB).
 */
function exact(data: string | Buffer): Buffer {
  const out = Buffer.allocUnsafeSlow(Buffer.byteLength(data));
  if (typeof data === 'string') out.write(data);
  else data.copy(out);
  return out;
}
