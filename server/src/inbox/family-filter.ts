import type { Dialect } from '../db/index.ts';
import type { Db } from '../db/index.ts';
import { badRequest, unprocessable, type FieldErrors } from '../errors.ts';
import { payloadMatches } from './payload-filter.ts';

// The filters of the subscriber notifications family (/v2/subscribers/{id}/notifications/...), as
// SQL conditions on one subscriber's in-app messages. The list, each count filter and the bulk
// changes share them, so a count counts exactly what the same list filter returns.
//
// Conditions are hand-written text with `?` placeholders (db/read.ts numbers them on PostgreSQL);
// the visible set is written literally (VISIBLE), so PostgreSQL and SQLite use the partial indexes
// of migration 0011 for it.

export const SEVERITIES = ['high', 'medium', 'low', 'none'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Messages neither archived nor snoozed: what the default feed, the unseen count and the stream's count show. */
export const VISIBLE = `"archived" = 0 and "snoozed_until" is null`;

/** A tags filter: any of a list, `{or: [...]}` (the same), or `{and: [{or: [...]}, ...]}` (each group must match). */
export type TagsFilter = string[] | { or: string[] } | { and: { or: string[] }[] };

/** One filter of the family, as the list's query and each count filter give it. */
export interface FamilyFilter {
  read?: boolean;
  seen?: boolean;
  archived?: boolean;
  snoozed?: boolean;
  severity?: Severity[];
  tags?: TagsFilter;
  /** Every key (flattened to two levels) equal in the message's `data`. */
  data?: Record<string, unknown>;
  /** Unix ms; 0 is ignored. */
  createdGte?: number;
  createdLte?: number;
  contextKeys?: string[];
}

/** One condition: its text and its parameters, in order. */
export interface Condition {
  text: string;
  params: unknown[];
}

/** The most values a `data` filter's string may hold, as Novu's validation allows. */
const MAX_DATA_STRING = 256;
/** How deep a `data` filter's objects nest, as Novu's validation allows. */
const MAX_DATA_DEPTH = 2;
/** The most tags a filter names (each is a parameter of the query). */
export const MAX_TAGS = 100;

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * A `data` filter: a JSON object (or its text, as the list's query and the SDK send it) of scalars,
 * at most two levels deep; 400 otherwise, as Novu answers.
 */
export function parseDataFilter(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw badRequest('data must be a JSON object');
    }
  }
  if (!isPlainObject(parsed)) throw badRequest('data must be a JSON object');
  const check = (object: Record<string, unknown>, depth: number, path: string) => {
    for (const [key, item] of Object.entries(object)) {
      const where = path ? `${path}.${key}` : key;
      if (key.includes('"') || key.includes('\\')) throw badRequest('data keys must not contain double quotes or backslashes');
      if (Array.isArray(item)) throw badRequest(`data.${where} must not be an array`);
      if (isPlainObject(item)) {
        if (depth >= MAX_DATA_DEPTH) throw badRequest(`data must be at most ${MAX_DATA_DEPTH} levels deep`);
        check(item, depth + 1, where);
      } else if (typeof item === 'string' && item.length > MAX_DATA_STRING) {
        throw badRequest(`data.${where} must be at most ${MAX_DATA_STRING} characters`);
      }
    }
  };
  check(parsed, 1, '');
  return parsed;
}

/** The OR-groups of a tags filter, each a list of tags one of which must be on the message; 422 when malformed. */
export function tagGroups(tags: unknown, field = 'tags'): string[][] {
  const problem = (message: string) => unprocessable(`${field} ${message}`, { [field]: { messages: [message], value: tags } });
  const list = (value: unknown): string[] => {
    if (!Array.isArray(value) || !value.every((tag) => typeof tag === 'string')) throw problem('must be a list of strings, {or: [...]} or {and: [{or: [...]}]}');
    if (value.length > MAX_TAGS) throw problem(`must name at most ${MAX_TAGS} tags`);
    return value;
  };
  if (Array.isArray(tags)) return [list(tags)];
  if (isPlainObject(tags)) {
    if (Array.isArray(tags.or) && Object.keys(tags).length === 1) return [list(tags.or)];
    if (Array.isArray(tags.and) && Object.keys(tags).length === 1) {
      return tags.and.map((group) => {
        if (!isPlainObject(group) || !Array.isArray(group.or)) throw problem('and must hold {or: [...]} groups');
        return list(group.or);
      });
    }
  }
  throw problem('must be a list of strings, {or: [...]} or {and: [{or: [...]}]}');
}

/** `column` (a JSON array of strings) holds one of `values`. */
function holdsAny(column: 'tags' | 'context_keys', values: string[]): Condition {
  if (values.length === 0) return { text: '1 = 0', params: [] };
  const marks = values.map(() => '?').join(', ');
  return { text: `exists (select 1 from json_each("${column}") where value in (${marks}))`, params: values };
}

