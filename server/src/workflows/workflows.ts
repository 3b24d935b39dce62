import type { Tenant } from '../db/keys.ts';
import type { StoredStep, WorkflowRow } from '../db/rows.ts';
import type { Store } from '../db/store.ts';
import { controlErrors } from '../engine/controls.ts';
import type { StepType } from '../engine/types.ts';
import { unprocessable, type FieldErrors } from '../errors.ts';
import { newId } from '../ids.ts';
import { bool, int, parseJson, toJson } from '../json.ts';
import { templateView } from './views.ts';

// Workflows that triggers run (decisions.md, "Beyond the spec"): saved by workflowId (created, or
// the environment's one with the same workflowId updated), listed per environment.

/** How urgent a workflow's notifications are; a workflow without one is 'none'. */
export const SEVERITIES = ['high', 'medium', 'low', 'none'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** A workflow as `POST /v2/workflows` takes it (and the demo data writes it). */
export interface WorkflowInput {
  workflowId: string;
  name: string;
  description?: string;
  tags?: string[];
  active?: boolean;
  critical?: boolean;
  severity?: Severity;
  steps: { name: string; type: StepType; controlValues?: Record<string, unknown> }[];
}

/** The workflow as this API returns it: the body it was saved with, plus ids, flags and timestamps. */
export function workflowView(row: WorkflowRow) {
  const steps = parseJson<StoredStep[]>(row.steps, []);
  return {
    _id: row.id,
    workflowId: row.workflow_id,
    name: row.name,
    description: row.description ?? '',
    tags: parseJson<string[]>(row.tags, []),
    active: bool(row.active),
    critical: bool(row.critical),
    severity: row.severity ?? 'none',
    steps: steps.map((step) => ({ _id: step._id, stepId: step._id, name: step.name, type: step.type, controlValues: step.controlValues })),
    triggers: templateView(row).triggers,
    _environmentId: row.environment_id,
    _organizationId: row.organization_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Errors of the steps' controlValues (the body schema checked the rest); empty when valid. */
export function workflowErrors(input: WorkflowInput): FieldErrors {
  const errors: FieldErrors = {};
  input.steps.forEach((step, index) => Object.assign(errors, controlErrors(step.type, step.controlValues ?? {}, `steps.${index}.controlValues`)));
  return errors;
}

/**
 * Creates the workflow, or updates the one of the environment with the same workflowId; 422 when
 * a step's controlValues are not valid. A step keeps its _id across updates when a step of the same
 * name and type was there before, so messages keep pointing at it (_messageTemplateId).
 */
export async function saveWorkflow(store: Store, tenant: Tenant, input: WorkflowInput, now = new Date()): Promise<{ row: WorkflowRow; created: boolean }> {
  const errors = workflowErrors(input);
  if (Object.keys(errors).length > 0) {
    const message = Object.entries(errors)
      .map(([field, error]) => `${field} ${error.messages.join('; ')}`)
      .join('; ');
    throw unprocessable(message, errors);
  }
  const k = store.kysely;
  const find = () =>
    k
      .selectFrom('workflows')
      .selectAll()
      .where('environment_id', '=', tenant.environmentId)
      .where('workflow_id', '=', input.workflowId)
      .executeTakeFirst();
  const existing = await find();
  const previous = parseJson<StoredStep[]>(existing?.steps, []);
  const ids = new Set<string>();
  const steps: StoredStep[] = input.steps.map((step) => {
    let id = previous.find((before) => before.name === step.name && before.type === step.type)?._id;
    if (!id || ids.has(id)) id = newId(now.getTime());
    ids.add(id);
    return { _id: id, name: step.name, type: step.type, controlValues: step.controlValues ?? {} };
  });
  const iso = now.toISOString();
  const fields = {
    name: input.name,
    description: input.description ?? existing?.description ?? null,
    steps: toJson(steps),
    tags: input.tags ? toJson(input.tags) : (existing?.tags ?? '[]'),
    active: input.active === undefined ? (existing?.active ?? 1) : int(input.active),
    critical: input.critical === undefined ? (existing?.critical ?? 0) : int(input.critical),
    severity: input.severity === undefined ? (existing?.severity ?? null) : input.severity,
    updated_at: iso,
  };
  if (existing) {
    await k.updateTable('workflows').set(fields).where('id', '=', existing.id).execute();
    return { row: { ...existing, ...fields }, created: false };
  }
  // Two creates of one workflowId at once: the unique (environment, workflowId) makes the second an update.
  await k
    .insertInto('workflows')
    .values({
      id: newId(now.getTime()),
      environment_id: tenant.environmentId,
      organization_id: tenant.organizationId,
      workflow_id: input.workflowId,
      created_at: iso,
      ...fields,
    })
    .onConflict((oc) => oc.columns(['environment_id', 'workflow_id']).doUpdateSet(fields))
    .execute();
  return { row: (await find())!, created: true };
}

/** The environment's workflows, oldest first. */
export function listWorkflows(store: Store, environmentId: string): Promise<WorkflowRow[]> {
  return store.kysely.selectFrom('workflows').selectAll().where('environment_id', '=', environmentId).orderBy('created_at').orderBy('id').execute();
}
