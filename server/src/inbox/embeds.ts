import type { MessageRow, SubscriberRow } from '../db/rows.ts';
import type { Store } from '../db/store.ts';
import { templateView, type TemplateView } from '../workflows/views.ts';
import { messageView, subscriberView, type SubscriberView } from './views.ts';

/**
 * The Message views of `rows`, with `subscriber` and `template` embedded. They are loaded once for
 * the whole page (one query each at most; none for the subscriber when the caller has it), not per
 * message. `json` says how JSON columns are read (messageView).
 */
export async function loadEmbeds<J = never>(store: Store, rows: MessageRow[], subscriber?: SubscriberRow, json?: Parameters<typeof messageView<J>>[3]) {
  const subscribers = new Map<string, SubscriberView>();
  if (subscriber) subscribers.set(subscriber.id, subscriberView(subscriber));
  const missing = [...new Set(rows.map((row) => row.subscriber_id).filter((id) => !subscribers.has(id)))];
  const templateIds = [...new Set(rows.map((row) => row.template_id).filter((id): id is string => !!id))];
  const [subscriberRows, templateRows] = await Promise.all([
    missing.length ? store.kysely.selectFrom('subscribers').selectAll().where('id', 'in', missing).execute() : [],
    templateIds.length ? store.kysely.selectFrom('workflows').selectAll().where('id', 'in', templateIds).execute() : [],
  ]);
  for (const row of subscriberRows) subscribers.set(row.id, subscriberView(row));
  const templates = new Map<string, TemplateView>(templateRows.map((template) => [template.id, templateView(template)]));
  return rows.map((row) => messageView<J>(row, subscribers.get(row.subscriber_id), row.template_id ? templates.get(row.template_id) : undefined, json));
}
