import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, scryptSync } from 'node:crypto';
import type { Db } from './index.ts';

// Secrets at rest (integration credentials, configurations.inboundWebhookSigningKey): AES-256-GCM
// with a 12-byte random IV per value and the row's identity as additional authenticated data, so a
// sealed value copied into another row or column does not open.
//
// The key: NOTIF_ENCRYPTION_KEY (any string; 32 bytes derived with scrypt and a per-database salt
// kept in `settings.encryption_salt`), or else a random key generated once and kept in
// `settings.encryption_key`, so that a restarted server still opens what it sealed. The fallback
// only keeps secrets out of casual reads of the data (backups, dumps, SQL consoles, the idempotency
// store); a deployment that wants them safe from whoever holds the database sets the variable.
//
// Nothing here logs, and error messages never carry a value.

const PREFIX = 'enc:v1:';
/** AES-GCM's initialization vector: 12 random bytes per value. */
const IV_BYTES = 12;
/** An event id: one AES block, the commit number in its first half and the scope's tag in its second. */
const BLOCK_BYTES = 16;
const SCOPE_TAG_BYTES = 8;
/** A block in base64url, without padding. */
const EVENT_ID = /^[\w-]{22}$/;
const SETTING_KEY = 'encryption_key';
const SETTING_SALT = 'encryption_salt';

/** A scope's event ids (Secrets.eventIds). */
export interface EventIds {
  /** The id of commit number `seq`. */
  seal(seq: number): string;
  /** The commit number of an id of this scope; undefined for anything else. */
  open(id: string): number | undefined;
}

export class Secrets {
  /** The stream ids' own key (derived: one key, one use). */
  readonly #ids: Buffer;

  constructor(private readonly key: Buffer) {
    this.#ids = createHmac('sha256', key).update('notif:stream-ids').digest();
  }

  /**
   * The ids of `scope`'s stream events (a subscriber's): each a commit number `seq` as one AES
   * block with the scope's hash beside it, 22 characters, base64url. Numbers are shared by every
   * environment of the database: in clear, the gap between two of a subscriber's ids would tell how
   * many messages everyone else was sent meanwhile. `open` gives back the number of an id of this
   * scope, and undefined for anything else (another scope's id, a number, garbage).
   */
  eventIds(scope: string): EventIds {
    const tag = createHash('sha256').update(scope).digest().subarray(0, SCOPE_TAG_BYTES);
    const aes = (block: Buffer, decrypt = false) => {
      const cipher = (decrypt ? createDecipheriv : createCipheriv)('aes-256-ecb', this.#ids, null).setAutoPadding(false);
      return Buffer.concat([cipher.update(block), cipher.final()]);
    };
    return {
      seal: (seq) => {
        const block = Buffer.alloc(BLOCK_BYTES);
        block.writeBigUInt64BE(BigInt(seq));
        tag.copy(block, BLOCK_BYTES - SCOPE_TAG_BYTES);
        return aes(block).toString('base64url');
      },
      open: (id) => {
        if (!EVENT_ID.test(id)) return undefined;
        const block = aes(Buffer.from(id, 'base64url'), true);
        const seq = block.readBigUInt64BE();
        const ofThisScope = tag.equals(block.subarray(BLOCK_BYTES - SCOPE_TAG_BYTES));
        return ofThisScope && seq <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(seq) : undefined;
      },
    };
  }

  /** Seals `plaintext`; `context` (for example `integration:<id>:credentials`) must be given again to open it. */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return `${PREFIX}${iv.toString('base64url')}.${tag.toString('base64url')}.${ciphertext.toString('base64url')}`;
  }

