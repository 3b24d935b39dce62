import type { Tenant } from '../auth.ts';
import type { Store } from '../engine/types.ts';
import { notFound } from '../errors.ts';
import type { SubscriberRow } from '../views.ts';

/** The subscriber `subscriberId` of the request's environment; 404 when there is none. */
export async function findSubscriber(store: Store, tenant: Tenant, subscriberId: string): Promise<SubscriberRow> {
  const row = await store.kysely
    .selectFrom('subscribers')
    .selectAll()
    .where('environment_id', '=', tenant.environmentId)
    .where('subscriber_id', '=', subscriberId)
    .executeTakeFirst();
  if (!row) throw notFound('Subscriber', subscriberId);
  return row;
}
