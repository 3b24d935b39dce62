import type { MessageRow, SubscriberRow, WorkflowRow } from '../db/rows.ts';
import { bool, parseJson } from '../json.ts';

// A message as the subscriber notifications family shows it: the InboxNotificationDto of Novu's
// published SDK (@novu/api). The SDK validates every answer: an optional field it types as a string
// refuses null, so an absent value is left out, except the dates it allows as null.

interface Button {
  type?: string;
  content?: string;
  url?: string;
}

interface Cta {
  data?: { url?: string; target?: string };
  action?: { status?: string; buttons?: Button[]; result?: { type?: string } };
}

/** What a family item shows of a message's workflow. */
export function familyWorkflowView(row: WorkflowRow) {
  return {
    id: row.id,
    identifier: row.workflow_id,
    name: row.name,
    critical: bool(row.critical),
    tags: parseJson<string[]>(row.tags, []),
    severity: row.severity ?? 'none',
  };
}

type WorkflowView = ReturnType<typeof familyWorkflowView>;

/** Keys whose value is undefined are left out of the JSON. */
const omitEmpty = <T>(value: T | null | undefined): T | undefined => (value === null || value === '' ? undefined : (value ?? undefined));

function actionView(cta: Cta, type: 'primary' | 'secondary') {
  const button = cta.action?.buttons?.find((candidate) => candidate.type === type);
  if (!button) return undefined;
  const completed = cta.action?.status === 'done' && cta.action?.result?.type === type;
  return {
    label: button.content ?? '',
    isCompleted: completed,
    ...(button.url ? { redirect: { url: button.url } } : {}),
  };
}

/** The family's item for a message of `subscriber`, its workflow given when it has one. */
export function familyItemView(row: MessageRow, subscriber: SubscriberRow, workflow: WorkflowView | undefined) {
  const cta = parseJson<Cta>(row.cta, {});
  const blocks = parseJson<{ content?: string }[] | string>(row.content, []);
  const body = typeof blocks === 'string' ? blocks : blocks.map((block) => block.content ?? '').join('');
  const redelivered = parseJson<string[]>(row.redelivered_at, []);
  const data = parseJson<Record<string, unknown> | null>(row.data, null);
  const url = cta.data?.url;
  return {
    id: row.id,
    transactionId: row.transaction_id ?? '',
    subject: omitEmpty(row.subject),
    body,
    to: {
      id: subscriber.id,
      subscriberId: subscriber.subscriber_id,
      firstName: omitEmpty(subscriber.first_name),
      lastName: omitEmpty(subscriber.last_name),
      avatar: omitEmpty(subscriber.avatar),
    },
    isRead: bool(row.read),
    isSeen: bool(row.seen),
    isArchived: bool(row.archived),
    isSnoozed: row.snoozed_until !== null,
    snoozedUntil: row.snoozed_until,
    deliveredAt: [row.delivered_at, ...redelivered],
    createdAt: row.created_at,
    readAt: row.read ? row.last_read_date : null,
    firstSeenAt: row.seen ? row.last_seen_date : null,
    archivedAt: row.archived_at,
    avatar: omitEmpty(row.avatar),
    primaryAction: actionView(cta, 'primary'),
    secondaryAction: actionView(cta, 'secondary'),
    channelType: row.channel,
    tags: parseJson<string[]>(row.tags, []),
    ...(data ? { data } : {}),
    ...(url ? { redirect: { url, ...(cta.data?.target ? { target: cta.data.target } : {}) } } : {}),
    workflow,
    severity: row.severity ?? 'none',
  };
}

export type FamilyItem = ReturnType<typeof familyItemView>;
