import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import { sql, type AliasableExpression, type Kysely } from 'kysely';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/index.ts';
import type { Database } from '../db/schema.ts';
import { HttpError } from '../errors.ts';
import { isSealed, secretsFor } from '../db/secrets.ts';

/** How long a key is kept, and its answer replayed: 24 hours, as decisions.md fixes it. */
const TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A request that has held its key this long without answering is taken as abandoned (its process
 * died before its writes committed: a trigger answers its key in the transaction of its writes).
 * NOTIF_IDEMPOTENCY_IN_FLIGHT_MS shortens it (the crash tests).
 */
export const DEFAULT_IN_FLIGHT_MS = 60 * 1000;
const MAX_KEY_LENGTH = 255;
/**
 * How often a process deletes the keys older than TTL_MS, which nothing replays any more: without
 * it every key stays for good (the elements send a new one with each change), its answer with it.
 */
const SWEEP_MS = 60 * 1000;

/** Answers kept per subscriber, when nothing else is set (NOTIF_IDEMPOTENCY_KEYS_PER_SUBSCRIBER). */
export const DEFAULT_KEYS_PER_SUBSCRIBER = 1000;
/** Bytes of answers kept per subscriber, before sealing, when nothing else is set (NOTIF_IDEMPOTENCY_BYTES_PER_SUBSCRIBER). */
export const DEFAULT_BYTES_PER_SUBSCRIBER = 4 * 1024 * 1024;
/** Answers kept per organization, when nothing else is set (NOTIF_IDEMPOTENCY_KEYS_PER_ORGANIZATION). */
export const DEFAULT_KEYS_PER_ORGANIZATION = 100_000;
/** Bytes of answers kept per organization, when nothing else is set (NOTIF_IDEMPOTENCY_BYTES_PER_ORGANIZATION). */
export const DEFAULT_BYTES_PER_ORGANIZATION = 256 * 1024 * 1024;
/**
 * An organization's caps are checked once its process has stored this share of either cap since
 * the last check (each check counts its keys, from an index): an organization goes past them by at
 * most that share per process.
 */
const ORGANIZATION_CHECK_SHARE = 0.01;
/** Keys an eviction reads and deletes at once, at least (so that a bytes cap rarely takes two rounds) and at most. */
const MIN_EVICTION_BATCH = 100;
const MAX_EVICTION_BATCH = 1000;

/** Answers kept, and their bytes. */
interface Usage {
  keys: number;
  bytes: number;
}

interface Held {
  key: string;
  organizationId: string;
  /** `environmentId subscriberId` of the subscriber the route names, or null when it names none. */
  subscriberKey: string | null;
  /** The answer was stored with the request's own writes (answerRecorder), of this many bytes: keep it whatever happens next. */
  recorded?: number;
  /** The answers kept for the subscriber when the key was taken, and their bytes (none when the route names no subscriber). */
  keptBefore?: Usage;
}

/** Stores a request's answer for its idempotency key inside the caller's transaction (see answerRecorder). */
export type RecordAnswer = (trx: Pick<Db, 'kysely'>, answer: unknown) => Promise<void>;

declare module 'fastify' {
  interface FastifyRequest {
    /** The idempotency key this request holds, while it runs. */
    idempotency?: Held;
    /**
     * For a request whose writes must never run twice (a trigger): a function that stores `answer`
     * for the request's idempotency key inside the caller's transaction, so the key is answered
     * once the writes are durable, even if the process dies before it replies (a retry then replays
     * the answer instead of running the request again). Undefined when the request holds no key.
     */
    answerRecorder(status: number): Promise<RecordAnswer | undefined>;
  }
}

/** A key to take, in flight, for the request that holds it. */
export interface Claim {
  organizationId: string;
  key: string;
  requestHash: string;
  now: number;
  /** See Held.subscriberKey. */
  subscriberKey: string | null;
}

// The statements below each have an index to read in order (migrations 0014 and 0016), so that
// their cost follows the rows they need, not all an organization keeps; test/server/idempotency-plans.test.ts
// checks that SQLite's planner takes it.

/**
 * The answered keys an organization keeps (one of its subscribers' only, when `subscriberKey` is
 * given), as `kept`: inside the claim's insert into the same table, the name says which rows are read.
 */
function answeredKeys(k: Kysely<Database>, organizationId: string, subscriberKey: string | null) {
  const ofOrganization = k.selectFrom('idempotency_keys as kept').where('organization_id', '=', organizationId).where('state', '=', 'done');
  return subscriberKey === null ? ofOrganization : ofOrganization.where('subscriber_key', '=', subscriberKey);
}

/**
 * Takes the key, in flight, unless it is taken already (then no row comes back), and reads in the
 * same statement what the subscriber keeps so far (by idempotency_keys_subscriber; nothing when the
 * route names no subscriber): storing the answer evicts older ones only when it takes them past a cap.
 */
