import { Type, type Static } from '@sinclair/typebox';
import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { App, AppContext } from '../app.ts';
import type { Database } from '../db/schema.ts';
import { badRequest, conflict, errorMessage, fieldProblem, HttpError, notFound, type FieldErrors } from '../errors.ts';
import { nowIso } from '../ids.ts';
import { findSubscriber } from '../db/lookups.ts';
import { newSubscriberRow } from '../engine/subscribers.ts';
import { isWebhookUrl, refusedHost } from '../engine/webhook.ts';
import { parseJson, toJson } from '../json.ts';
import { StringEnum, SubscriberIdParam } from '../schemas.ts';
import { subscriberView, type SubscriberRow } from '../views.ts';

// Subscribers: create (8), get (3), search (6), credentials append/replace (4, 5). Preferences (14)
// are in preferences.ts.
// Every query is confined to the API key's environment; a subscriber of another one is a 404.

/** Provider values the spec accepts for subscriber credentials (chat and push). */
export const CREDENTIAL_PROVIDERS = [
  'slack', 'discord', 'msteams', 'mattermost', 'ryver', 'zulip', 'grafana-on-call', 'getstream', 'rocket-chat',
  'whatsapp-business', 'chat-webhook', 'service-slack', 'fcm', 'apns', 'expo', 'one-signal', 'pushpad',
  'push-webhook', 'pusher-beams', 'appio',
] as const;

/** Search: `totalCount` counts at most this many matches, then says so with `totalCountCapped`. */
export const TOTAL_COUNT_CAP = 50_000;

/** A string that may also be null (null clears the field on update). */
const NullableString = (maxLength: number) => Type.Unsafe<string | null>({ type: 'string', nullable: true, maxLength });
const NullableObject = Type.Unsafe<Record<string, unknown> | null>({ type: 'object', nullable: true });

const SubscriberFields = {
  firstName: Type.Optional(NullableString(255)),
  lastName: Type.Optional(NullableString(255)),
  email: Type.Optional(NullableString(320)),
  phone: Type.Optional(NullableString(64)),
  avatar: Type.Optional(NullableString(2048)),
  locale: Type.Optional(NullableString(64)),
  timezone: Type.Optional(NullableString(64)),
  data: Type.Optional(NullableObject),
};

const CreateSubscriberBody = Type.Object(
  { subscriberId: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }), ...SubscriberFields },
  { additionalProperties: false },
);
type CreateSubscriberBody = Static<typeof CreateSubscriberBody>;

const CreateSubscriberQuery = Type.Object({ failIfExists: Type.Boolean({ default: false }) }, { additionalProperties: false });

const SearchQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    before: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    orderBy: StringEnum(['_id', 'updatedAt', 'createdAt'] as const, { default: '_id' }),
    orderDirection: StringEnum(['ASC', 'DESC'] as const, { default: 'DESC' }),
    includeCursor: Type.Boolean({ default: false }),
    email: Type.Optional(Type.String({ maxLength: 320 })),
    name: Type.Optional(Type.String({ maxLength: 512 })),
    phone: Type.Optional(Type.String({ maxLength: 64 })),
    subscriberId: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);
type SearchQuery = Static<typeof SearchQuery>;

const HttpUrl = Type.String({ minLength: 1, maxLength: 2048 });
const URL_FIELDS = ['webhookUrl', 'imageUrl', 'externalUrl'] as const;

const CredentialsBody = Type.Object(
  {
    providerId: StringEnum(CREDENTIAL_PROVIDERS),
    integrationIdentifier: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    credentials: Type.Object(
      {
        webhookUrl: Type.Optional(HttpUrl),
        channel: Type.Optional(Type.String({ maxLength: 255 })),
        deviceTokens: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 4096 }), { maxItems: 500 })),
        alertUid: Type.Optional(Type.String({ maxLength: 255 })),
        title: Type.Optional(Type.String({ maxLength: 1024 })),
        imageUrl: Type.Optional(HttpUrl),
        state: Type.Optional(Type.String({ maxLength: 255 })),
        externalUrl: Type.Optional(HttpUrl),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
type CredentialsBody = Static<typeof CredentialsBody>;