  /** Opens a value made by `seal` with the same context; throws (without the value) when it does not open. */
  open(sealed: string, context: string): string {
    if (!isSealed(sealed)) throw new Error('not a sealed value');
    const [iv, tag, ciphertext] = sealed.slice(PREFIX.length).split('.');
    if (iv === undefined || tag === undefined || ciphertext === undefined) throw new Error('malformed sealed value');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`a sealed value (${context}) does not open with this server's encryption key; was NOTIF_ENCRYPTION_KEY changed?`);
    }
  }

  sealJson(value: unknown, context: string): string {
    return this.seal(JSON.stringify(value ?? null), context);
  }

  openJson<T>(sealed: string, context: string): T {
    return JSON.parse(this.open(sealed, context)) as T;
  }
}

export const isSealed = (value: unknown): value is string => typeof value === 'string' && value.startsWith(PREFIX);

const loaded = new WeakMap<Db, Promise<Secrets>>();

/** The Secrets of this database, loading (or creating) its key on first use. */
export function secretsFor(db: Db): Promise<Secrets> {
  let secrets = loaded.get(db);
  if (!secrets) {
    secrets = loadKey(db).then((key) => new Secrets(key));
    // A failed load (database down) is retried on the next call rather than remembered.
    secrets.catch(() => loaded.delete(db));
    loaded.set(db, secrets);
  }
  return secrets;
}

/** AES-256's key length, in bytes. */
const KEY_BYTES = 32;
/** The length of the salt a passphrase is derived with, in bytes. */
const SALT_BYTES = 16;

async function loadKey(db: Db): Promise<Buffer> {
  const passphrase = db.encryptionKey;
  if (passphrase) {
    const salt = await setting(db, SETTING_SALT, () => randomBytes(SALT_BYTES).toString('base64'));
    return scryptSync(passphrase, Buffer.from(salt, 'base64'), KEY_BYTES);
  }
  const stored = await setting(db, SETTING_KEY, () => randomBytes(KEY_BYTES).toString('base64'));
  const key = Buffer.from(stored, 'base64');
  if (key.length !== KEY_BYTES) throw new Error(`settings.${SETTING_KEY} is not a ${KEY_BYTES}-byte base64 key`);
  return key;
}

/** Reads a setting, creating it with `make()` when missing; concurrent first users agree on one value. */
async function setting(db: Db, name: string, make: () => string): Promise<string> {
  await db.kysely
    .insertInto('settings')
    .values({ name, value: make() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.kysely.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}

// --- Integration columns -----------------------------------------------------------------------

const credentialsContext = (integrationId: string) => `integration:${integrationId}:credentials`;
const signingKeyContext = (integrationId: string) => `integration:${integrationId}:inboundWebhookSigningKey`;

/** The `credentials` and `configurations` columns of an integration, sealed as server/db/schema.ts says. */
export function sealIntegration(
  secrets: Secrets,
  integrationId: string,
  credentials: Record<string, unknown>,
  configurations: Record<string, unknown>,
): { credentials: string; configurations: string } {
  const config = { ...configurations };
  if (typeof config.inboundWebhookSigningKey === 'string') {
    config.inboundWebhookSigningKey = secrets.seal(config.inboundWebhookSigningKey, signingKeyContext(integrationId));
  }
  return { credentials: secrets.sealJson(credentials, credentialsContext(integrationId)), configurations: JSON.stringify(config) };
}

/** The plain `credentials` and `configurations` of an integration row (unsealed values pass as they are). */
export function openIntegration(
  secrets: Secrets,
  row: { id: string; credentials: string; configurations: string },
): { credentials: Record<string, unknown>; configurations: Record<string, unknown> } {
  const credentials = isSealed(row.credentials)
    ? secrets.openJson<Record<string, unknown>>(row.credentials, credentialsContext(row.id))
    : (JSON.parse(row.credentials || '{}') as Record<string, unknown>);
  const configurations = JSON.parse(row.configurations || '{}') as Record<string, unknown>;
  if (isSealed(configurations.inboundWebhookSigningKey)) {
    configurations.inboundWebhookSigningKey = secrets.open(configurations.inboundWebhookSigningKey, signingKeyContext(row.id));
  }
  return { credentials: credentials ?? {}, configurations };
}
