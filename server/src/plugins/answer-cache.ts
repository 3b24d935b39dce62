import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { AnswerCache, type Answer } from '../inbox/answer-cache.ts';
import { notModified } from '../etag.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The feed's finished answers (inbox/answer-cache.ts); null when turned off. */
    feedCache: AnswerCache | null;
  }
  interface FastifyReply {
    /**
     * Sends a finished answer: 304 with no body when the request's `If-None-Match` names it. A
     * browser keeps it and revalidates every time (`private, no-cache`); it differs by encoding and
     * by key.
     */
    sendAnswer(answer: Answer): FastifyReply;
  }
}

/** The feed answer cache's default size. */
export const FEED_CACHE_BYTES = 32 * 1024 * 1024;

export interface AnswerCachePluginOptions {
  /** Bytes of answers kept (default FEED_CACHE_BYTES); 0 keeps none. */
  bytes?: number;
}

/**
 * Buffers that uncompressed answers are put together in, used again once an answer is written.
 * A fresh buffer per answer (53 KB for a full page of 20) is memory outside the JavaScript heap,
 * which the garbage collector is then pressed to reclaim: bench:server's full, uncompressed page
 * ran at 23.6 to 28.7% of bare Node so, 36.1 to 38.1% with these. A buffer comes back only when
 * its answer's `finish` says every byte was handed to the socket; an answer cut off before that
 * leaves its buffer to the collector, so no buffer is written while a write of it may be pending.
 */
const spare: Buffer[] = [];
let spareBytes = 0;
/** At most this many bytes of buffers wait here; a buffer is at least SPARE_MIN bytes, so one serves most pages. */
export const SPARE_BYTES = 4 * 1024 * 1024;
const SPARE_MIN = 64 * 1024;

/** A buffer of at least `length` bytes for the answer of `reply`: a spare one, or a new one; it comes back once the answer is written. */
function bufferFor(reply: FastifyReply, length: number): Buffer {
  const index = spare.findIndex((candidate) => candidate.length >= length);
  let buffer: Buffer;
  if (index < 0) {
    buffer = Buffer.allocUnsafeSlow(Math.max(length, SPARE_MIN));
  } else {
    buffer = spare.splice(index, 1)[0]!;
    spareBytes -= buffer.length;
  }
  reply.raw.once('finish', () => {
    if (spareBytes + buffer.length > SPARE_BYTES) return;
    spare.push(buffer);
    spareBytes += buffer.length;
  });
  return buffer;
}

/** The answer's bytes: its body, or its own bytes with the embedded objects' put back in place (in a spare buffer). */
function bytesOf(answer: Answer, reply: FastifyReply): Buffer {
  if (answer.body) return answer.body;
  const out = bufferFor(reply, answer.length);
  /** Where the next part goes in `out`, and where the next own bytes start in `answer.own`. */
  let written = 0;
  let ownRead = 0;
  for (const part of answer.layout!) {
    if (typeof part === 'number') {
      written += answer.own!.copy(out, written, ownRead, ownRead + part);
      ownRead += part;
    } else {
      written += part.bytes.copy(out, written);
    }
  }
  return out.subarray(0, written);
}

const answerCache: FastifyPluginAsync<AnswerCachePluginOptions> = async (app, options) => {
  const bytes = options.bytes ?? FEED_CACHE_BYTES;
  app.decorate('feedCache', bytes > 0 ? new AnswerCache(bytes) : null);
  app.decorateReply('sendAnswer', function (this: FastifyReply, answer: Answer) {
    this.header('etag', answer.etag).header('cache-control', 'private, no-cache').header('vary', 'accept-encoding, authorization');
    if (notModified(this.request.headers['if-none-match'], answer.etag)) return this.code(304).send();
    if (answer.encoding) this.header('content-encoding', answer.encoding);
    return this.type('application/json; charset=utf-8').send(bytesOf(answer, this));
  });
};

export default fp(answerCache, { name: 'answer-cache' });
