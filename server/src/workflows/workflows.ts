import type { Tenant } from '../db/keys.ts';
import type { StoredStep, WorkflowRow } from '../db/rows.ts';
import type { Store } from '../db/store.ts';
import { controlErrors } from '../engine/controls.ts';
import type { StepType } from '../engine/types.ts';
import { notFound, unprocessable, type FieldErrors } from '../errors.ts';
import { newId } from '../ids.ts';
import { bool, int, parseJson, toJson } from '../json.ts';
import { CHANNELS } from '../schemas.ts';
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

/** A name as the part of a slug: lower case, runs of other characters as one '-'. */
function slugPart(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '') || 'untitled';
}

/**
 * The workflow as this API returns it: the body it was saved with, plus ids, flags and timestamps,
 * in the shape of Novu's workflow (WorkflowResponseDto): its slug, origin, status, severity and
 * default preferences, and per step its slug, controls and the workflow it belongs to.
 */
export function workflowView(row: WorkflowRow) {
  const steps = parseJson<StoredStep[]>(row.steps, []);
  const active = bool(row.active);
  const critical = bool(row.critical);
  return {
    _id: row.id,
    workflowId: row.workflow_id,
    slug: `${slugPart(row.name)}_wf_${row.id}`,
    name: row.name,
    description: row.description ?? '',
    tags: parseJson<string[]>(row.tags, []),
    active,
    status: active ? 'ACTIVE' : 'INACTIVE',
    critical,
    severity: row.severity ?? 'none',
    // Workflows made through this API (Novu's dashboard-made ones are `novu-cloud`).
    origin: 'external',
    // What a subscriber gets unless they choose otherwise: every channel (a critical workflow's cannot be changed).
    preferences: {
      user: null,
      default: {
        all: { enabled: true, readOnly: critical },
        channels: Object.fromEntries(CHANNELS.map((channel) => [channel, { enabled: true }])),
      },
    },
    isTranslationEnabled: false,
    steps: steps.map((step) => ({
      _id: step._id,
      stepId: step._id,
      name: step.name,
      slug: `${slugPart(step.name)}_st_${step._id}`,
      type: step.type,
      origin: 'external',
      workflowId: row.workflow_id,
      workflowDatabaseId: row.id,
      controls: { values: step.controlValues },
      controlValues: step.controlValues,
      variables: {},
    })),
    triggers: templateView(row).triggers,
    _environmentId: row.environment_id,
    _organizationId: row.organization_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A workflow as a list shows it: the workflow, and the types of its steps once each. */
export function workflowListItem(row: WorkflowRow) {
  const view = workflowView(row);
  return { ...view, stepTypeOverviews: [...new Set(view.steps.map((step) => step.type))] };
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

export const WORKFLOW_ORDER_FIELDS = ['createdAt', 'updatedAt', 'name', 'lastTriggeredAt'] as const;
export const WORKFLOW_STATUSES = ['ACTIVE', 'INACTIVE', 'ERROR'] as const;

/** A search of the environment's workflows, as Novu's `GET /v2/workflows` takes it. */
export interface WorkflowSearch {
  /** Without it, every match. */
  limit?: number;
  offset: number;
  orderBy?: (typeof WORKFLOW_ORDER_FIELDS)[number];
  orderDirection?: 'ASC' | 'DESC';
  /** A substring of the name or the workflowId, any case. */
  query?: string;
  status?: (typeof WORKFLOW_STATUSES)[number][];
  /** Workflows with at least one of these tags. */
  tags?: string[];
}

/**
 * A page of the environment's workflows matching the search, with the number of matches (an
 * environment has few workflows: they are filtered and ordered here). Default order: oldest first;
 * `lastTriggeredAt` (not kept) orders as `updatedAt`.
 */
export async function searchWorkflows(store: Store, environmentId: string, search: WorkflowSearch) {
  const rows = await listWorkflows(store, environmentId);
  const needle = search.query?.toLowerCase();
  const matches = rows.filter((row) => {
    if (needle && !row.name.toLowerCase().includes(needle) && !row.workflow_id.toLowerCase().includes(needle)) return false;
    if (search.status && !search.status.includes(bool(row.active) ? 'ACTIVE' : 'INACTIVE')) return false;
    if (search.tags && !parseJson<string[]>(row.tags, []).some((tag) => search.tags!.includes(tag))) return false;
    return true;
  });
  if (search.orderBy) {
    const key = (row: WorkflowRow) => (search.orderBy === 'name' ? row.name : search.orderBy === 'createdAt' ? row.created_at : row.updated_at);
    matches.sort((a, b) => key(a).localeCompare(key(b)) || a.id.localeCompare(b.id));
    if (search.orderDirection !== 'ASC') matches.reverse();
  } else if (search.orderDirection === 'DESC') {
    matches.reverse();
  }
  const end = search.limit === undefined ? undefined : search.offset + search.limit;
  return { workflows: matches.slice(search.offset, end).map(workflowListItem), totalCount: matches.length };
}

/** The environment's workflow with this workflowId (or _id); 404 when there is none. */
export async function findWorkflow(store: Store, environmentId: string, workflowId: string): Promise<WorkflowRow> {
  const row = await store.kysely
    .selectFrom('workflows')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .where((eb) => eb.or([eb('workflow_id', '=', workflowId), eb('id', '=', workflowId)]))
    .orderBy('workflow_id')
    .executeTakeFirst();
  if (!row) throw notFound('Workflow', workflowId);
  return row;
}

/**
 * Deletes the workflow (404 when there is none): triggers of it are refused from then on. Its
 * notifications and messages stay, as history; runs already under way go on (each job holds its step).
 */
export async function deleteWorkflow(store: Store, environmentId: string, workflowId: string): Promise<void> {
  const row = await findWorkflow(store, environmentId, workflowId);
  await store.kysely.deleteFrom('workflows').where('id', '=', row.id).execute();
}
