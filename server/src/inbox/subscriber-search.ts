import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { SubscriberRow } from '../db/rows.ts';
import type { Database } from '../db/schema.ts';
import type { Store } from '../db/store.ts';
import { badRequest } from '../errors.ts';
import { subscriberView } from './views.ts';

// Subscriber search (endpoint 6).
//
// The order is (orderBy field, _id) in `orderDirection`, so ties on updatedAt/createdAt are broken
// by _id and every subscriber has one place in it. Cursors are subscriber _ids: `after=c` starts
// right after c in that order, `before=c` ends right before it (with includeCursor, c itself is
// included when it matches the filters). `next` is the last _id of the page when more follow it,
// `previous` the first _id when more precede it, else null; so following `next` from the first page
// and `previous` from the last walks every match exactly once either way. An empty page has neither.
// A cursor that is not a subscriber of the key's environment is unusable input: 400 (not 404, so a
// search never says whether an id exists elsewhere, and a missing subscriber keeps its meaning).

type Where = (eb: ExpressionBuilder<Database, 'subscribers'>) => Expression<SqlBool>;
type SortColumn = 'id' | 'created_at' | 'updated_at';
type CursorRow = Pick<SubscriberRow, SortColumn>;

/** `LIKE` pattern for a substring, with the wildcards of the input escaped. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The fields a search may be ordered by, and its directions. */
export const SEARCH_ORDER_FIELDS = ['_id', 'updatedAt', 'createdAt'] as const;
export const SEARCH_DIRECTIONS = ['ASC', 'DESC'] as const;

/** Search: `totalCount` counts at most this many matches, then says so with `totalCountCapped`. */
export const TOTAL_COUNT_CAP = 50_000;

/** Endpoint 6's query: filters, cursor, order and page size. */
export interface SubscriberSearch {
  after?: string;
  before?: string;
  limit: number;
  orderBy: (typeof SEARCH_ORDER_FIELDS)[number];
  orderDirection: (typeof SEARCH_DIRECTIONS)[number];
  includeCursor: boolean;
  email?: string;
  name?: string;
  phone?: string;
  subscriberId?: string;
}

/** A page of the environment's subscribers matching the search, with its cursors and the (capped) count of matches. */
export async function searchSubscribers(store: Store, environmentId: string, q: SubscriberSearch) {
  const k = store.kysely;
  if (q.after !== undefined && q.before !== undefined) {
    throw badRequest('Give either `after` or `before`, not both');
  }
  const column: SortColumn = q.orderBy === 'updatedAt' ? 'updated_at' : q.orderBy === 'createdAt' ? 'created_at' : 'id';
  const direction = q.orderDirection === 'ASC' ? 'asc' : 'desc';
  const reverse = direction === 'asc' ? 'desc' : 'asc';
  const forwardOp = direction === 'asc' ? '>' : '<';
  const backwardOp = direction === 'asc' ? '<' : '>';

  const filters: Where = (eb) => {
    const conds: Expression<SqlBool>[] = [eb('environment_id', '=', environmentId)];
    if (q.subscriberId !== undefined) conds.push(eb('subscriber_id', '=', q.subscriberId));
    const like = (expr: Expression<unknown>, text: string) =>
      sql<SqlBool>`lower(${expr}) like lower(${containing(text)}) escape '\\'`;
    if (q.email) conds.push(like(eb.ref('email'), q.email));
    if (q.phone) conds.push(like(eb.ref('phone'), q.phone));
    if (q.name) {
      conds.push(like(sql`coalesce(${eb.ref('first_name')}, '') || ' ' || coalesce(${eb.ref('last_name')}, '')`, q.name));
    }
    return eb.and(conds);
  };
  /** Rows on the `op` side of `c` in the order; `inclusive` lets `c` itself through. */
  const beyond = (c: CursorRow, op: '<' | '>', inclusive: boolean): Where => (eb) => {
    const idOp = inclusive ? (`${op}=` as const) : op;
    if (column === 'id') return eb('id', idOp, c.id);
    return eb.or([eb(column, op, c[column]), eb.and([eb(column, '=', c[column]), eb('id', idOp, c.id)])]);
  };
  const page = (extra: Where, dir: 'asc' | 'desc') => {
    let query = k.selectFrom('subscribers').selectAll().where(filters).where(extra).orderBy(column, dir);
    if (column !== 'id') query = query.orderBy('id', dir);
    return query.limit(q.limit + 1).execute();
  };
  const exists = async (extra: Where) =>
    !!(await k.selectFrom('subscribers').select('id').where(filters).where(extra).limit(1).executeTakeFirst());

  const cursorId = q.after ?? q.before;
  let cursor: CursorRow | undefined;
  if (cursorId !== undefined) {
    cursor = await k
      .selectFrom('subscribers')
      .select(['id', 'created_at', 'updated_at'])
      .where('environment_id', '=', environmentId)
      .where('id', '=', cursorId)
      .executeTakeFirst();
    if (!cursor) throw badRequest(`Cursor '${cursorId}' is not a subscriber of this environment`);
  }

  let data: SubscriberRow[];
  let next: string | null = null;
  let previous: string | null = null;
  if (q.before !== undefined) {
    const rows = await page(beyond(cursor!, backwardOp, q.includeCursor), reverse);
    data = rows.slice(0, q.limit).reverse();
    if (data.length > 0) {
      if (rows.length > q.limit) previous = data[0]!.id;
      if (await exists(beyond(data.at(-1)!, forwardOp, false))) next = data.at(-1)!.id;
    }
  } else {
    const rows = await page(cursor ? beyond(cursor, forwardOp, q.includeCursor) : () => sql<SqlBool>`1 = 1`, direction);
    data = rows.slice(0, q.limit);
    if (data.length > 0) {
      if (rows.length > q.limit) next = data.at(-1)!.id;
      if (cursor && (await exists(beyond(data[0]!, backwardOp, false)))) previous = data[0]!.id;
    }
  }

  const counted = await k
    .selectFrom(k.selectFrom('subscribers').select('id').where(filters).limit(TOTAL_COUNT_CAP + 1).as('m'))
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  const n = Number(counted.n);
  return {
    data: data.map(subscriberView),
    next,
    previous,
    totalCount: Math.min(n, TOTAL_COUNT_CAP),
    totalCountCapped: n > TOTAL_COUNT_CAP,
  };
}
