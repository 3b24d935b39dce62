// Input that neither database can store alike, or that would cost too much to walk: the request
// guard (plugins/input-guard.ts) refuses it in every request, and the feed's payload filter in its
// decoded JSON.

/** How deep objects and arrays may nest in a request's JSON (the body, a feed payload filter). */
export const MAX_JSON_DEPTH = 32;
/** How many keys a request's JSON may hold in all (a 1 MB body of tiny keys would cost every walk of it seconds). */
export const MAX_JSON_KEYS = 10_000;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (a lone surrogate)';
  return undefined;
}

export interface BadInput {
  path: string[];
  problem: string;
  value: unknown;
}

/**
 * The first problem in `root`, walking without recursion; undefined when none:
 * - JSON nested deeper than `maxDepth` levels (it would overflow the stack of whatever walks it
 *   next: serialisation, the idempotency fingerprint, a database's JSON functions);
 * - JSON holding more than `maxKeys` keys in all (objects' keys and arrays' items);
 * - strings or keys holding a NUL character (U+0000), which PostgreSQL text cannot store;
 * - strings or keys holding a lone surrogate (half of a UTF-16 pair), which is not Unicode text and
 *   which PostgreSQL's JSON refuses.
 */
export function findBadInput(root: unknown, maxDepth = MAX_JSON_DEPTH, maxKeys = MAX_JSON_KEYS): BadInput | undefined {
  let keys = 0;
  const stack: { value: unknown; path: string[]; depth: number }[] = [{ value: root, path: [], depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = textProblem(value);
      if (problem) return { path, problem, value: value.replace(/[\ud800-\udfff]/g, '\ufffd') };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= maxDepth) return { path, problem: `must not nest deeper than ${maxDepth} levels`, value: null };
    const entries = Object.entries(value);
    keys += entries.length;
    if (keys > maxKeys) return { path, problem: `must not hold more than ${maxKeys} keys and items in all`, value: null };
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i]!;
      const problem = textProblem(key);
      if (problem) return { path: [...path, key.replace(/[\ud800-\udfff\u0000]/g, '\ufffd')], problem: `key ${problem}`, value: null };
      stack.push({ value: item, path: [...path, key], depth: depth + 1 });
    }
  }
  return undefined;
}