export function claimKey(k: Kysely<Database>, claim: Claim) {
  const subscriberKey = claim.subscriberKey;
  const keptOfSubscriber = (what: 'keys' | 'bytes'): AliasableExpression<number | string> => {
    if (subscriberKey === null) return sql<number | string>`0`;
    const kept = answeredKeys(k, claim.organizationId, subscriberKey);
    if (what === 'keys') return kept.select((eb) => eb.fn.countAll<number | string>().as('n')).$asScalar();
    return kept.select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('bytes'), eb.lit(0)).as('n')).$asScalar();
  };
  return k
    .insertInto('idempotency_keys')
    .values({ organization_id: claim.organizationId, key: claim.key, request_hash: claim.requestHash, state: 'in_flight', status_code: null, body: null, created_at: claim.now })
    .onConflict((oc) => oc.columns(['organization_id', 'key']).doNothing())
    .returning([keptOfSubscriber('keys').as('keys'), keptOfSubscriber('bytes').as('bytes')]);
}

/**
 * How many answers an organization keeps (one of its subscribers, when `subscriberKey` is given),
 * and their bytes. An organization's are counted from idempotency_keys_organization_oldest alone,
 * not the rows; a subscriber's through idempotency_keys_subscriber.
 */
export function answersKept(k: Kysely<Database>, organizationId: string, subscriberKey: string | null) {
  return answeredKeys(k, organizationId, subscriberKey).select((eb) => [
    eb.fn.countAll<number | string>().as('keys'),
    eb.fn.coalesce(eb.fn.sum<number | string>('bytes'), eb.lit(0)).as('bytes'),
  ]);
}

const toUsage = (row: { keys: number | string; bytes: number | string }): Usage => ({ keys: Number(row.keys), bytes: Number(row.bytes) });

/** The `limit` oldest answered keys of an organization, or of one of its subscribers, with their bytes, oldest first. */
export function oldestAnswers(k: Kysely<Database>, organizationId: string, subscriberKey: string | null, limit: number) {
  return answeredKeys(k, organizationId, subscriberKey).select(['key', 'bytes']).orderBy('created_at').limit(limit);
}

export interface IdempotencyOptions {
  /** See DEFAULT_IN_FLIGHT_MS. */
  inFlightMs?: number;
  /** Answers kept per subscriber (DEFAULT_KEYS_PER_SUBSCRIBER); past it the oldest are evicted. */
  keysPerSubscriber?: number;
  /** Bytes of answers kept per subscriber (DEFAULT_BYTES_PER_SUBSCRIBER); past it the oldest are evicted. */
  bytesPerSubscriber?: number;
  /** Answers kept per organization (DEFAULT_KEYS_PER_ORGANIZATION); past it the oldest are evicted. */
  keysPerOrganization?: number;
  /** Bytes of answers kept per organization (DEFAULT_BYTES_PER_ORGANIZATION); past it the oldest are evicted. */
  bytesPerOrganization?: number;
}

/** The subscriber a request names (`:subscriberId` in its path, or `?subscriberId=`), as its keys are counted. */
function subscriberKeyOf(request: FastifyRequest): string | null {
  const fromPath = (request.params as { subscriberId?: unknown } | undefined)?.subscriberId;
  const fromQuery = (request.query as { subscriberId?: unknown } | undefined)?.subscriberId;
  const subscriberId = typeof fromPath === 'string' ? fromPath : typeof fromQuery === 'string' ? fromQuery : undefined;
  return subscriberId === undefined ? null : `${request.tenant.environmentId} ${subscriberId}`;
}

/**
 * The `idempotency-key` header, as decisions.md fixes it: on every non-GET request, scoped to the
 * organization, stored in the database for 24 hours (so it survives a restart). What is kept is
 * bounded: per subscriber (the one the route names) and per organization, in answers and in bytes,
 * the oldest answers past a cap are evicted (a retry of an evicted key runs the request again; the
 * routes that name a subscriber, mark-as, mark-all, actions, deletes, have the same effect when run
 * twice). Evicting rather than refusing with 429 keeps a user's newest requests replayable, and a
 * cap per subscriber keeps one user from evicting the others' answers. Same key and body:
 * the stored answer is replayed with `Idempotency-Replay: true`; while the first is still running:
 * 409 with `Retry-After: 1`; a different body: 422. Needs the db plugin, and the auth plugin before
 * it (a key belongs to the request's organization).
 */
