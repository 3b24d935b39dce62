import { newId } from '../ids.ts';
import type { Store } from '../db/store.ts';

/** The id of the environment's feed with this identifier, creating the feed on first use. */
export async function feedIdFor(store: Store, environmentId: string, identifier: string, now = new Date()): Promise<string> {
  const find = () =>
    store.kysely
      .selectFrom('feeds')
      .select('id')
      .where('environment_id', '=', environmentId)
      .where('identifier', '=', identifier)
      .executeTakeFirst();
  const found = await find();
  if (found) return found.id;
  // Two runs may create the same feed at once: the unique (environment, identifier) decides.
  await store.kysely
    .insertInto('feeds')
    .values({ id: newId(now.getTime()), environment_id: environmentId, identifier, created_at: now.toISOString() })
    .onConflict((oc) => oc.columns(['environment_id', 'identifier']).doNothing())
    .execute();
  const row = await find();
  if (!row) throw new Error(`feed '${identifier}' could not be created`);
  return row.id;
}
