import type { App } from './app.ts';
import { HttpError } from './errors.ts';

/**
 * Refuses strings holding a NUL character (U+0000) anywhere in a request's path parameters, query
 * or JSON body, with the validation error of decisions.md (422). PostgreSQL text cannot store NUL,
 * so without this the same input would be stored on SQLite and fail with a 500 on PostgreSQL; this
 * way both databases answer alike, before anything is written.
 */
export function rejectNulCharacters(app: App) {
  app.addHook('preValidation', async (request) => {
    for (const [source, value] of [
      ['params', request.params],
      ['querystring', request.query],
      ['body', request.body],
    ] as const) {
      const found = findNul(value, []);
      if (found) {
        const field = found.path.join('.') || source;
        throw new HttpError(422, `${field} must not contain NUL characters`, {
          [field]: { messages: ['must not contain NUL characters'], value: found.value },
        });
      }
    }
  });
}

function findNul(value: unknown, path: string[], depth = 0): { path: string[]; value: unknown } | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? { path, value } : undefined;
  if (value === null || typeof value !== 'object' || depth > 64) return undefined;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return { path: [...path, key], value: key };
    const found = findNul(item, [...path, key], depth + 1);
    if (found) return found;
  }
  return undefined;
}
