import { randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { Tenant } from '../db/keys.ts';
import type { JobTable, NotificationTable } from '../db/schema.ts';
import { unprocessable } from '../errors.ts';
import { newId } from '../ids.ts';
import { bool, parseJson, toJson } from '../json.ts';
import { missingPayloadVariables } from '../render.ts';
import { CHANNELS } from '../schemas.ts';
import { crashPoint, leaseMs, processWorker, yieldToLoop } from './lease.ts';
import { engineSettings } from './settings.ts';
import { STORED_APART } from '../db/payloads.ts';
import { insertRows } from './bulk.ts';
import { fanOutInApp } from './fan-out.ts';
import { executionDetail } from './jobs.ts';
import { advance, settledOutcome } from './run.ts';
import { normalizeRecipients, resolveRecipients, type RecipientInput } from './subscribers.ts';
import type { JobOutcome } from './types.ts';
import { inTransaction, type Store } from '../db/store.ts';
import type { JobRow, StoredStep, SubscriberRow, TopicRow, WorkflowRow } from '../db/rows.ts';

/** A topic as a trigger's recipient: its subscribers, but for those `exclude` names. */
export interface TopicRecipient {
  type?: 'Topic' | 'Subscriber';
  topicKey: string;
  exclude?: string[];
}

type Recipient = string | RecipientInput | TopicRecipient;

export interface TriggerInput {
  /** The workflow's `workflowId` (its trigger identifier). */
  name: string;
  to: Recipient | Recipient[];
  payload?: Record<string, unknown>;
  overrides?: Record<string, unknown>;
  transactionId?: string;
  /** Accepted for Novu compatibility; not used by the steps yet. */
  actor?: unknown;
}

export interface TriggerOptions {
  /** The clock of the run (the seed triggers in the past); defaults to now. */
  now?: Date;
  /**
   * Called inside the transaction that records the runs, with the trigger's answer: what must be
   * durable together with the runs (the request's idempotency key, so a retry after a crash replays
   * the answer instead of triggering again).
   */
  onRecorded?: (trx: Store, transactionId: string) => Promise<void>;
}

export interface TriggerResult {
  /** `trigger_not_active`: the workflow is inactive, and nothing was done (no transaction, no runs). */
  status: 'processed' | 'trigger_not_active';
  transactionId: string;
  /** Each run's outcome at the answer; empty when the runs are written after it (see `background`). */
  runs: { notificationId: string; subscriberId: string; outcome: JobOutcome }[];
  /** The payload variables the workflow's steps use that the trigger did not send (`x.y`), each once. */
  missingVariables: string[];
  /**
   * What goes on after the answer, settling when it is done: the runs of a trigger to more than
   * RUNS_WRITTEN_BEFORE_ANSWER recipients (recorded, then written), then the runs of the topics'
   * subscribers (see fanOutToTopics). Absent when nothing is left.
   */
  background?: Promise<void>;
}

const isTopic = (recipient: Recipient): recipient is TopicRecipient => typeof recipient === 'object' && 'topicKey' in recipient;

/** Topics' subscribers per page of a background fan-out: one transaction each, the event loop free between two. */
const TOPIC_PAGE = { sqlite: 100, postgres: 500 };

const INSERT_CHUNK = 200;

/**
 * A trigger to at most this many recipients answers once their in-app messages are written, so a
 * read after the answer finds them. A larger one answers once its runs are recorded (durable: a
 * process that dies leaves them to another's scheduler, see lease.ts) and writes them after the
 * answer, as a topic's: its sender does not wait for a hundred subscribers' writes, and the
 * messages reach the streams all the same. One chunk of the fan-out on SQLite (fan-out.ts).
 */
export const RUNS_WRITTEN_BEFORE_ANSWER = 25;

/**
 * Triggers a workflow: for each recipient (created or updated as `to` says) one Notification and one
 * Job per workflow step, written in one transaction, every job under this process's lease (see
 * lease.ts: if the process dies, another resumes the runs); then each run goes as far as it can now
 * (in-app steps write their messages; the first step that has to wait stops it, see `advance`),
 * letting the event loop serve other requests between runs: before the answer for a trigger to at
 * most RUNS_WRITTEN_BEFORE_ANSWER recipients, after it (`background`) for a larger one. An unknown
 * workflow, or an unknown topic in `to`, is a 422; an inactive workflow does nothing (status
 * `trigger_not_active`, as Novu). A topic's subscribers (but for those named directly, excluded, or
 * the actor) get their runs in the background too, page by page, so a topic of thousands stalls no
 * other request.
 */
export async function trigger(store: Store, tenant: Tenant, input: TriggerInput, options: TriggerOptions = {}): Promise<TriggerResult> {
  const now = options.now ?? new Date();
  const workflow = await store.kysely
    .selectFrom('workflows')
    .selectAll()
    .where('environment_id', '=', tenant.environmentId)
    .where('workflow_id', '=', input.name)
    .executeTakeFirst();
  if (!workflow) {
    throw unprocessable(`workflow '${input.name}' not found`, {
      name: { messages: ['must be the workflowId of an existing workflow'], value: input.name },
    });
  }
  if (!bool(workflow.active)) return { status: 'trigger_not_active', transactionId: '', runs: [], missingVariables: [] };
  const entries = Array.isArray(input.to) ? input.to : [input.to];
  const topicRecipients = entries.filter(isTopic);
  const recipients = normalizeRecipients(entries.filter((entry): entry is string | RecipientInput => !isTopic(entry)));
  const topics = await topicsOf(store, tenant, topicRecipients);
  const transactionId = input.transactionId ?? randomUUID();
  const steps = parseJson<StoredStep[]>(workflow.steps, []).length;
  checkBudget(input, recipients.length + (await topicMemberCount(store, topics)), steps);

  const shared = sharedBy(workflow, input, newId(now.getTime()));
  const planned = await inTransaction(store, async (trx) => {
    const subscribers = recipients.length > 0 ? await resolveRecipients(trx, tenant, recipients, now) : [];
    // The payload once for every run (a topic's background runs too); its rows refer to it.
    await trx.kysely
      .insertInto('payloads')
      .values({
        id: shared.payloadId,
        environment_id: tenant.environmentId,
        organization_id: tenant.organizationId,
        transaction_id: transactionId,
        payload: shared.payload,
        overrides: shared.overrides,
        bytes: Buffer.byteLength(shared.payload) + Buffer.byteLength(shared.overrides),
        created_at: now.toISOString(),
      })
      .execute();
    const runs = subscribers.map((subscriber, i) => planRun(tenant, workflow, subscriber, recipients[i]!, shared, transactionId, now));
    await insertChunked(trx, 'notifications', runs.map((r) => ({ ...r.notification, payload: STORED_APART })));
    await insertChunked(trx, 'jobs', runs.flatMap((r) => r.jobs.map((job) => ({ ...job, payload: STORED_APART, overrides: STORED_APART }))));
    await options.onRecorded?.(trx, transactionId);
    return runs.map((r, i) => ({ ...r, subscriber: subscribers[i]! }));
  });
  crashPoint('after-commit');
  const missingVariables = [...new Set(shared.missing.flat())];
  const writtenBeforeAnswer = planned.length <= RUNS_WRITTEN_BEFORE_ANSWER;
  const runs = writtenBeforeAnswer ? await runPlanned(store, workflow, planned, now) : [];
  if (writtenBeforeAnswer && topics.length === 0) return { status: 'processed', transactionId, runs, missingVariables };
  // Not the topics' subscribers already named, excluded, or acting.
  const excluded = new Set([...recipients.map((recipient) => recipient.subscriberId), ...topicRecipients.flatMap((topic) => topic.exclude ?? [])]);
  const actor = typeof input.actor === 'string' ? input.actor : (input.actor as { subscriberId?: unknown } | undefined)?.subscriberId;
  if (typeof actor === 'string') excluded.add(actor);
  const afterTheAnswer = async () => {
    // The answer goes first: the runs are written from the next turn of the event loop on.
    await breathe();
    crashPoint('before-background');
    if (!writtenBeforeAnswer) await runPlanned(store, workflow, planned, now);
    if (topics.length > 0) await fanOutToTopics(store, tenant, workflow, shared, topics, excluded, transactionId, now);
  };
  return { status: 'processed', transactionId, runs, missingVariables, background: afterTheAnswer() };
}

/** Runs recorded runs as far as they go now: the in-app steps at the head of the workflow for all at once (fan-out.ts), then each run on. */
async function runPlanned(store: Store, workflow: WorkflowRow, planned: (ReturnType<typeof planRun> & { subscriber: SubscriberRow })[], now: Date) {
  await fanOutInApp(store, workflow, planned.map((run) => ({ jobs: run.jobs as JobRow[], subscriber: run.subscriber })), now);
  const runs: TriggerResult['runs'] = [];
  let advanced = false;
  for (const run of planned) {
    const jobs = run.jobs as JobRow[];
    // A run the fan-out finished (every step in-app) has nothing left: no turn of the event loop for it.
    let outcome = settledOutcome(jobs);
    if (outcome === undefined) {
      if (advanced) await yieldToLoop(store);
      advanced = true;
      outcome = await advance(store, run.notification.id, { now, jobs, workflow, subscriber: run.subscriber });
    }
    runs.push({ notificationId: run.notification.id, subscriberId: run.subscriber.subscriber_id, outcome });
  }
  return runs;
}

/**
 * Refuses (422) a trigger whose payload and overrides, times its recipients, times its workflow's
 * steps, pass the byte budget (NOTIF_MAX_TRIGGER_BYTES): what the service would write and render
 * for it grows with each, and one trigger must not hold the service for everyone else.
 */
function checkBudget(input: TriggerInput, recipients: number, steps: number) {
  const budget = engineSettings().maxTriggerBytes;
  const bytes = Buffer.byteLength(toJson(input.payload ?? {})) + Buffer.byteLength(toJson(input.overrides ?? {}));
  const total = bytes * recipients * Math.max(1, steps);
  if (total <= budget) return;
  const format = (value: number) => value.toLocaleString('en-US');
  throw unprocessable(
    `payload of ${format(bytes)} bytes x ${recipients} recipients x ${steps} steps = ${format(total)} bytes is past the trigger budget (NOTIF_MAX_TRIGGER_BYTES, ${format(budget)} bytes)`,
    { payload: { messages: [`payload and overrides x recipients x steps must be at most ${format(budget)} bytes (NOTIF_MAX_TRIGGER_BYTES)`], value: `${format(bytes)} bytes` } },
  );
}

/** The topics a trigger names, each once; a 422 naming the first key that is no topic of the environment. */
async function topicsOf(store: Store, tenant: Tenant, recipients: TopicRecipient[]): Promise<TopicRow[]> {
  const keys = [...new Set(recipients.map((recipient) => recipient.topicKey))];
  if (keys.length === 0) return [];
  const rows = await store.kysely.selectFrom('topics').selectAll().where('environment_id', '=', tenant.environmentId).where('key', 'in', keys).execute();
  const missing = keys.find((key) => !rows.some((row) => row.key === key));
  if (missing !== undefined) {
    throw unprocessable(`topic '${missing}' not found`, { to: { messages: [`names topic '${missing}', which does not exist`], value: missing } });
  }
  return rows;
}

/** How many subscribers the topics hold (each once), for the trigger's byte budget. */
async function topicMemberCount(store: Store, topics: TopicRow[]): Promise<number> {
  if (topics.length === 0) return 0;
  const row = await store.kysely
    .selectFrom('topic_subscriptions')
    .select((eb) => eb.fn.count<string | number>('subscriber_id').distinct().as('members'))
    .where('topic_id', 'in', topics.map((topic) => topic.id))
    .executeTakeFirst();
  return Number(row?.members ?? 0);
}

/**
 * The runs of the topics' subscribers (each once, whatever topics they are in; not the `excluded`
 * subscriberIds), in pages in subscriber order: each page's runs recorded in one transaction and run
 * at once, the event loop free between two pages. (A process that stops midway leaves the later
 * pages unmade; the recorded runs are resumed as any run is.)
 */
async function fanOutToTopics(
  store: Store,
  tenant: Tenant,
  workflow: WorkflowRow,
  shared: Shared,
  topics: TopicRow[],
  excluded: Set<string>,
  transactionId: string,
  now: Date,
): Promise<void> {
  const topicIds = topics.map((topic) => topic.id);
  const named = toJson(topics.map((topic) => ({ _topicId: topic.id, topicKey: topic.key })));
  const pageSize = TOPIC_PAGE[store.dialect];
  let after = '';
  for (;;) {
    await breathe();
    const members = await store.kysely
      .selectFrom('subscribers')
      .selectAll()
      .where('id', 'in', (eb) => eb.selectFrom('topic_subscriptions').select('subscriber_id').where('topic_id', 'in', topicIds))
      .where('id', '>', after)
      .orderBy('id')
      .limit(pageSize)
      .execute();
    if (members.length === 0) return;
    after = members.at(-1)!.id;
    const planned = members
      .filter((member) => !excluded.has(member.subscriber_id))
      .map((subscriber) => ({ ...planRun(tenant, workflow, subscriber, { subscriberId: subscriber.subscriber_id }, shared, transactionId, now, named), subscriber }));
    if (planned.length === 0) continue;
    await inTransaction(store, async (trx) => {
      await insertChunked(trx, 'notifications', planned.map((run) => ({ ...run.notification, payload: STORED_APART })));
      await insertChunked(trx, 'jobs', planned.flatMap((run) => run.jobs.map((job) => ({ ...job, payload: STORED_APART, overrides: STORED_APART }))));
    });
    await runPlanned(store, workflow, planned, now);
  }
}

/** Lets the event loop turn (between two pages of a background fan-out). */
const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What every run of a trigger shares: parsed or serialized once per trigger, not once per run. */
interface Shared {
  steps: StoredStep[];
  stepJson: string[];
  channels: string;
  payload: string;
  overrides: string;
  /** By step: the payload variables it uses that the trigger did not send. */
  missing: string[][];
  /** Where the payload and overrides are stored, once (db/payloads.ts). */
  payloadId: string;
}

function sharedBy(workflow: WorkflowRow, input: TriggerInput, payloadId: string): Shared {
  const steps = parseJson<StoredStep[]>(workflow.steps, []);
  const payload = input.payload ?? {};
  return {
    steps,
    stepJson: steps.map((step) => toJson(step)),
    channels: toJson([...new Set(steps.map((s) => s.type).filter((t) => (CHANNELS as readonly string[]).includes(t)))]),
    payload: toJson(payload),
    overrides: toJson(input.overrides ?? {}),
    missing: steps.map((step) => missingPayloadVariables(step.controlValues, payload)),
    payloadId,
  };
}

/** A step's first execution detail when the trigger lacks payload variables it uses (they render empty). */
function missingVariablesDetail(missing: string[], now: Date): string {
  if (missing.length === 0) return '[]';
  const names = missing.map((name) => `{{payload.${name}}}`).join(', ');
  return toJson([executionDetail(now, 'Warning', `The trigger's payload lacks ${names}: rendered empty`)]);
}

/** The rows of one run: its Notification and one pending Job per step, in step order. */
export function planRun(
  tenant: Tenant,
  workflow: WorkflowRow,
  subscriber: SubscriberRow,
  recipient: RecipientInput,
  { steps, stepJson, channels, payload, overrides, missing, payloadId }: Shared,
  transactionId: string,
  now: Date,
  /** JSON of the topics (`[{_topicId, topicKey}]`) the run reached the subscriber through. */
  topics = '[]',
) {
  const iso = now.toISOString();
  const leaseEnd = Date.now() + leaseMs();
  const notificationId = newId(now.getTime());
  const notification = {
    id: notificationId,
    environment_id: tenant.environmentId,
    organization_id: tenant.organizationId,
    subscriber_id: subscriber.id,
    template_id: workflow.id,
    transaction_id: transactionId,
    digested_notification_id: null,
    channels,
    payload,
    controls: '{}',
    to: toJson(recipient),
    tags: workflow.tags,
    topics,
    severity: workflow.severity,
    critical: workflow.critical,
    context_keys: '[]',
    created_at: iso,
    updated_at: iso,
    payload_id: payloadId,
  } satisfies Insertable<NotificationTable>;
  const jobs = steps.map(
    (step, index) =>
      ({
        id: newId(now.getTime()),
        notification_id: notificationId,
        environment_id: tenant.environmentId,
        organization_id: tenant.organizationId,
        subscriber_id: subscriber.id,
        template_id: workflow.id,
        transaction_id: transactionId,
        step_index: index,
        // The stored workflow step ({_id, name, type, controlValues}); views turn it into the spec's Job.step.
        step: stepJson[index]!,
        type: step.type,
        status: 'pending',
        payload,
        overrides,
        payload_id: payloadId,
        digest:
          step.type === 'digest'
            ? toJson({
                digestKey: step.controlValues.digestKey,
                amount: step.controlValues.amount,
                unit: step.controlValues.unit,
                type: 'regular',
                events: [],
                backoff: false,
                updateMode: false,
              })
            : null,
        execution_details: missingVariablesDetail(missing[index]!, now),
        provider_id: null,
        run_at: null,
        // This process runs the steps now; if it dies, another takes them over once the lease ends.
        locked_by: processWorker,
        locked_until: leaseEnd,
        created_at: iso,
        updated_at: iso,
      }) satisfies Insertable<JobTable>,
  );
  return { notification, jobs };
}

async function insertChunked<T extends 'notifications' | 'jobs'>(
  store: Store,
  table: T,
  rows: (T extends 'jobs' ? Insertable<JobTable> : Insertable<NotificationTable>)[],
) {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    if (i > 0) await yieldToLoop(store);
    await insertRows(store, table, rows.slice(i, i + INSERT_CHUNK));
  }
}