/**
 * The most a subscriber's credentials (`channels`) may hold, in bytes of JSON. PATCH appends device
 * tokens and adds an entry per integrationIdentifier, so requests each within the body limit could
 * grow one subscriber without bound; the subscriber is embedded in every message of its feed, and a
 * page of them past what one string can hold failed with a 500. A few devices' tokens take a few KB.
 */
export const MAX_CHANNELS_BYTES = 65_536;

/** A channel credential entry inside Subscriber.channels, as stored. */
export interface ChannelEntry {
  providerId: string;
  integrationIdentifier?: string;
  credentials: CredentialsBody['credentials'];
  _integrationId?: string;
}

export function subscriberRoutes(app: App, ctx: AppContext) {
  const k = ctx.db.kysely;

  // 8. Create subscriber; an existing subscriberId is updated unless failIfExists=true (409).
  app.post(
    '/v2/subscribers',
    {
      schema: { querystring: CreateSubscriberQuery, body: CreateSubscriberBody },
    },
    async (request, reply) => {
      const { environmentId } = request.tenant;
      const body = request.body;
      const now = nowIso();
      const row = newSubscriberRow(request.tenant, body.subscriberId, now, {
        first_name: body.firstName ?? null,
        last_name: body.lastName ?? null,
        email: body.email ?? null,
        phone: body.phone ?? null,
        avatar: body.avatar ?? null,
        locale: body.locale ?? null,
        timezone: body.timezone ?? null,
        data: body.data == null ? null : toJson(body.data),
      });
      const inserted = await k
        .insertInto('subscribers')
        .values(row)
        .onConflict((oc) => oc.columns(['environment_id', 'subscriber_id']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) {
        return reply.code(201).send(subscriberView(row));
      }
      if (request.query.failIfExists) {
        throw conflict(`Subscriber '${body.subscriberId}' already exists`);
      }
      const updated = await k
        .updateTable('subscribers')
        .set((eb) => ({ ...subscriberChanges(body), updated_at: now, version: eb('version', '+', 1) }))
        .where('environment_id', '=', environmentId)
        .where('subscriber_id', '=', body.subscriberId)
        .returningAll()
        .executeTakeFirst();
      if (!updated) throw notFound('Subscriber', body.subscriberId);
      return reply.code(201).send(subscriberView(updated));
    },
  );

  // 3. Get subscriber.
  app.get('/v2/subscribers/:subscriberId', { schema: { params: SubscriberIdParam } }, async (request) => {
    return subscriberView(await findSubscriber(ctx.db, request.tenant, request.params.subscriberId));
  });

  // 6. Search subscribers, with cursors.
  app.get('/v2/subscribers', { schema: { querystring: SearchQuery } }, async (request) => {
    return searchSubscribers(ctx, request.tenant.environmentId, request.query);
  });

  // 4, 5. Append (PATCH) or replace (PUT) the credentials of one channel entry.
  for (const method of ['PATCH', 'PUT'] as const) {
    app.route({
      method,
      url: '/v1/subscribers/:subscriberId/credentials',
      schema: { params: SubscriberIdParam, body: CredentialsBody },
      handler: async (request) => {
        const { environmentId } = request.tenant;
        const body = request.body;
        checkCredentialUrls(body.credentials);
        const integration = await findIntegrationFor(ctx, environmentId, body.providerId, body.integrationIdentifier);
        // Optimistic concurrency on __v: two updates of one subscriber never lose each other's entries.
        for (let attempt = 0; attempt < 10; attempt++) {
          const row = await findSubscriber(ctx.db, request.tenant, request.params.subscriberId);
          const channels = mergeChannel(parseJson<ChannelEntry[]>(row.channels, []), body, method === 'PATCH', integration);
          const bytes = Buffer.byteLength(toJson(channels));
          // (A change that shrinks what a subscriber holds is let through, even past the cap.)
          if (bytes > MAX_CHANNELS_BYTES && bytes > Buffer.byteLength(row.channels || '[]')) {
            const problem = `would make the subscriber's credentials ${bytes} bytes of JSON; at most ${MAX_CHANNELS_BYTES} bytes (PUT replaces an entry's device tokens)`;
            throw fieldProblem('credentials', problem);
          }
          const updated = await k
            .updateTable('subscribers')
            .set({ channels: toJson(channels), version: row.version + 1, updated_at: nowIso() })
            .where('id', '=', row.id)
            .where('version', '=', row.version)
            .returningAll()
            .executeTakeFirst();
          if (updated) return subscriberView(updated);
        }
        throw conflict('The subscriber is being changed by other requests; try again');
      },
    });
  }
}

/** The columns a create-or-update body sets; fields left out of the body keep their value. */
function subscriberChanges(body: CreateSubscriberBody) {
  const changes: Partial<SubscriberRow> = {};
  const set = <C extends keyof SubscriberRow>(column: C, value: SubscriberRow[C] | undefined) => {
    if (value !== undefined) changes[column] = value;
  };
  set('first_name', body.firstName);
  set('last_name', body.lastName);
  set('email', body.email);
  set('phone', body.phone);
  set('avatar', body.avatar);
  set('locale', body.locale);
  set('timezone', body.timezone);
  if (body.data !== undefined) changes.data = body.data === null ? null : toJson(body.data);
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Search (6)
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

async function searchSubscribers(ctx: AppContext, environmentId: string, q: SearchQuery) {
  const k = ctx.db.kysely;
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

// ---------------------------------------------------------------------------------------------
// Credentials (4, 5)

function checkCredentialUrls(credentials: CredentialsBody['credentials']) {
  const errors: FieldErrors = {};
  for (const field of URL_FIELDS) {
    const value = credentials[field];
    if (value !== undefined && !isHttpUrl(value)) {
      errors[`credentials.${field}`] = { messages: ['must be an http(s) URL'], value };
    }
  }
  // The chat step posts to webhookUrl: an address it would refuse to reach is refused here already.
  const hook = credentials.webhookUrl;
  if (hook !== undefined && !errors['credentials.webhookUrl']) {
    const why = isWebhookUrl(hook) ? refusedHost(hook) : 'it holds a user name or password';
    if (why) errors['credentials.webhookUrl'] = { messages: [`must be a public http(s) URL: ${why}`], value: hook };
  }
  if (Object.keys(errors).length > 0) throw new HttpError(422, errorMessage(errors), errors);
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * The integration a credential entry belongs to: the one with that identifier and provider, or,
 * without an identifier, the provider's primary (else first active, else first) integration.
 */
async function findIntegrationFor(ctx: AppContext, environmentId: string, providerId: string, identifier: string | undefined) {
  let query = ctx.db.kysely
    .selectFrom('integrations')
    .select('id')
    .where('environment_id', '=', environmentId)
    .where('provider_id', '=', providerId);
  if (identifier !== undefined) query = query.where('identifier', '=', identifier);
  const row = await query.orderBy('primary', 'desc').orderBy('active', 'desc').orderBy('created_at').orderBy('id').executeTakeFirst();
  return row?.id;
}

/** The subscriber's channels with `body` applied: one entry per (providerId, integrationIdentifier). */
export function mergeChannel(
  channels: ChannelEntry[],
  body: CredentialsBody,
  append: boolean,
  integrationId: string | undefined,
): ChannelEntry[] {
  const same = (e: ChannelEntry) => e.providerId === body.providerId && e.integrationIdentifier === body.integrationIdentifier;
  const existing = channels.find(same);
  const given = body.credentials;
  let credentials: ChannelEntry['credentials'];
  if (existing && append) {
    credentials = { ...existing.credentials, ...given };
    if (existing.credentials.deviceTokens || given.deviceTokens) {
      credentials.deviceTokens = unique([...(existing.credentials.deviceTokens ?? []), ...(given.deviceTokens ?? [])]);
    }
  } else {
    credentials = { ...given };
    if (given.deviceTokens) credentials.deviceTokens = unique(given.deviceTokens);
  }
  const entry: ChannelEntry = {
    providerId: body.providerId,
    ...(body.integrationIdentifier !== undefined ? { integrationIdentifier: body.integrationIdentifier } : {}),
    credentials,
    ...((integrationId ?? existing?._integrationId) ? { _integrationId: integrationId ?? existing?._integrationId } : {}),
  };
  return existing ? channels.map((e) => (e === existing ? entry : e)) : [...channels, entry];
}

const unique = (values: string[]) => [...new Set(values)];

// ---------------------------------------------------------------------------------------------
// Strict body types
