import { Type, type Static } from '@sinclair/typebox';
import type { App, AppContext } from '../app.ts';
import { unprocessable, type FieldErrors } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Tenant } from '../auth.ts';
import type { Store } from '../engine/types.ts';
import { bool, int, parseJson, toJson } from '../json.ts';
import { controlErrors } from '../engine/controls.ts';
import { STEP_TYPES } from '../engine/types.ts';
import { JsonObject, StringEnum } from '../schemas.ts';
import { templateView, type StoredStep, type WorkflowRow } from '../views.ts';

// Workflows that triggers run (decisions.md, "Beyond the spec"): POST creates one, or updates the
// one with the same workflowId (201 when created, 200 when updated); GET lists the environment's.

const StepBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  type: StringEnum(STEP_TYPES),
  controlValues: Type.Optional(JsonObject),
});

export const WorkflowBody = Type.Object({
  workflowId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$' }),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
  active: Type.Optional(Type.Boolean()),
  critical: Type.Optional(Type.Boolean()),
  steps: Type.Array(StepBody, { maxItems: 20 }),
});
export type WorkflowBody = Static<typeof WorkflowBody>;

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
    steps: steps.map((s) => ({ _id: s._id, stepId: s._id, name: s.name, type: s.type, controlValues: s.controlValues })),
    triggers: templateView(row).triggers,
    _environmentId: row.environment_id,
    _organizationId: row.organization_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Errors of the steps' controlValues (the body schema checked the rest); empty when valid. */
export function workflowErrors(body: WorkflowBody): FieldErrors {
  const errors: FieldErrors = {};
  body.steps.forEach((step, i) => Object.assign(errors, controlErrors(step.type, step.controlValues ?? {}, `steps.${i}.controlValues`)));
  return errors;
}

/**
 * Creates the workflow, or updates the one of the environment with the same workflowId.
 * A step keeps its _id across updates when a step of the same name and type was there before,
 * so messages keep pointing at it (_messageTemplateId).
 */
export async function saveWorkflow(store: Store, tenant: Tenant, body: WorkflowBody, now = new Date()): Promise<{ row: WorkflowRow; created: boolean }> {
  const k = store.kysely;
  const find = () =>
    k
      .selectFrom('workflows')
      .selectAll()
      .where('environment_id', '=', tenant.environmentId)
      .where('workflow_id', '=', body.workflowId)
      .executeTakeFirst();
  const existing = await find();
  const previous = parseJson<StoredStep[]>(existing?.steps, []);
  const ids = new Set<string>();
  const steps: StoredStep[] = body.steps.map((s) => {
    let _id = previous.find((p) => p.name === s.name && p.type === s.type)?._id;
    if (!_id || ids.has(_id)) _id = newId(now.getTime());
    ids.add(_id);
    return { _id, name: s.name, type: s.type, controlValues: s.controlValues ?? {} };
  });
  const iso = now.toISOString();
  const fields = {
    name: body.name,
    description: body.description ?? existing?.description ?? null,
    steps: toJson(steps),
    tags: body.tags ? toJson(body.tags) : (existing?.tags ?? '[]'),
    active: body.active === undefined ? (existing?.active ?? 1) : int(body.active),
    critical: body.critical === undefined ? (existing?.critical ?? 0) : int(body.critical),
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
      workflow_id: body.workflowId,
      created_at: iso,
      ...fields,
    })
    .onConflict((oc) => oc.columns(['environment_id', 'workflow_id']).doUpdateSet(fields))
    .execute();
  return { row: (await find())!, created: true };
}

export function workflowRoutes(app: App, ctx: AppContext) {
  const k = ctx.db.kysely;

  app.post('/v2/workflows', { schema: { body: WorkflowBody } }, async (request, reply) => {
    const body = request.body;
    const errors = workflowErrors(body);
    if (Object.keys(errors).length > 0) {
      const message = Object.entries(errors)
        .map(([field, e]) => `${field} ${e.messages.join('; ')}`)
        .join('; ');
      throw unprocessable(message, errors);
    }

    const { row, created } = await saveWorkflow(ctx.db, request.tenant, body);
    reply.code(created ? 201 : 200);
    return workflowView(row);
  });

  app.get('/v2/workflows', async (request) => {
    const rows = await k
      .selectFrom('workflows')
      .selectAll()
      .where('environment_id', '=', request.tenant.environmentId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(workflowView);
  });
}
