import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { STEP_TYPES } from '../engine/types.ts';
import { JsonObject, StringEnum, StringList } from '../schemas.ts';
import {
  deleteWorkflow,
  findWorkflow,
  saveWorkflow,
  searchWorkflows,
  SEVERITIES,
  WORKFLOW_ORDER_FIELDS,
  WORKFLOW_STATUSES,
  workflowView,
} from '../workflows/workflows.ts';

// Workflows that triggers run (decisions.md, "Beyond the spec"), in the shape of Novu's workflow
// (workflows/workflows.ts): POST creates one, or updates the one with the same workflowId (201
// either way: Novu's SDK takes no other status); GET lists them (`{workflows, totalCount}`), or
// gets one; PUT replaces one's definition; DELETE deletes it (204). Other fields Novu's SDK sends
// (`__source`, `isTranslationEnabled`, `preferences`, `payloadSchema`...) are taken and have no effect.

const StepBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  type: StringEnum(STEP_TYPES),
  controlValues: Type.Optional(JsonObject),
});

const WorkflowId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$' });

const WorkflowBody = Type.Object({
  workflowId: WorkflowId,
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
  active: Type.Optional(Type.Boolean()),
  critical: Type.Optional(Type.Boolean()),
  severity: Type.Optional(StringEnum(SEVERITIES)),
  steps: Type.Array(StepBody, { maxItems: 20 }),
});

/** PUT's body: the definition, its workflowId from the path. */
const UpdateBody = Type.Omit(WorkflowBody, ['workflowId']);

const WorkflowParams = Type.Object({ workflowId: Type.String({ minLength: 1, maxLength: 128 }) });

/** The most workflows a list page holds; without `limit`, all. */
const MAX_PAGE = 100;

const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE })),
  offset: Type.Integer({ minimum: 0, default: 0 }),
  orderBy: Type.Optional(StringEnum(WORKFLOW_ORDER_FIELDS)),
  orderDirection: Type.Optional(StringEnum(['ASC', 'DESC'] as const)),
  query: Type.Optional(Type.String({ maxLength: 255 })),
  status: Type.Optional(Type.Array(StringEnum(WORKFLOW_STATUSES), { maxItems: WORKFLOW_STATUSES.length })),
  tags: Type.Optional(StringList({ maxItems: 50 })),
});

const workflows: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  app.post('/v2/workflows', { schema: { body: WorkflowBody } }, async (request, reply) => {
    const { row } = await saveWorkflow(db, request.tenant, request.body);
    return reply.code(201).send(workflowView(row));
  });

  app.get('/v2/workflows', { schema: { querystring: ListQuery } }, async (request) => {
    return searchWorkflows(db, request.tenant.environmentId, request.query);
  });

  app.get('/v2/workflows/:workflowId', { schema: { params: WorkflowParams } }, async (request) => {
    return workflowView(await findWorkflow(db, request.tenant.environmentId, request.params.workflowId));
  });

  app.put('/v2/workflows/:workflowId', { schema: { params: WorkflowParams, body: UpdateBody } }, async (request) => {
    const existing = await findWorkflow(db, request.tenant.environmentId, request.params.workflowId);
    const { row } = await saveWorkflow(db, request.tenant, { ...request.body, workflowId: existing.workflow_id });
    return workflowView(row);
  });

  app.delete('/v2/workflows/:workflowId', { schema: { params: WorkflowParams } }, async (request, reply) => {
    await deleteWorkflow(db, request.tenant.environmentId, request.params.workflowId);
    return reply.code(204).send();
  });
};

export default workflows;
