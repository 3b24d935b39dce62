// The resources of spec/notification-api.md and the request/response shapes of spec/decisions.md.
// Types only: no DOM or Node types, so both the browser code and the server may import this file.
// Fields the spec lists are optional unless the service always sends them; free-form objects are
// `Record<string, unknown>`.

export type Channel = 'in_app' | 'email' | 'sms' | 'chat' | 'push';
export type Json = Record<string, unknown>;

export type ChatPushProviderId =
  | 'slack' | 'discord' | 'msteams' | 'mattermost' | 'ryver' | 'zulip' | 'grafana-on-call' | 'getstream'
  | 'rocket-chat' | 'whatsapp-business' | 'chat-webhook' | 'service-slack' | 'fcm' | 'apns' | 'expo'
  | 'one-signal' | 'pushpad' | 'push-webhook' | 'pusher-beams' | 'appio';

export interface ChannelCredentials {
  webhookUrl?: string;
  channel?: string;
  deviceTokens?: string[];
  alertUid?: string;
  title?: string;
  imageUrl?: string;
  state?: string;
  externalUrl?: string;
}

/** An entry of `Subscriber.channels`. */
export interface ChannelCredentialEntry {
  providerId: ChatPushProviderId | (string & {});
  integrationIdentifier?: string;
  credentials: ChannelCredentials;
  _integrationId?: string;
}

export interface Subscriber {
  _id: string;
  subscriberId: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
  avatar?: string;
  locale?: string;
  timezone?: string;
  channels?: ChannelCredentialEntry[];
  topics?: string[];
  isOnline?: boolean;
  lastOnlineAt?: string;
  __v?: number;
  data?: Json;
  _organizationId?: string;
  _environmentId?: string;
  deleted?: boolean;
  createdAt?: string;
  updatedAt?: string;
}

export interface FilterChild {
  field?: string;
  value?: string;
  operator?: string;
  on?: string;
}

export interface Filter {
  isNegated?: boolean;
  type?: string;
  value?: string;
  children?: FilterChild[];
}

export interface StepMetadata {
  amount?: number;
  unit?: string;
  digestKey?: string;
  type?: string;
  backoff?: boolean;
  backoffAmount?: number;
  backoffUnit?: string;
  updateMode?: boolean;
}

export interface StepVariant {
  _id?: string;
  uuid?: string;
  name?: string;
  _templateId?: string;
  _parentId?: string;
  active?: boolean;
  shouldStopOnFail?: boolean;
  template?: Json;
  filters?: Filter[];
  metadata?: StepMetadata;
  replyCallback?: { active?: boolean; url?: string };
}

export interface Step extends StepVariant {
  variants?: StepVariant[];
}

export interface Trigger {
  type: string;
  identifier: string;
  variables?: { name: string }[];
  subscriberVariables?: { name: string }[];
}

export interface NotificationGroup {
  _id?: string;
  name?: string;
  _environmentId?: string;
  _organizationId?: string;
  _parentId?: string;
}

/** The workflow template embedded in a Message. */
export interface WorkflowTemplate {
  _id: string;
  name?: string;
  description?: string;
  active?: boolean;
  draft?: boolean;
  critical?: boolean;
  preferenceSettings?: Partial<Record<Channel, boolean>>;
  tags?: string[];
  steps?: Step[];
  _organizationId?: string;
  _creatorId?: string;
  _environmentId?: string;
  _notificationGroupId?: string;
  _parentId?: string;
  triggers?: Trigger[];
  deleted?: boolean;
  deletedAt?: string;
  deletedBy?: string;
  notificationGroup?: NotificationGroup;
  data?: Json;
  workflowIntegrationStatus?: Json;
}

export interface ContentBlock {
  type?: string;
  content?: string;
  url?: string;
  styles?: { textAlign?: string };
}

export type ActionStatus = 'pending' | 'done';
export type ButtonType = 'primary' | 'secondary';

export interface CtaButton {
  type: ButtonType | (string & {});
  content: string;
  resultContent?: string;
  /** Where the button leads once pressed (this service's extension: an action's `redirect.url`). */
  url?: string;
}

export interface MessageAction {
  status?: ActionStatus | (string & {});
  buttons?: CtaButton[];
  result?: { payload?: Json; type?: string };
}

export interface Cta {
  type?: string;
  data?: { url?: string };
  action?: MessageAction;
}

