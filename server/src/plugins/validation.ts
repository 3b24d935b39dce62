import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

/**
 * The schemas' validators. Query strings and paths are text, so their validator coerces ("20" ->
 * 20, one value -> [value]); a JSON body has real types, so its validator does not ({"firstName": 5}
 * is a 422, not "5"). A body schema marked `strict: true` refuses keys it does not name (422 naming
 * the key) instead of dropping them: a change whose setting is misspelt must not answer 200 having
 * changed nothing.
 */
const validation: FastifyPluginAsync = async (app) => {
  const options = { allErrors: true, removeAdditional: true, useDefaults: true, strict: false } as const;
  const bodyAjv = addFormats.default(new Ajv.default({ ...options, coerceTypes: false }));
  const textAjv = addFormats.default(new Ajv.default({ ...options, coerceTypes: 'array' }));
  const strictAjv = addFormats.default(new Ajv.default({ ...options, removeAdditional: false, coerceTypes: false }));
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart !== 'body') return textAjv.compile(schema);
    const strict = (schema as { strict?: boolean }).strict;
    return (strict ? strictAjv : bodyAjv).compile(schema);
  });
};

export default fp(validation, { name: 'validation' });