const idempotency: FastifyPluginAsync<IdempotencyOptions> = async (app, options) => {
  const db = app.db;
  const k = db.kysely;
  const inFlightMs = options.inFlightMs ?? DEFAULT_IN_FLIGHT_MS;
  const keysPerSubscriber = options.keysPerSubscriber ?? DEFAULT_KEYS_PER_SUBSCRIBER;
  const bytesPerSubscriber = options.bytesPerSubscriber ?? DEFAULT_BYTES_PER_SUBSCRIBER;
  const keysPerOrganization = options.keysPerOrganization ?? DEFAULT_KEYS_PER_ORGANIZATION;
  const bytesPerOrganization = options.bytesPerOrganization ?? DEFAULT_BYTES_PER_ORGANIZATION;

  /**
   * Deletes the oldest answered keys of an organization (of one of its subscribers when
   * `subscriberKey` is given), never `keep` (the answer just stored), until at most `maxKeys` of
   * them and `maxBytes` of their answers are left, `kept` being what is kept now. It reads the
   * oldest a batch at a time (oldestAnswers), and counts again after each batch: its cost follows
   * how many it deletes, not how many are kept (ranking all of an organization's 100,000 answers to
   * evict the oldest took 220 ms of SQLite's event loop, every 1,000 answers). Two processes
   * evicting for one organization at the same moment may together delete up to a batch more than
   * needed: the oldest answers, the nearest to their expiry.
   */
  const evictOldest = async (organizationId: string, subscriberKey: string | null, keep: string, kept: Usage, maxKeys: number, maxBytes: number) => {
    let usage = kept;
    while (usage.keys > maxKeys || usage.bytes > maxBytes) {
      let keysOver = usage.keys - maxKeys;
      let bytesOver = usage.bytes - maxBytes;
      const oldest = await oldestAnswers(k, organizationId, subscriberKey, Math.min(Math.max(keysOver, MIN_EVICTION_BATCH), MAX_EVICTION_BATCH)).execute();
      const evicted: string[] = [];
      for (const row of oldest) {
        if (keysOver <= 0 && bytesOver <= 0) break;
        if (row.key === keep) continue;
        evicted.push(row.key);
        keysOver--;
        bytesOver -= Number(row.bytes);
      }
      if (evicted.length === 0) return; // (nothing older left to evict: deleted meanwhile)
      // (`state` again: a key evicted meanwhile by another process may have been taken again since, in flight.)
      await k.deleteFrom('idempotency_keys').where('organization_id', '=', organizationId).where('state', '=', 'done').where('key', 'in', evicted).execute();
      usage = toUsage(await answersKept(k, organizationId, subscriberKey).executeTakeFirstOrThrow());
    }
  };
  /** Keys and bytes this process stored per organization since it last checked the organization's caps. */
  const sinceCheck = new Map<string, Usage>();
  /**
   * Evicts past the caps once `held`'s answer of `bytes` is stored: its subscriber's at once when
   * this answer takes them past a cap (counted when the key was taken: requests of the subscriber
   * running at the same time may pass it by a few, which the next one evicts), its organization's
   * now and then.
   */
  const evict = async (held: Held, bytes: number) => {
    const kept = held.keptBefore;
    if (held.subscriberKey !== null && kept !== undefined) {
      const keptNow = { keys: kept.keys + 1, bytes: kept.bytes + bytes };
      await evictOldest(held.organizationId, held.subscriberKey, held.key, keptNow, keysPerSubscriber, bytesPerSubscriber);
    }
    const stored = sinceCheck.get(held.organizationId) ?? { keys: 0, bytes: 0 };
    stored.keys++;
    stored.bytes += bytes;
    sinceCheck.set(held.organizationId, stored);
    if (stored.keys < keysPerOrganization * ORGANIZATION_CHECK_SHARE && stored.bytes < bytesPerOrganization * ORGANIZATION_CHECK_SHARE) return;
    sinceCheck.delete(held.organizationId);
    const keptOfOrganization = toUsage(await answersKept(k, held.organizationId, null).executeTakeFirstOrThrow());
    await evictOldest(held.organizationId, null, held.key, keptOfOrganization, keysPerOrganization, bytesPerOrganization);
  };
  const evictBeside = (held: Held, bytes: number) =>
    evict(held, bytes).catch((err: unknown) => app.log.warn({ err }, 'evicting idempotency keys past their caps failed'));
  let nextSweep = 0;
  /** Deletes the expired keys, at most once per SWEEP_MS; run beside the request, not before it. */
  const sweep = (now: number) => {
    if (now < nextSweep) return;
    nextSweep = now + SWEEP_MS;
    k.deleteFrom('idempotency_keys')
      .where('created_at', '<', now - TTL_MS)
      .execute()
      .catch((err: unknown) => app.log.warn({ err }, 'deleting expired idempotency keys failed'));
  };

  app.addHook('preValidation', async (request, reply) => {
    const raw = request.headers['idempotency-key'];
    if (raw === undefined || request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
    if (!request.tenant) return;
    const key = Array.isArray(raw) ? raw.join(',') : raw;
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
      throw new HttpError(400, `idempotency-key must be 1 to ${MAX_KEY_LENGTH} characters long`);
    }
    reply.header('Idempotency-Key', key);
    const organizationId = request.tenant.organizationId;
    const hash = requestHash(request);
    const now = Date.now();
    sweep(now);

    const subscriberKey = subscriberKeyOf(request);
    for (let attempt = 0; attempt < 2; attempt++) {
      const inserted = await claimKey(k, { organizationId, key, requestHash: hash, now, subscriberKey }).executeTakeFirst();
      if (inserted) {
        const keptBefore = subscriberKey === null ? undefined : toUsage(inserted);
        request.idempotency = { key, organizationId, subscriberKey, keptBefore };
        return;
      }
      const row = await k
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .where('key', '=', key)
        .executeTakeFirst();
      if (!row) continue; // removed between the two statements: try again
      const age = now - Number(row.created_at);
      const abandoned = row.state === 'in_flight' && age > inFlightMs;
      if (age > TTL_MS || abandoned) {
        await k.deleteFrom('idempotency_keys').where('organization_id', '=', organizationId).where('key', '=', key).execute();
        continue;
      }
      if (row.request_hash !== hash) {
        throw new HttpError(422, 'idempotency-key was already used with a different request body');
      }
      if (row.state === 'in_flight') {
        throw new HttpError(409, 'A request with this idempotency-key is still being processed', undefined, { 'Retry-After': '1' });
      }
      // Stored bodies are sealed: a response may carry secrets (an integration's credentials).
      const body = isSealed(row.body) ? (await secretsFor(db)).open(row.body, storedBodyContext(organizationId, key)) : row.body;
      return replay(reply, row.status_code ?? 200, body);
    }
    throw new HttpError(409, 'A request with this idempotency-key is still being processed', undefined, { 'Retry-After': '1' });
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const held = request.idempotency;
    if (!held) return payload;
    request.idempotency = undefined;
    if (held.recorded !== undefined) {
      await evictBeside(held, held.recorded);
      return payload;
    }
    const where = k
      .updateTable('idempotency_keys')
      .where('organization_id', '=', held.organizationId)
      .where('key', '=', held.key);
    if (reply.statusCode >= 500) {
      // Not the caller's fault: let a retry with the same key run again.
      await k.deleteFrom('idempotency_keys').where('organization_id', '=', held.organizationId).where('key', '=', held.key).execute();
    } else {
      const text = typeof payload === 'string' ? payload : payload == null ? null : String(payload);
      const body = text === null ? null : (await secretsFor(db)).seal(text, storedBodyContext(held.organizationId, held.key));
      const bytes = text === null ? 0 : Buffer.byteLength(text);
      await where.set({ state: 'done', status_code: reply.statusCode, body, subscriber_key: held.subscriberKey, bytes }).execute();
      await evictBeside(held, bytes);
    }
    return payload;
  });

  // A request that ends without onSend (the client went away) frees its key.
  app.addHook('onResponse', async (request) => {
    const held = request.idempotency;
    if (!held || held.recorded !== undefined) return;
    await k.deleteFrom('idempotency_keys').where('organization_id', '=', held.organizationId).where('key', '=', held.key).execute();
  });

  app.decorateRequest('answerRecorder', async function (this: FastifyRequest, status: number): Promise<RecordAnswer | undefined> {
    const held = this.idempotency;
    if (!held) return undefined;
    // Read the sealing key now: inside the caller's transaction the database may be busy with it.
    const secrets = await secretsFor(db);
    return async (trx, answer) => {
      const text = JSON.stringify(answer);
      const body = secrets.seal(text, storedBodyContext(held.organizationId, held.key));
      const bytes = Buffer.byteLength(text);
      await trx.kysely
        .updateTable('idempotency_keys')
        .set({ state: 'done', status_code: status, body, subscriber_key: held.subscriberKey, bytes })
        .where('organization_id', '=', held.organizationId)
        .where('key', '=', held.key)
        .execute();
      held.recorded = bytes;
    };
  });
};

export default fp(idempotency, { name: 'idempotency', dependencies: ['db', 'auth'] });

const storedBodyContext = (organizationId: string, key: string) => `idempotency:${organizationId}:${key}`;

/**
 * What makes two requests "the same": method, URL, body, and the key's environment. The key is
 * scoped to the organization, but a stored answer holds one environment's data: another
 * environment reusing the key is a different request (422), never a replay of that data.
 */
function requestHash(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.tenant.environmentId} ${request.method} ${request.url}\n`)
    .update(JSON.stringify(request.body ?? null))
    .digest('hex');
}

function replay(reply: FastifyReply, status: number, body: string | null) {
  reply.code(status).header('Idempotency-Replay', 'true');
  if (body === null || status === 204) return reply.send();
  return reply.type('application/json; charset=utf-8').send(body);
}
