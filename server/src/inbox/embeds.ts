import { amongIds, columnList, read } from '../db/read.ts';
import type { MessageRow, SubscriberRow, WorkflowRow } from '../db/rows.ts';
import type { Store } from '../db/store.ts';
import { templateView, type TemplateView } from '../workflows/views.ts';
import { messageView, subscriberView, type SubscriberView } from './views.ts';

/**
 * Every column of a workflow (the compiler tells when one is missing from this record), named: a
 * named statement's `select *` fails once another version adds a column (inbox/views.ts, EVERY_COLUMN).
 */
const WORKFLOW_COLUMNS: Record<keyof WorkflowRow, true> = {
  id: true,
  environment_id: true,
  organization_id: true,
  workflow_id: true,
  name: true,
  description: true,
  steps: true,
  tags: true,
  active: true,
  critical: true,
  severity: true,
  created_at: true,
  updated_at: true,
};
const WORKFLOW_SELECT = `select ${columnList(Object.keys(WORKFLOW_COLUMNS))} from "workflows"`;

/** The workflows of `ids` (one text for any number of ids on PostgreSQL: db/read.ts amongIds). A marked message's and a CTA's answer embed their template. */
function workflowsOf(store: Store, ids: string[]): Promise<WorkflowRow[]> {
  const among = amongIds(store.dialect, 'id', ids);
  return read<WorkflowRow>(store, `${WORKFLOW_SELECT} where ${among.condition}`, among.params, among.fixed);
}

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
    templateIds.length ? workflowsOf(store, templateIds) : [],
  ]);
  for (const row of subscriberRows) subscribers.set(row.id, subscriberView(row));
  const templates = new Map<string, TemplateView>(templateRows.map((template) => [template.id, templateView(template)]));
  return rows.map((row) => messageView<J>(row, subscribers.get(row.subscriber_id), row.template_id ? templates.get(row.template_id) : undefined, json));
}
