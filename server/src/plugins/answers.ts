import { Readable } from 'node:stream';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Answer } from '../inbox/answer.ts';
import { notModified } from '../etag.ts';

declare module 'fastify' {
  interface FastifyReply {
    /**
     * Sends a finished answer (inbox/answer.ts): 304 with no body when the request's
     * `If-None-Match` names it. A browser keeps it and revalidates every time (`private, no-cache`);
     * it differs by encoding and by key.
     */
    sendAnswer(answer: Answer): FastifyReply;
  }
}

const answers: FastifyPluginAsync = async (app) => {
  app.decorateReply('sendAnswer', function (this: FastifyReply, answer: Answer) {
    this.header('etag', answer.etag).header('cache-control', 'private, no-cache').header('vary', 'accept-encoding, authorization');
    if (notModified(this.request.headers['if-none-match'], answer.etag)) {
      // (A large answer's stream and its compressor are never read: released now.)
      if (answer.body instanceof Readable) answer.body.destroy();
      return this.code(304).send();
    }
    if (answer.encoding) this.header('content-encoding', answer.encoding);
    return this.type('application/json; charset=utf-8').send(answer.body);
  });
};

export default fp(answers, { name: 'answers' });