/** The same on PostgreSQL, where the column is text holding JSON. */
function holdsAnyPostgres(column: 'tags' | 'context_keys', values: string[]): Condition {
  if (values.length === 0) return { text: '1 = 0', params: [] };
  const marks = values.map(() => '?').join(', ');
  return { text: `exists (select 1 from jsonb_array_elements_text("${column}"::jsonb) as t(v) where t.v in (${marks}))`, params: values };
}

/**
 * The conditions of `filter` (besides the subscriber and the channel). `scope` says what an absent
 * `archived` or `snoozed` means: for the list and count, the visible messages only (the default
 * feed's); for bulk changes, every message (Novu's bulk includes archived and snoozed ones).
 */
export function filterConditions(db: Db, filter: FamilyFilter, scope: 'list' | 'bulk'): Condition[] {
  const conditions: Condition[] = [];
  const holds = db.dialect === 'postgres' ? holdsAnyPostgres : holdsAny;
  if (scope === 'list' && filter.archived === undefined && filter.snoozed === undefined) {
    conditions.push({ text: VISIBLE, params: [] });
  } else {
    if (filter.archived !== undefined) conditions.push({ text: `"archived" = ${filter.archived ? 1 : 0}`, params: [] });
    else if (scope === 'list') conditions.push({ text: `"archived" = 0`, params: [] });
    if (filter.snoozed !== undefined) conditions.push({ text: filter.snoozed ? `"snoozed_until" is not null` : `"snoozed_until" is null`, params: [] });
    else if (scope === 'list') conditions.push({ text: `"snoozed_until" is null`, params: [] });
  }
  if (filter.read !== undefined) conditions.push({ text: `"read" = ${filter.read ? 1 : 0}`, params: [] });
  if (filter.seen !== undefined) conditions.push({ text: `"seen" = ${filter.seen ? 1 : 0}`, params: [] });
  if (filter.severity?.length) {
    const named = filter.severity.filter((severity) => severity !== 'none');
    const parts: string[] = [];
    if (named.length) parts.push(`"severity" in (${named.map(() => '?').join(', ')})`);
    if (filter.severity.includes('none')) parts.push(`"severity" is null`);
    conditions.push({ text: parts.length > 1 ? `(${parts.join(' or ')})` : parts[0]!, params: named });
  }
  if (filter.tags !== undefined) for (const group of tagGroups(filter.tags)) conditions.push(holds('tags', group));
  if (filter.contextKeys?.length) for (const key of filter.contextKeys) conditions.push(holds('context_keys', [key]));
  if (filter.data !== undefined && Object.keys(filter.data).length > 0) {
    const part = payloadMatches(db.dialect as Dialect, filter.data, 'data').compile(db.kysely);
    conditions.push({ text: part.sql.replace(/\$\d+/g, '?'), params: [...part.parameters] });
  }
  if (filter.createdGte) conditions.push({ text: `"created_at" >= ?`, params: [new Date(filter.createdGte).toISOString()] });
  if (filter.createdLte) conditions.push({ text: `"created_at" <= ?`, params: [new Date(filter.createdLte).toISOString()] });
  return conditions;
}

/** A count filter as the `filters` JSON gives it: known keys only, each of its type; 422 naming the problems otherwise. */
export function parseCountFilter(value: unknown, index: number): FamilyFilter {
  const errors: FieldErrors = {};
  const field = (name: string) => `filters.${index}.${name}`;
  const fail = (name: string, message: string, given: unknown) => {
    errors[field(name)] = { messages: [message], value: given ?? null };
  };
  if (!isPlainObject(value)) throw unprocessable(`filters.${index} must be an object`, { [`filters.${index}`]: { messages: ['must be an object'], value: null } });
  const filter: FamilyFilter = {};
  for (const [key, given] of Object.entries(value)) {
    switch (key) {
      case 'read':
      case 'seen':
      case 'archived':
      case 'snoozed':
        if (typeof given !== 'boolean') fail(key, 'must be a boolean', given);
        else filter[key] = given;
        break;
      case 'severity': {
        const list = Array.isArray(given) ? given : [given];
        if (!list.every((item) => (SEVERITIES as readonly unknown[]).includes(item))) fail(key, `must be one or a list of: ${SEVERITIES.join(', ')}`, given);
        else filter.severity = list as Severity[];
        break;
      }
      case 'tags':
        tagGroups(given, field('tags'));
        filter.tags = given as TagsFilter;
        break;
      case 'data':
        filter.data = parseDataFilter(given);
        break;
      case 'contextKeys':
        if (!Array.isArray(given) || !given.every((item) => typeof item === 'string')) fail(key, 'must be a list of strings', given);
        else filter.contextKeys = given;
        break;
      default:
        fail(key, 'is not a filter', given);
    }
  }
  if (Object.keys(errors).length > 0) {
    const message = Object.entries(errors)
      .map(([name, problem]) => `${name} ${problem.messages.join(', ')}`)
      .join('; ');
    throw unprocessable(message, errors);
  }
  return filter;
}
