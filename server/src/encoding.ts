import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, createBrotliCompress, createGzip, gzip, gzipSync, type BrotliOptions } from 'node:zlib';
import type { Transform } from 'node:stream';

// Answers of THRESHOLD bytes and more are compressed when the request accepts it: brotli, else gzip
// (plugins/compression.ts; the feed's answers, inbox/answer.ts, alike).
// Our answers are JSON held whole in memory (a feed page of 100 full messages is about 270 KB), so
// they are compressed in one synchronous call: a streaming compressor (what @fastify/compress
// does) allocates an encoder and a 4 MB window per answer and hops through the thread pool; for a
// feed page of 20 (12 KB of JSON) that was 175 µs of CPU against 50 µs here (bench/server.ts).

export const THRESHOLD = 1024;
/**
 * Answers of this many bytes and more are compressed on libuv's thread pool instead (encodeInPool):
 * a feed page of large messages (ten with 1 MB payloads: 10 MB) would hold the event loop, and so
 * every other request, for a second or more.
 */
export const POOL_THRESHOLD = 256 * 1024;
/**
 * Brotli's quality 3, its window sized to the answer: for a feed page of 20 as the elements ask
 * for it (11.6 KB), 990 B in 37 µs, against 971 B in 53 µs at quality 4 and 1,184 B in 38 µs
 * for gzip's default.
 */
const BROTLI_QUALITY = 3;
/** Brotli's window, as a power of two: the answer's size, within 64 KB (2^16) and 4 MB (2^22). */
const MIN_WINDOW_BITS = 16;
const MAX_WINDOW_BITS = 22;

function brotliOptions(size: number): BrotliOptions {
  const windowBits = Math.min(MAX_WINDOW_BITS, Math.max(MIN_WINDOW_BITS, Math.ceil(Math.log2(size))));
  return {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: size,
      [constants.BROTLI_PARAM_LGWIN]: windowBits,
    },
  };
}
/** The content types worth compressing. */
export const COMPRESSIBLE = /json|text|javascript|xml|svg/;

/** The encoding to answer in: br or gzip when the Accept-Encoding header allows it (q > 0), else none. */
export function chooseEncoding(header: string | undefined): 'br' | 'gzip' | undefined {
  if (!header) return undefined;
  const weights = new Map<string, number>();
  for (const part of header.toLowerCase().split(',')) {
    const [name, ...params] = part.split(';').map((piece) => piece.trim());
    const weight = params.find((param) => param.startsWith('q='));
    // (A weight that is not a number counts as 0: not acceptable.)
    const value = weight === undefined ? 1 : Number(weight.slice('q='.length));
    weights.set(name!, Number.isNaN(value) ? 0 : value);
  }
  const allowed = (name: string) => (weights.get(name) ?? weights.get('*') ?? 0) > 0;
  return allowed('br') ? 'br' : allowed('gzip') ? 'gzip' : undefined;
}

const brotliInPool = promisify(brotliCompress);
const gzipInPool = promisify(gzip);

/** As `encode`, on the thread pool: for answers of POOL_THRESHOLD bytes and more. */
export function encodeInPool(text: string | Buffer, encoding: 'br' | 'gzip', size = Buffer.byteLength(text)): Promise<Buffer> {
  return encoding === 'br' ? brotliInPool(text, brotliOptions(size)) : gzipInPool(text);
}

/** A compressor in `encoding` for a text of `size` bytes written to it in pieces (on the thread pool). */
export function encoder(encoding: 'br' | 'gzip', size: number): Transform {
  return encoding === 'br' ? createBrotliCompress(brotliOptions(size)) : createGzip();
}

/** `text` (of `size` bytes, when the caller knows it) compressed in `encoding` (brotli as above, or gzip). */
export function encode(text: string | Buffer, encoding: 'br' | 'gzip', size = Buffer.byteLength(text)): Buffer {
  return encoding === 'br' ? brotliCompressSync(text, brotliOptions(size)) : gzipSync(text);
}
