import type { StoredStep, WorkflowRow } from '../db/rows.ts';
import { bool, parseJson } from '../json.ts';

// Workflows as the spec's resource shapes: the template a message or notification embeds, its steps.

/**
 * The spec's Step (inside a message's or notification's template) for a stored step. `metadata` only
 * for a delay or digest step: Novu's SDK takes a step's metadata only with its `type` and unit.
 */
export function stepView(step: StoredStep, workflowId: string) {
  const controls = step.controlValues ?? {};
  const waits = step.type === 'delay' || step.type === 'digest';
  return {
    _id: step._id,
    uuid: step._id,
    name: step.name,
    _templateId: workflowId,
    active: true,
    shouldStopOnFail: false,
    template: { type: step.type, ...controls },
    filters: [],
    ...(waits ? { metadata: waitMetadata(step) } : {}),
    replyCallback: { active: false },
    variants: [],
  };
}

/** The metadata of a delay or digest step, from its controls. */
export function waitMetadata(step: StoredStep) {
  const controls = step.controlValues ?? {};
  return {
    amount: controls.amount,
    unit: controls.unit,
    ...(step.type === 'digest' ? { digestKey: controls.digestKey } : {}),
    type: 'regular',
  };
}

/** The spec's Workflow template for a stored workflow. */
export function templateView(row: WorkflowRow) {
  const steps = parseJson<StoredStep[]>(row.steps, []);
  const variables = new Set<string>();
  for (const s of steps) {
    for (const m of JSON.stringify(s.controlValues ?? {}).matchAll(/\{\{\s*payload\.([\w.]+)\s*\}\}/g)) {
      variables.add(m[1]!);
    }
  }
  const channels = new Set(steps.map((s) => s.type));
  return {
    _id: row.id,
    name: row.name,
    description: row.description ?? '',
    active: bool(row.active),
    draft: false,
    critical: bool(row.critical),
    preferenceSettings: {
      email: channels.has('email'),
      sms: channels.has('sms'),
      in_app: channels.has('in_app'),
      chat: channels.has('chat'),
      push: channels.has('push'),
    },
    tags: parseJson<string[]>(row.tags, []),
    steps: steps.map((s) => stepView(s, row.id)),
    _organizationId: row.organization_id,
    _creatorId: row.organization_id,
    _environmentId: row.environment_id,
    _notificationGroupId: row.environment_id,
    triggers: [
      {
        type: 'event',
        identifier: row.workflow_id,
        variables: [...variables].map((name) => ({ name })),
        subscriberVariables: [],
      },
    ],
    deleted: false,
    // Strings, empty while the workflow exists (Novu's SDK requires both).
    deletedAt: '',
    deletedBy: '',
    notificationGroup: {
      _id: row.environment_id,
      name: 'General',
      _environmentId: row.environment_id,
      _organizationId: row.organization_id,
    },
    data: {},
    workflowIntegrationStatus: {},
  };
}

export type TemplateView = ReturnType<typeof templateView>;
