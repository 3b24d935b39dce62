import fp from 'fastify-plugin';
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { HttpError } from '../errors.ts';

/**
 * JSON bodies through Fastify's own parser (which refuses __proto__ and constructor.prototype
 * keys), but a refused body is told why: where the JSON is broken, or which key is not allowed.
 */
const jsonBody: FastifyPluginAsync = async (app) => {
  const parseJsonBody = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parseJsonBody(request, body as string, (err: Error | null, value?: unknown) => {
      if ((err as FastifyError | null)?.code !== 'FST_ERR_CTP_INVALID_JSON_BODY') return done(err, value);
      try {
        // (A byte-order mark is allowed, as Fastify's parser allows it.)
        JSON.parse((body as string).replace(/^\uFEFF/, ''));
      } catch (syntax) {
        return done(new HttpError(400, `Body is not valid JSON: ${(syntax as Error).message}`), undefined);
      }
      done(new HttpError(400, 'Body holds a key that is not allowed: __proto__, or constructor with prototype'), undefined);
    });
  });
};

export default fp(jsonBody, { name: 'json-body' });
