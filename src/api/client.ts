// NotifClient: one typed method per endpoint of spec/notification-api.md, plus the extensions of
// spec/decisions.md (trigger, mark-as, workflows). It knows nothing of Lit or the DOM beyond fetch.
// The HTTP layer and the inbox's own endpoints live in request.ts (the elements import only those).
import type {
  Criticality, CreateIntegrationRequest, CreateSubscriberRequest, CredentialsRequest,
  FeedQuery, Integration, IntegrationRequest, MarkAllRequest, MarkAsRequest,
  MessageActionRequest, Notification, NotificationListQuery, NotificationListResponse, Preferences, Subscriber,
  SubscriberSearchQuery, SubscriberSearchResponse, TriggerRequest, TriggerResponse, UnseenCountQuery,
  Workflow, Channel,
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
  messageAction(subscriberId: string, messageId: string, type: string, body: MessageActionRequest, o?: CallOptions) {
    return messageAction(this.options, subscriberId, messageId, type, body, o);
  }

  // 2
  updateIntegration(integrationId: string, body: IntegrationRequest, o?: CallOptions) {
    return this.request<Integration>('PUT', `/v1/integrations/${seg(integrationId)}`, { ...o, body });
  }
  // 3
  getSubscriber(subscriberId: string, o?: CallOptions) {
    return this.request<Subscriber>('GET', `/v2/subscribers/${seg(subscriberId)}`, o);
  }
  // 4
  appendCredentials(subscriberId: string, body: CredentialsRequest, o?: CallOptions) {
    return this.request<Subscriber>('PATCH', `/v1/subscribers/${seg(subscriberId)}/credentials`, { ...o, body });
  }
  // 5
  replaceCredentials(subscriberId: string, body: CredentialsRequest, o?: CallOptions) {
    return this.request<Subscriber>('PUT', `/v1/subscribers/${seg(subscriberId)}/credentials`, { ...o, body });
  }
  // 6
  searchSubscribers(query: SubscriberSearchQuery = {}, o?: CallOptions) {
    return this.request<SubscriberSearchResponse>('GET', '/v2/subscribers', { ...o, query: query as Query });
  }
  // 7: resolves to the number of messages changed
  markAll(subscriberId: string, body: MarkAllRequest, o?: CallOptions) {
    return markAll(this.options, subscriberId, body, o);
  }

  // 8
  createSubscriber(body: CreateSubscriberRequest, query: { failIfExists?: boolean } = {}, o?: CallOptions) {
    return this.request<Subscriber>('POST', '/v2/subscribers', { ...o, body, query });
  }
  // 9
  deleteMessage(messageId: string, o?: CallOptions) {
    return deleteMessage(this.options, messageId, o);
  }

  // 10
  feed(subscriberId: string, query: FeedQuery = {}, o?: CallOptions) {
    return feed(this.options, subscriberId, query, o);
  }

  // 11
  createIntegration(body: CreateIntegrationRequest, o?: CallOptions) {
    return this.request<Integration>('POST', '/v1/integrations', { ...o, body });
  }
  // 12
  deleteMessagesByTransaction(transactionId: string, query: { channel?: Channel } = {}, o?: CallOptions) {
    return this.request<void>('DELETE', `/v1/messages/transaction/${seg(transactionId)}`, { ...o, query });
  }
  // 13
  unseenCount(subscriberId: string, query: UnseenCountQuery = {}, o?: CallOptions) {
    return unseenCount(this.options, subscriberId, query, o);
  }

  // 14
  preferences(subscriberId: string, query: { criticality?: Criticality } = {}, o?: CallOptions) {
    return this.request<Preferences>('GET', `/v2/subscribers/${seg(subscriberId)}/preferences`, { ...o, query });
  }
  // 15
  listIntegrations(o?: CallOptions) {
    return this.request<Integration[]>('GET', '/v1/integrations', o);
  }
  // 16
  getNotification(notificationId: string, o?: CallOptions) {
    return this.request<Notification>('GET', `/v1/notifications/${seg(notificationId)}`, o);
  }
  // 17
  listNotifications(query: NotificationListQuery = {}, o?: CallOptions) {
    return this.request<NotificationListResponse>('GET', '/v1/notifications', { ...o, query: query as Query });
  }
  // 18: true when a run was cancelled, false when nothing was left to cancel
  cancelTrigger(transactionId: string, o?: CallOptions) {
    return this.request<boolean>('DELETE', `/v1/events/trigger/${seg(transactionId)}`, o);
  }

  // extensions (decisions.md "Beyond the spec")
  trigger(body: TriggerRequest, o?: CallOptions) {
    return this.request<TriggerResponse>('POST', '/v1/events/trigger', { ...o, body });
  }
  markAs(subscriberId: string, body: MarkAsRequest, o?: CallOptions) {
    return markAs(this.options, subscriberId, body, o);
  }

  createWorkflow(body: Workflow, o?: CallOptions) {
    return this.request<Workflow>('POST', '/v2/workflows', { ...o, body });
  }
  listWorkflows(o?: CallOptions) {
    return this.request<Workflow[]>('GET', '/v2/workflows', o);
  }
}