export interface Message {
  _id: string;
  _templateId?: string;
  _environmentId?: string;
  _messageTemplateId?: string;
  _organizationId?: string;
  _notificationId?: string;
  _subscriberId?: string;
  subscriber?: Subscriber;
  template?: WorkflowTemplate;
  templateIdentifier?: string;
  createdAt: string;
  updatedAt?: string;
  deliveredAt?: string[];
  lastSeenDate?: string;
  lastReadDate?: string;
  /** Content blocks per the spec; a real Novu server sends the in-app body as a string. */
  content?: string | ContentBlock[];
  transactionId?: string;
  subject?: string;
  channel?: Channel | (string & {});
  read: boolean;
  seen: boolean;
  snoozedUntil?: string;
  email?: string;
  phone?: string;
  directWebhookUrl?: string;
  providerId?: string;
  deviceTokens?: string[];
  title?: string;
  /** Added by this repository's server (the in_app step's avatar); untrusted. */
  avatar?: string;
  cta?: Cta;
  _feedId?: string;
  status?: string;
  errorId?: string;
  errorText?: string;
  payload?: Json;
  overrides?: Json;
  contextKeys?: string[];
}

export interface IntegrationCredentials {
  apiKey?: string; user?: string; secretKey?: string; domain?: string; password?: string; host?: string;
  port?: string; region?: string; accountSid?: string; messageProfileId?: string; token?: string; from?: string;
  senderName?: string; projectName?: string; applicationId?: string; clientId?: string; baseUrl?: string;
  webhookUrl?: string; redirectUrl?: string; serviceAccount?: string; ipPoolName?: string;
  apiKeyRequestHeader?: string; secretKeyRequestHeader?: string; idPath?: string; datePath?: string;
  apiToken?: string; authenticationTokenKey?: string; instanceId?: string; alertUid?: string; title?: string;
  imageUrl?: string; state?: string; externalLink?: string; channelId?: string; phoneNumberIdentification?: string;
  accessKey?: string; appSid?: string; senderId?: string; AppIOBaseUrl?: string;
  secure?: boolean; requireTls?: boolean; ignoreTls?: boolean; hmac?: boolean; authenticateByToken?: boolean;
  tlsOptions?: Json;
}

export interface Integration {
  _id: string;
  _environmentId?: string;
  _organizationId?: string;
  name?: string;
  identifier?: string;
  providerId: string;
  channel: Channel;
  credentials?: IntegrationCredentials;
  configurations?: { inboundWebhookEnabled?: boolean; inboundWebhookSigningKey?: string } & Json;
  active?: boolean;
  deleted?: boolean;
  deletedAt?: string;
  deletedBy?: string;
  primary?: boolean;
  conditions?: Filter[];
}

export interface ExecutionDetail {
  _id: string;
  createdAt?: string;
  status?: string;
  detail?: string;
  isRetry?: boolean;
  isTest?: boolean;
  providerId?: string;
  raw?: string;
  source?: string;
}

export interface JobDigest {
  digestKey?: string;
  amount?: number;
  unit?: string;
  type?: string;
  events?: Json[];
  backoff?: boolean;
  backoffAmount?: number;
  backoffUnit?: string;
  updateMode?: boolean;
  timed?: {
    atTime?: string;
    weekDays?: string[];
    monthDays?: number[];
    ordinal?: string;
    ordinalValue?: string;
    monthlyType?: string;
    cronExpression?: string;
    untilDate?: string;
  };
}

export interface JobStep {
  _id?: string;
  _templateId?: string;
  name?: string;
  _parentId?: string;
  active?: boolean;
  replyCallback?: Json;
  controlVariables?: Json;
  metadata?: Json;
  issues?: Json;
  template?: Json;
  filters?: Filter[];
  variants?: JobStep[];
}

export interface Job {
  _id: string;
  type?: string;
  digest?: JobDigest;
  executionDetails?: ExecutionDetail[];
  step?: JobStep;
  overrides?: { workflowId?: string; stepId?: string };
  payload?: Json;
  providerId?: string;
  status?: string;
  updatedAt?: string;
  scheduleExtensionsCount?: number;
}

export interface Notification {
  _id: string;
  _environmentId?: string;
  _organizationId?: string;
  _subscriberId?: string;
  _templateId?: string;
  _digestedNotificationId?: string;
  transactionId?: string;
  createdAt?: string;
  updatedAt?: string;
  channels?: Channel[];
  subscriber?: { firstName?: string; subscriberId?: string; _id?: string; lastName?: string; email?: string; phone?: string };
  template?: { _id?: string; name?: string; origin?: string; triggers?: Trigger[] };
  jobs?: Job[];
  payload?: Json;
  controls?: Json;
  to?: Json;
  tags?: string[];
  topics?: { _topicId?: string; topicKey?: string }[];
  severity?: string;
  critical?: boolean;
  contextKeys?: string[];
}

// ---- requests and responses (decisions.md) ----

export type MarkAs = 'read' | 'seen' | 'unread' | 'unseen';

/** The decisions.md error body. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  timestamp?: string;
  path?: string;
  errorId?: string;
  errors?: Record<string, { messages: string[]; value: unknown }>;
}

/** Endpoint 1. */
export interface MessageActionRequest {
  status: ActionStatus;
  payload?: Json;
}

