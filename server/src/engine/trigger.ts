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
import { advance } from './run.ts';
import { normalizeRecipients, resolveRecipients, type RecipientInput } from './subscribers.ts';
import type { JobOutcome } from './types.ts';
import { inTransaction, type Store } from '../db/store.ts';
import type { JobRow, StoredStep, SubscriberRow, WorkflowRow } from '../db/rows.ts';

export interface TriggerInput {
  /** The workflow's `workflowId` (its trigger identifier). */
  name: string;
  to: string | RecipientInput | (string | RecipientInput)[];
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
  transactionId: string;
  runs: { notificationId: string; subscriberId: string; outcome: JobOutcome }[];
  /** The payload variables the workflow's steps use that the trigger did not send (`x.y`), each once. */
  missingVariables: string[];
}

const INSERT_CHUNK = 200;

/**
 * Triggers a workflow: for each recipient (created or updated as `to` says) one Notification and one
 * Job per workflow step, written in one transaction, every job under this process's lease (see
 * lease.ts: if the process dies, another resumes the runs); then each run goes as far as it can now
 * (in-app steps write their messages; the first step that has to wait stops it, see `advance`),
 * letting the event loop serve other requests between runs. An unknown or inactive workflow is a 422.
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
  if (!bool(workflow.active)) {
    throw unprocessable(`workflow '${input.name}' is not active`, { name: { messages: ['workflow is not active'], value: input.name } });
  }
  const transactionId = input.transactionId ?? randomUUID();
  const recipients = normalizeRecipients(input.to);
  checkBudget(input, recipients.length, parseJson<StoredStep[]>(workflow.steps, []).length);

  const shared = sharedBy(workflow, input, newId(now.getTime()));
  const planned = await inTransaction(store, async (trx) => {
    const subscribers = await resolveRecipients(trx, tenant, recipients, now);
    // The payload once for every run; its rows refer to it (the jobs here keep it, to run their steps).
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
  // The in-app steps at the head of the workflow, for every run at once (fan-out.ts).
  await fanOutInApp(store, workflow, planned.map((run) => ({ jobs: run.jobs as JobRow[], subscriber: run.subscriber })), now);

  const runs: TriggerResult['runs'] = [];
  for (const [i, run] of planned.entries()) {
    if (i > 0) await yieldToLoop(store);
    const outcome = await advance(store, run.notification.id, {
      now,
      jobs: run.jobs as JobRow[],
      workflow,
      subscriber: run.subscriber,
    });
    runs.push({ notificationId: run.notification.id, subscriberId: run.subscriber.subscriber_id, outcome });
  }
  return { transactionId, runs, missingVariables: [...new Set(shared.missing.flat())] };
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
    topics: '[]',
    severity: null,
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
