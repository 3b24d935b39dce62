import type { Db } from './db/index.ts';
import { generateKey, registerKey } from './auth.ts';

/** True when the database has no environment yet. */
export async function isFresh(db: Db): Promise<boolean> {
  const row = await db.kysely.selectFrom('environments').select('id').limit(1).executeTakeFirst();
  return !row;
}

/** Creates the demo environment and its data; returns its development key. */
export async function seedDemo(db: Db): Promise<{ key: string }> {
  const key = generateKey();
  await registerKey(db, key, 'demo', 'development');
  return { key };
}