/** Endpoints 4 and 5. */
export interface CredentialsRequest {
  providerId: ChatPushProviderId;
  integrationIdentifier?: string;
  credentials: ChannelCredentials;
}

/** Endpoint 6. */
export interface SubscriberSearchQuery {
  after?: string;
  before?: string;
  limit?: number;
  orderDirection?: 'ASC' | 'DESC';
  orderBy?: string;
  includeCursor?: boolean;
  email?: string;
  name?: string;
  phone?: string;
  subscriberId?: string;
}

export interface SubscriberSearchResponse {
  data: Subscriber[];
  next: string | null;
  previous: string | null;
  totalCount: number;
  totalCountCapped?: boolean;
}

/** Endpoint 7. */
export interface MarkAllRequest {
  markAs: MarkAs;
  feedIdentifier?: string | string[];
}

/** Endpoint 8. */
export interface CreateSubscriberRequest {
  subscriberId: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
  avatar?: string;
  timezone?: string;
  locale?: string;
  data?: Json;
}

export interface DeleteMessageResponse {
  acknowledged: boolean;
  status: string;
}

/** Endpoint 10. `payload` is the partial payload object; the client base64-encodes its JSON. */
export interface FeedQuery {
  page?: number;
  limit?: number;
  read?: boolean;
  seen?: boolean;
  payload?: Json;
  feedIdentifier?: string | string[];
}

export interface FeedResponse {
  data: Message[];
  totalCount: number;
  hasMore: boolean;
  pageSize: number;
  page: number;
}

/** Endpoints 2 and 11. */
export interface IntegrationRequest {
  providerId?: string;
  channel?: Channel;
  name?: string;
  identifier?: string;
  _environmentId?: string;
  credentials?: IntegrationCredentials;
  active?: boolean;
  check?: boolean;
  conditions?: Filter[];
  configurations?: Json;
}

export interface CreateIntegrationRequest extends IntegrationRequest {
  providerId: string;
  channel: Channel;
}

/** Endpoint 13. */
export interface UnseenCountQuery {
  seen?: boolean;
  limit?: number;
}

export interface UnseenCountResponse {
  count: number;
}

/** Endpoint 14. */
export type Criticality = 'critical' | 'nonCritical' | 'all';

export interface PreferenceChannels {
  email?: boolean;
  sms?: boolean;
  in_app?: boolean;
  chat?: boolean;
  push?: boolean;
}

export interface Preferences {
  global: { enabled: boolean; channels: PreferenceChannels };
  workflows: {
    enabled: boolean;
    channels: PreferenceChannels;
    overrides: { channel: string; source: string }[];
    workflow: { slug: string; identifier: string; name: string };
  }[];
}

/** Endpoint 17. */
export interface NotificationListQuery {
  channels?: Channel[];
  templates?: string | string[];
  emails?: string | string[];
  search?: string;
  subscriberIds?: string | string[];
  severity?: string | string[];
  page?: number;
  limit?: number;
  transactionId?: string;
  topicKey?: string;
  contextKeys?: string[];
  after?: string;
  before?: string;
}

export interface NotificationListResponse {
  data: Notification[];
  hasMore: boolean;
  pageSize: number;
  page: number;
}

// ---- extensions (decisions.md "Beyond the spec") ----

export type TriggerRecipient = string | ({ subscriberId: string } & Omit<CreateSubscriberRequest, 'subscriberId'>);

export interface TriggerRequest {
  name: string;
  to: TriggerRecipient | TriggerRecipient[];
  payload?: Json;
  overrides?: Json;
  transactionId?: string;
  actor?: TriggerRecipient;
}

export interface TriggerResponse {
  acknowledged: boolean;
  status: string;
  transactionId: string;
}

export type WorkflowStepType = Channel | 'delay' | 'digest';

export interface WorkflowAction {
  label: string;
  redirect?: { url: string };
}

/** An in_app step's `controlValues`; other step types carry their own free-form values. */
export type InAppControlValues = {
  subject?: string;
  body?: string;
  avatar?: string;
  redirect?: { url: string };
  primaryAction?: WorkflowAction;
  secondaryAction?: WorkflowAction;
  feedIdentifier?: string;
};

export interface WorkflowStep {
  name: string;
  type: WorkflowStepType;
  controlValues?: InAppControlValues & Json;
}

/** A list of workflows (GET /v2/workflows), as Novu's SDK reads it. */
export interface WorkflowList {
  workflows: Workflow[];
  totalCount: number;
}

export interface Workflow {
  workflowId: string;
  name: string;
  steps: WorkflowStep[];
  _id?: string;
  [key: string]: unknown;
}

export interface MarkAsRequest {
  messageId: string | string[];
  markAs: MarkAs;
}
