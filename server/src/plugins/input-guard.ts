import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import { findBadInput } from '../bad-input.ts';
import { HttpError } from '../errors.ts';

/**
 * Refuses, with the validation error of decisions.md (422), before anything reads or stores it,
 * input that neither database can store alike or that would cost too much to walk (bad-input.ts:
 * JSON nested too deep or holding too many keys, NUL characters, lone surrogates). Path parameters,
 * the query and the JSON body are checked, so both databases answer alike. Register it before
 * idempotency: its fingerprint walks the body, so the body must be known sound first.
 */
const inputGuard: FastifyPluginAsync = async (app) => {
  app.addHook('preValidation', async (request) => {
    const sources = [
      ['params', request.params],
      ['querystring', request.query],
      ['body', request.body],
    ] as const;
    for (const [source, value] of sources) {
      const found = findBadInput(value);
      if (!found) continue;
      const field = found.path.join('.') || source;
      throw new HttpError(422, `${field} ${found.problem}`, {
        [field]: { messages: [found.problem], value: found.value },
      });
    }
  });
};

export default fp(inputGuard, { name: 'input-guard' });
