// NotifClient: one typed method per endpoint of spec/notification-api.md, plus the extensions of
// spec/decisions.md (trigger, mark-as, workflows). It knows nothing of Lit or the DOM beyond fetch.
// The HTTP layer and the inbox's own endpoints live in request.ts (the elements import only those).
import type {
  Criticality, CreateIntegrationRequest, CreateSubscriberRequest, CredentialsRequest,
  FeedQuery, Integration, IntegrationRequest, MarkAllRequest, MarkAsRequest,
  MessageActionRequest, Notification, NotificationListQuery, NotificationListResponse, Preferences, Subscriber,
  SubscriberSearchQuery, SubscriberSearchResponse, TriggerRequest, TriggerResponse, UnseenCountQuery,
  Workflow, WorkflowList, Channel,
} from './types.ts';
import {
  deleteMessage, feed, markAll, markAs, messageAction, request, unseenCount,
  type CallOptions, type NotifClientOptions, type Query, type RequestInit2,
} from './request.ts';

export {
  NotifApiError, newIdempotencyKey, encodePayload, unwrap, request,
  type CallOptions, type NotifClientOptions, type Query,
} from './request.ts';

const seg = encodeURIComponent;

export class NotifClient {
  readonly options: Readonly<NotifClientOptions>;

  constructor(options: NotifClientOptions) {
    this.options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
  }

  /** One HTTP call: auth, idempotency key for mutations, query arrays as repeated params, envelope, errors. */
  request<T>(method: string, path: string, init: RequestInit2 = {}): Promise<T> {
    return request<T>(this.options, method, path, init);
  }

  // 1
  messageAction(subscriberId: string, messageId: string, type: string, body: MessageActionRequest, options?: CallOptions) {
    return messageAction(this.options, subscriberId, messageId, type, body, options);
  }

  // 2
  updateIntegration(integrationId: string, body: IntegrationRequest, options?: CallOptions) {
    return this.request<Integration>('PUT', `/v1/integrations/${seg(integrationId)}`, { ...options, body });
  }
  // 3
  getSubscriber(subscriberId: string, options?: CallOptions) {
    return this.request<Subscriber>('GET', `/v2/subscribers/${seg(subscriberId)}`, options);
  }
  // 4
  appendCredentials(subscriberId: string, body: CredentialsRequest, options?: CallOptions) {
    return this.request<Subscriber>('PATCH', `/v1/subscribers/${seg(subscriberId)}/credentials`, { ...options, body });
  }
  // 5
  replaceCredentials(subscriberId: string, body: CredentialsRequest, options?: CallOptions) {
    return this.request<Subscriber>('PUT', `/v1/subscribers/${seg(subscriberId)}/credentials`, { ...options, body });
  }
  // 6
  searchSubscribers(query: SubscriberSearchQuery = {}, options?: CallOptions) {
    return this.request<SubscriberSearchResponse>('GET', '/v2/subscribers', { ...options, query: query as Query });
  }
  // 7: resolves to the number of messages changed
  markAll(subscriberId: string, body: MarkAllRequest, options?: CallOptions) {
    return markAll(this.options, subscriberId, body, options);
  }

  // 8
  createSubscriber(body: CreateSubscriberRequest, query: { failIfExists?: boolean } = {}, options?: CallOptions) {
    return this.request<Subscriber>('POST', '/v2/subscribers', { ...options, body, query });
  }
  // 9
  deleteMessage(messageId: string, options?: CallOptions) {
    return deleteMessage(this.options, messageId, options);
  }

  // 10
  feed(subscriberId: string, query: FeedQuery = {}, options?: CallOptions) {
    return feed(this.options, subscriberId, query, options);
  }

  // 11
  createIntegration(body: CreateIntegrationRequest, options?: CallOptions) {
    return this.request<Integration>('POST', '/v1/integrations', { ...options, body });
  }
  // 12
  deleteMessagesByTransaction(transactionId: string, query: { channel?: Channel } = {}, options?: CallOptions) {
    return this.request<void>('DELETE', `/v1/messages/transaction/${seg(transactionId)}`, { ...options, query });
  }
  // 13
  unseenCount(subscriberId: string, query: UnseenCountQuery = {}, options?: CallOptions) {
    return unseenCount(this.options, subscriberId, query, options);
  }

  // 14
  preferences(subscriberId: string, query: { criticality?: Criticality } = {}, options?: CallOptions) {
    return this.request<Preferences>('GET', `/v2/subscribers/${seg(subscriberId)}/preferences`, { ...options, query });
  }
  // 15
  listIntegrations(options?: CallOptions) {
    return this.request<Integration[]>('GET', '/v1/integrations', options);
  }
  // 16
  getNotification(notificationId: string, options?: CallOptions) {
    return this.request<Notification>('GET', `/v1/notifications/${seg(notificationId)}`, options);
  }
  // 17
  listNotifications(query: NotificationListQuery = {}, options?: CallOptions) {
    return this.request<NotificationListResponse>('GET', '/v1/notifications', { ...options, query: query as Query });
  }
  // 18: true when a run was cancelled, false when nothing was left to cancel
  cancelTrigger(transactionId: string, options?: CallOptions) {
    return this.request<boolean>('DELETE', `/v1/events/trigger/${seg(transactionId)}`, options);
  }

  // extensions (decisions.md "Beyond the spec")
  trigger(body: TriggerRequest, options?: CallOptions) {
    return this.request<TriggerResponse>('POST', '/v1/events/trigger', { ...options, body });
  }
  markAs(subscriberId: string, body: MarkAsRequest, options?: CallOptions) {
    return markAs(this.options, subscriberId, body, options);
  }

  createWorkflow(body: Workflow, options?: CallOptions) {
    return this.request<Workflow>('POST', '/v2/workflows', { ...options, body });
  }
  /** The environment's workflows, in Novu's shape: `{workflows, totalCount}`. */
  listWorkflows(options?: CallOptions) {
    return this.request<WorkflowList>('GET', '/v2/workflows', options);
  }
}
