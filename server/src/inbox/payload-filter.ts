import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { payloadOf } from '../db/payloads.ts';
import { findBadInput } from '../bad-input.ts';
import type { Dialect } from '../db/index.ts';
import { badRequest } from '../errors.ts';

// The feed's `payload` filter (endpoint 10): base64 of a JSON object, matched against each
// message's payload by partial deep equality, the same way on both databases.

/** Decodes the feed's `payload` filter: base64 (standard or URL-safe) of a JSON object; 400 otherwise. */
export function decodePayloadFilter(value: string): Record<string, unknown> {
  const compact = value.trim();
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
    throw badRequest('payload must be base64-encoded JSON');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(compact, 'base64').toString('utf8'));
  } catch {
    throw badRequest('payload must be base64-encoded JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw badRequest('payload must be base64-encoded JSON of an object');
  }
  // The same filter on both databases: what one of them cannot express is refused on both.
  const bad = findBadInput(parsed);
  if (bad) {
    const where = bad.path.length > 0 ? `payload ${bad.path.join('.')}` : 'payload';
    throw badRequest(`${where} ${bad.problem}`);
  }
  let leaves = 0;
  const count = (object: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(object)) {
      if (key.includes('"') || key.includes('\\')) throw badRequest('payload filter keys must not contain double quotes or backslashes');
      if (isPlainObject(value) && Object.keys(value).length > 0) {
        count(value);
        continue;
      }
      leaves++;
      if (leaves > MAX_FILTER_LEAVES) throw badRequest(`payload filter must have at most ${MAX_FILTER_LEAVES} values`);
    }
  };
  count(parsed as Record<string, unknown>);
  return parsed as Record<string, unknown>;
}

/** The most values a feed payload filter may compare (each is one test in the query). */
export const MAX_FILTER_LEAVES = 100;

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * `message.payload` (or `column`) contains `filter` (partial deep equality: every leaf of the filter equals the
 * value at its path; arrays compare whole). SQLite: one json_extract / json_type test per leaf.
 * PostgreSQL: jsonb containment (there an array matches when it contains the filter's elements).
 */
export function payloadMatches(dialect: Dialect, filter: Record<string, unknown>, column: 'payload' | 'data' = 'payload'): RawBuilder<SqlBool> {
  // The message's payload: the trigger's, stored once (db/payloads.ts), or its own (rows written
  // before); `data` is the message's own column (the family's filters).
  const document = column === 'payload' ? payloadOf('messages') : sql.ref('data');
  if (dialect === 'postgres') return sql<SqlBool>`${document}::jsonb @> ${JSON.stringify(filter)}::jsonb`;
  const tests: ReturnType<typeof sql<SqlBool>>[] = [];
  const walk = (object: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(object)) {
      const path = `${prefix}."${key}"`;
      const extract = sql`json_extract(${document}, ${path})`;
      const type = sql`json_type(${document}, ${path})`;
      if (isPlainObject(value)) {
        if (Object.keys(value).length === 0) tests.push(sql<SqlBool>`${type} = 'object'`);
        else walk(value, path);
      } else if (Array.isArray(value)) {
        tests.push(sql<SqlBool>`(${type} = 'array' and ${extract} = json(${JSON.stringify(value)}))`);
      } else if (value === null) {
        tests.push(sql<SqlBool>`${type} = 'null'`);
      } else if (typeof value === 'boolean') {
        tests.push(sql<SqlBool>`${type} = ${value ? 'true' : 'false'}`);
      } else {
        // A string only equals a JSON string, a number only a JSON number (SQLite never equates text and numbers here).
        tests.push(sql<SqlBool>`${extract} = ${value as string | number}`);
      }
    }
  };
  walk(filter, '$');
  if (tests.length === 0) return sql<SqlBool>`1 = 1`;
  return sql<SqlBool>`(${sql.join(tests, sql` and `)})`;
}
