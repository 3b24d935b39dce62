import type { Selectable } from 'kysely';
import type { IntegrationTable, JobTable, MessageTable, NotificationTable, SubscriberTable, TopicSubscriptionTable, TopicTable, WorkflowTable } from './schema.ts';

// Rows as the database returns them, shared by the routes, the domain and the engine.

export type SubscriberRow = Selectable<SubscriberTable>;
export type WorkflowRow = Selectable<WorkflowTable>;
export type MessageRow = Selectable<MessageTable>;
export type IntegrationRow = Selectable<IntegrationTable>;
export type NotificationRow = Selectable<NotificationTable>;
export type JobRow = Selectable<JobTable>;
export type TopicRow = Selectable<TopicTable>;
export type TopicSubscriptionRow = Selectable<TopicSubscriptionTable>;

/** A workflow step as stored (workflows.steps, jobs.step): the shape `POST /v2/workflows` takes, with an `_id` added. */
export interface StoredStep {
  _id: string;
  name: string;
  type: 'in_app' | 'email' | 'sms' | 'chat' | 'push' | 'delay' | 'digest';
  controlValues: Record<string, unknown>;
}
