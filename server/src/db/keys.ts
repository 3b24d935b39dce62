import { hash, randomBytes } from 'node:crypto';
import type { Db } from './index.ts';
import { newId, nowIso } from '../ids.ts';

/** Whom a request speaks for: the API key's environment and its organization. */
export interface Tenant {
  organizationId: string;
  environmentId: string;
}

/** The key as stored (api_keys.key_hash). Every request's key is hashed: in one call, a third of createHash().update().digest()'s time (190 against 560 ns). */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Random bytes in a key: 192 bits. */
const KEY_BYTES = 24;

export function generateKey(): string {
  return 'nk_' + randomBytes(KEY_BYTES).toString('hex');
}

/** Finds or creates the organization and environment with these names. */
export async function ensureEnvironment(db: Db, orgName: string, envName: string): Promise<Tenant> {
  const k = db.kysely;
  let org = await k.selectFrom('organizations').select('id').where('name', '=', orgName).executeTakeFirst();
  if (!org) {
    org = { id: newId() };
    await k.insertInto('organizations').values({ id: org.id, name: orgName, created_at: nowIso() }).execute();
  }
  let env = await k
    .selectFrom('environments')
    .select('id')
    .where('organization_id', '=', org.id)
    .where('name', '=', envName)
    .executeTakeFirst();
  if (!env) {
    env = { id: newId() };
    await k
      .insertInto('environments')
      .values({ id: env.id, organization_id: org.id, name: envName, created_at: nowIso() })
      .execute();
  }
  return { organizationId: org.id, environmentId: env.id };
}

/** Registers `key` for the environment `envName` of the organization `orgName` (both made as needed). */
export async function registerKey(db: Db, key: string, orgName: string, envName: string): Promise<Tenant> {
  const tenant = await ensureEnvironment(db, orgName, envName);
  const hash = hashKey(key);
  const existing = await db.kysely.selectFrom('api_keys').select('environment_id').where('key_hash', '=', hash).executeTakeFirst();
  if (existing && existing.environment_id !== tenant.environmentId) {
    throw new Error('that API key already belongs to another environment');
  }
  if (!existing) {
    await db.kysely
      .insertInto('api_keys')
      .values({ key_hash: hash, environment_id: tenant.environmentId, created_at: nowIso() })
      .execute();
  }
  // Forgotten as unknown; and a lookup in flight now does not remember it as unknown.
  const unknown = unknownOf(db);
  unknown.hashes.delete(hash);
  unknown.registered++;
  return tenant;
}

/**
 * How long an unknown key is remembered as unknown (ms), and how many are. A request with an unknown
 * key would otherwise cost a database lookup every time (on PostgreSQL a round trip: bench showed a
 * process answering about 6,000 such requests a second against 32,000 with a known key); a client
 * retrying a wrong key now costs one lookup per UNKNOWN_FOR_MS. The table is bounded (the oldest
 * entry makes room), so random keys cannot grow memory; they still cost a lookup each, rate limits
 * or not (the limiter resolves a key to know whose budget it counts against; plugins/rate-limit.ts counts an
 * unknown one against its client's address, which bounds the answers such a client gets, not the
 * lookups).
 */
export const UNKNOWN_FOR_MS = 5_000;
export const MAX_UNKNOWN = 10_000;

/** The hashes of keys found unknown, per database: registerKey forgets one the moment it registers it. */
const unknownByDb = new WeakMap<Db, { hashes: Map<string, number>; registered: number }>();
function unknownOf(db: Db) {
  let entry = unknownByDb.get(db);
  if (!entry) {
    entry = { hashes: new Map(), registered: 0 };
    unknownByDb.set(db, entry);
  }
  return entry;
}

export interface KeyResolverOptions {
  now?: () => number;
  /** At most this many unknown keys remembered (default MAX_UNKNOWN). */
  maxUnknown?: number;
}

/**
 * Resolves keys to tenants, remembering known keys (keys are never deleted while the server runs)
 * and, for UNKNOWN_FOR_MS, unknown ones. A key registered in this process (registerKey) works at
 * once; one registered by another process (`keys create`, another server's NOTIF_API_KEYS) works
 * at once unless a request presented it in the last UNKNOWN_FOR_MS, before it existed (a key
 * `keys create` generates is new to every client, so it always works at once).
 */
export class KeyResolver {
  private cache = new Map<string, Tenant>();
  /** Unknown key hashes (`hashes`: with when each is forgotten, oldest first), shared with registerKey. */
  private registry: { hashes: Map<string, number>; registered: number };
  /** Lookups in flight, so that concurrent requests with one key share one. */
  private pending = new Map<string, Promise<Tenant | null>>();
  private now: () => number;
  private maxUnknown: number;

  constructor(
    private db: Db,
    options: KeyResolverOptions = {},
  ) {
    this.registry = unknownOf(db);
    this.now = options.now ?? Date.now;
    this.maxUnknown = Math.max(1, options.maxUnknown ?? MAX_UNKNOWN);
  }

  /** How many unknown keys are remembered (tests). */
  get unknownHeld(): number {
    return this.registry.hashes.size;
  }

  async resolve(key: string): Promise<Tenant | null> {
    const hash = hashKey(key);
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const until = this.registry.hashes.get(hash);
    if (until !== undefined) {
      if (until > this.now()) return null;
      this.registry.hashes.delete(hash);
    }
    let pending = this.pending.get(hash);
    if (!pending) {
      pending = this.lookup(hash).finally(() => this.pending.delete(hash));
      this.pending.set(hash, pending);
    }
    return pending;
  }

  private async lookup(hash: string): Promise<Tenant | null> {
    const registered = this.registry.registered;
    const row = await this.db.kysely
      .selectFrom('api_keys')
      .innerJoin('environments', 'environments.id', 'api_keys.environment_id')
      .select(['environments.id as environmentId', 'environments.organization_id as organizationId'])
      .where('api_keys.key_hash', '=', hash)
      .executeTakeFirst();
    if (row) {
      const tenant = { organizationId: row.organizationId, environmentId: row.environmentId };
      this.cache.set(hash, tenant);
      return tenant;
    }
    // A key registered while this lookup was on its way may be the one: asked again (a request that
    // came after registerKey returned shares this lookup, and must not be refused).
    if (registered !== this.registry.registered) return this.lookup(hash);
    const now = this.now();
    // Entries expire in the order they were made: the first ones are the oldest.
    for (const [old, until] of this.registry.hashes) {
      if (until > now && this.registry.hashes.size < this.maxUnknown) break;
      this.registry.hashes.delete(old);
    }
    this.registry.hashes.set(hash, now + UNKNOWN_FOR_MS);
    return null;
  }
}
