import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { STEP_TYPES } from '../engine/types.ts';
import { JsonObject, StringEnum } from '../schemas.ts';
import { listWorkflows, saveWorkflow, SEVERITIES, workflowView } from '../workflows/workflows.ts';

// Workflows that triggers run (decisions.md, "Beyond the spec"): POST creates one, or updates the
// one with the same workflowId (201 when created, 200 when updated); GET lists the environment's.

const StepBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  type: StringEnum(STEP_TYPES),
  controlValues: Type.Optional(JsonObject),
});

const WorkflowBody = Type.Object({
  workflowId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$' }),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
  active: Type.Optional(Type.Boolean()),
  critical: Type.Optional(Type.Boolean()),
  severity: Type.Optional(StringEnum(SEVERITIES)),
  steps: Type.Array(StepBody, { maxItems: 20 }),
});

const workflows: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app;

  app.post('/v2/workflows', { schema: { body: WorkflowBody } }, async (request, reply) => {
    const { row, created } = await saveWorkflow(db, request.tenant, request.body);
    return reply.code(created ? 201 : 200).send(workflowView(row));
  });

  app.get('/v2/workflows', async (request) => {
    const rows = await listWorkflows(db, request.tenant.environmentId);
    return rows.map(workflowView);
  });
};

export default workflows;
