import { createHash, randomBytes } from 'node:crypto';
import type { Db } from './db/index.ts';
import { newId, nowIso } from './ids.ts';

/** Whom a request speaks for: the API key's environment and its organization. */
export interface Tenant {
  organizationId: string;
  environmentId: string;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function generateKey(): string {
  return 'nk_' + randomBytes(24).toString('hex');
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
  return tenant;
}

/** Parses `NOTIF_API_KEYS="key1=org/env,key2=org/env2"`. */
export function parseKeyList(value: string): { key: string; org: string; env: string }[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = /^([^=\s]+)=([^/\s]+)\/([^/\s]+)$/.exec(entry);
      if (!m) throw new Error(`NOTIF_API_KEYS: '${entry}' is not of the form key=org/env`);
      return { key: m[1]!, org: m[2]!, env: m[3]! };
    });
}

/** Resolves keys to tenants, remembering answers (keys are never deleted while the server runs). */
export class KeyResolver {
  private cache = new Map<string, Tenant | null>();
  constructor(private db: Db) {}

  async resolve(key: string): Promise<Tenant | null> {
    const hash = hashKey(key);
    const cached = this.cache.get(hash);
    if (cached) return cached;
    const row = await this.db.kysely
      .selectFrom('api_keys')
      .innerJoin('environments', 'environments.id', 'api_keys.environment_id')
      .select(['environments.id as environmentId', 'environments.organization_id as organizationId'])
      .where('api_keys.key_hash', '=', hash)
      .executeTakeFirst();
    const tenant = row ? { organizationId: row.organizationId, environmentId: row.environmentId } : null;
    // Unknown keys are not cached, so a key made by `keys create` in another process works at once.
    if (tenant) this.cache.set(hash, tenant);
    return tenant;
  }
}
