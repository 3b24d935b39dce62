import { randomInt } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { App, AppContext } from '../app.ts';
import type { IntegrationTable } from '../db/schema.ts';
import { conflict, HttpError, notFound, type FieldErrors } from '../errors.ts';
import { newId, nowIso } from '../ids.ts';
import { int, toJson } from '../json.ts';
import { Channel } from '../schemas.ts';
import { openIntegration, sealIntegration, secretsFor } from '../secrets.ts';
import { integrationView, type IntegrationRow } from '../views.ts';

// Integrations: create (11), update (2), list (15). Create and update act in the key's environment
// (another environment's integration is a 404); the list shows the key's whole organization, as
// decisions.md says. Credentials and the inbound webhook signing key are sealed at rest
// (server/secrets.ts). The create and update answers return them as given; every other answer (the
// list, which every environment of the organization reads) masks them: `****` and, for a secret of
// 12 characters or more, its last 4. They are never logged.

const Str = (maxLength = 8192) => Type.Optional(Type.String({ maxLength }));

/** The spec's Integration credentials; unknown fields are dropped. */
const IntegrationCredentials = Type.Object(
  {
    apiKey: Str(), user: Str(), secretKey: Str(65536), domain: Str(), password: Str(), host: Str(), port: Str(),
    region: Str(), accountSid: Str(), messageProfileId: Str(), token: Str(), from: Str(), senderName: Str(),
    projectName: Str(), applicationId: Str(), clientId: Str(), baseUrl: Str(), webhookUrl: Str(), redirectUrl: Str(),
    serviceAccount: Str(65536), ipPoolName: Str(), apiKeyRequestHeader: Str(), secretKeyRequestHeader: Str(),
    idPath: Str(), datePath: Str(), apiToken: Str(), authenticationTokenKey: Str(), instanceId: Str(), alertUid: Str(),
    title: Str(), imageUrl: Str(), state: Str(), externalLink: Str(), channelId: Str(), phoneNumberIdentification: Str(),
    accessKey: Str(), appSid: Str(), senderId: Str(), AppIOBaseUrl: Str(),
    secure: Type.Optional(Type.Boolean()),
    requireTls: Type.Optional(Type.Boolean()),
    ignoreTls: Type.Optional(Type.Boolean()),
    hmac: Type.Optional(Type.Boolean()),
    authenticateByToken: Type.Optional(Type.Boolean()),
    tlsOptions: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
type IntegrationCredentials = Static<typeof IntegrationCredentials>;
type CredentialKey = keyof IntegrationCredentials;

const Filter = Type.Object(
  {
    isNegated: Type.Optional(Type.Boolean()),
    type: Str(64),
    value: Str(64),
    children: Type.Optional(
      Type.Array(
        Type.Object(
          { field: Str(255), value: Str(1024), operator: Str(64), on: Str(64) },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
  },
  { additionalProperties: false },
);

/** Free-form, but the two named fields are typed; other keys are kept as given. */
const Configurations = Type.Object(
  {
    inboundWebhookEnabled: Type.Optional(Type.Boolean()),
    inboundWebhookSigningKey: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: true },
);

const NonBlank = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '\\S' });
const ProviderId = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' });

const CreateIntegrationBody = Type.Object(
  {
    providerId: ProviderId,
    channel: Channel,
    name: Type.Optional(NonBlank(255)),
    identifier: Type.Optional(NonBlank(255)),
    _environmentId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    credentials: Type.Optional(IntegrationCredentials),
    active: Type.Optional(Type.Boolean()),
    /** Accepted for compatibility; this service does not call providers to check them. */
    check: Type.Optional(Type.Boolean()),
    conditions: Type.Optional(Type.Array(Filter, { maxItems: 50 })),
    configurations: Type.Optional(Configurations),
  },
  { additionalProperties: false },
);

// Every field of a create, all optional, but the provider and the channel, which stay as created.
const UpdateIntegrationBody = Type.Partial(Type.Omit(CreateIntegrationBody, ['providerId', 'channel']), { additionalProperties: false });

/** Credentials that name things rather than grant access: shown as stored. The others are masked. */
const PLAIN_CREDENTIALS = new Set<string>([
  'domain', 'host', 'port', 'region', 'accountSid', 'messageProfileId', 'from', 'senderName', 'projectName',
  'applicationId', 'clientId', 'baseUrl', 'redirectUrl', 'ipPoolName', 'apiKeyRequestHeader', 'secretKeyRequestHeader',
  'idPath', 'datePath', 'instanceId', 'alertUid', 'title', 'imageUrl', 'state', 'externalLink', 'channelId',
  'phoneNumberIdentification', 'senderId', 'AppIOBaseUrl',
]);

/** `****`, then the last 4 characters of a secret long enough for them to give nothing away. */
export function maskSecret(value: unknown): unknown {
  if (typeof value === 'boolean' || value === null || value === undefined) return value;
  if (typeof value === 'string' && value.length >= 12) return `****${value.slice(-4)}`;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskSecret(v)]));
  }
  return '****';
}

function maskCredentials(credentials: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(credentials).map(([k, v]) => [k, PLAIN_CREDENTIALS.has(k) ? v : maskSecret(v)]));
}

function maskConfigurations(configurations: Record<string, unknown>): Record<string, unknown> {
  if (configurations.inboundWebhookSigningKey === undefined) return configurations;
  return { ...configurations, inboundWebhookSigningKey: maskSecret(configurations.inboundWebhookSigningKey) };
}

const IntegrationIdParam = Type.Object({ integrationId: Type.String({ minLength: 1, maxLength: 64 }) });

/**
 * Credentials an active integration of a known provider must have (by the spec's credential names).
 * Providers not listed here require nothing.
 */
export const REQUIRED_CREDENTIALS: Record<string, readonly CredentialKey[]> = {
  // email
  sendgrid: ['apiKey', 'from'],
  mailgun: ['apiKey', 'domain', 'from'],
  mailjet: ['apiKey', 'secretKey', 'from'],
  postmark: ['apiKey', 'from'],
  resend: ['apiKey', 'from'],
  mandrill: ['apiKey', 'from'],
  sendinblue: ['apiKey', 'from'],
  brevo: ['apiKey', 'from'],
  sparkpost: ['apiKey', 'from'],
  ses: ['apiKey', 'secretKey', 'region', 'from'],
  nodemailer: ['host', 'port', 'from'],
  // sms
  twilio: ['accountSid', 'token', 'from'],
  plivo: ['accountSid', 'token', 'from'],
  sns: ['apiKey', 'secretKey', 'region'],
  nexmo: ['apiKey', 'secretKey', 'from'],
  telnyx: ['apiKey', 'from'],
  messagebird: ['accessKey', 'from'],
  // chat: slack, discord, msteams... post to the subscriber's own webhook: nothing required here
  // push
  fcm: ['serviceAccount'],
  apns: ['secretKey', 'apiKey', 'projectName', 'applicationId'], // .p8 key, key id, team id, bundle id
  expo: ['apiKey'],
  'one-signal': ['applicationId', 'apiKey'],
  pushpad: ['apiKey', 'applicationId'],
  'pusher-beams': ['instanceId', 'secretKey'],
  'push-webhook': ['webhookUrl'],
};

/** 422 naming every required credential the provider lacks. */
function checkRequiredCredentials(providerId: string, credentials: Record<string, unknown>) {
  const missing = (REQUIRED_CREDENTIALS[providerId] ?? []).filter((field) => {
    const v = credentials[field];
    return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
  });
  if (missing.length === 0) return;
  const errors: FieldErrors = {};
  for (const field of missing) {
    errors[`credentials.${field}`] = { messages: ['is required when the integration is active'], value: credentials[field] ?? null };
  }
  throw new HttpError(
    422,
    `An active ${providerId} integration needs credentials: ${missing.join(', ')} (missing)`,
    errors,
  );
}

/** `_environmentId` may only name the key's own environment; any other is a 404, whether it exists or not. */
function checkEnvironment(given: string | undefined, environmentId: string) {
  if (given !== undefined && given !== environmentId) throw notFound('Environment', given);
}

const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const defaultIdentifier = (providerId: string) =>
  `${providerId}-${Array.from({ length: 6 }, () => ALNUM[randomInt(ALNUM.length)]).join('')}`;

function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

export function integrationRoutes(app: App, ctx: AppContext) {
  const k = ctx.db.kysely;

  /** The integration; its secrets opened only for the create and update answers, masked otherwise. */
  async function view(row: IntegrationRow, reveal = false) {
    const opened = openIntegration(await secretsFor(ctx.db), row);
    if (reveal) return integrationView(row, opened.credentials, opened.configurations);
    return integrationView(row, maskCredentials(opened.credentials), maskConfigurations(opened.configurations));
  }

  /**
   * Keeps one primary among the active integrations of a channel in an environment: an inactive
   * integration is never primary, and when no active one is, the first active one (oldest) becomes it.
   */
  async function settlePrimary(environmentId: string, channel: string) {
    await k.transaction().execute(async (trx) => {
      await trx
        .updateTable('integrations')
        .set({ primary: 0 })
        .where('environment_id', '=', environmentId)
        .where('channel', '=', channel)
        .where('active', '=', 0)
        .where('primary', '=', 1)
        .execute();
      const current = await trx
        .selectFrom('integrations')
        .select('id')
        .where('environment_id', '=', environmentId)
        .where('channel', '=', channel)
        .where('active', '=', 1)
        .where('primary', '=', 1)
        .executeTakeFirst();
      if (current) return;
      const first = await trx
        .selectFrom('integrations')
        .select('id')
        .where('environment_id', '=', environmentId)
        .where('channel', '=', channel)
        .where('active', '=', 1)
        .orderBy('created_at')
        .orderBy('id')
        .executeTakeFirst();
      if (first) await trx.updateTable('integrations').set({ primary: 1 }).where('id', '=', first.id).execute();
    });
  }

  async function findIntegration(environmentId: string, integrationId: string): Promise<IntegrationRow> {
    const row = await k
      .selectFrom('integrations')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('id', '=', integrationId)
      .executeTakeFirst();
    if (!row) throw notFound('Integration', integrationId);
    return row;
  }

  // 11. Create integration.
  app.post(
    '/v1/integrations',
    { schema: { body: CreateIntegrationBody } },
    async (request, reply) => {
      const { organizationId, environmentId } = request.tenant;
      const body = request.body;
      checkEnvironment(body._environmentId, environmentId);
      const credentials: Record<string, unknown> = { ...(body.credentials ?? {}) };
      const active = body.active ?? false;
      if (active) checkRequiredCredentials(body.providerId, credentials);

      const secrets = await secretsFor(ctx.db);
      const now = nowIso();
      let row: IntegrationRow | undefined;
      for (let attempt = 0; attempt < 5 && !row; attempt++) {
        const id = newId();
        const sealed = sealIntegration(secrets, id, credentials, body.configurations ?? {});
        const candidate: IntegrationRow = {
          id,
          environment_id: environmentId,
          organization_id: organizationId,
          name: body.name ?? body.providerId,
          identifier: body.identifier ?? defaultIdentifier(body.providerId),
          provider_id: body.providerId,
          channel: body.channel,
          credentials: sealed.credentials,
          configurations: sealed.configurations,
          conditions: toJson(body.conditions ?? []),
          active: int(active),
          primary: 0,
          created_at: now,
          updated_at: now,
        };
        const inserted = await k
          .insertInto('integrations')
          .values(candidate)
          .onConflict((oc) => oc.columns(['environment_id', 'identifier']).doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) row = candidate;
        else if (body.identifier !== undefined) {
          throw conflict(`An integration with identifier '${body.identifier}' already exists in this environment`);
        }
      }
      if (!row) throw conflict('Could not find a free identifier; give one');
      if (active) await settlePrimary(environmentId, row.channel);
      return reply.code(201).send(await view(await findIntegration(environmentId, row.id), true));
    },
  );

  // 2. Update integration: every field optional; `credentials` and `configurations` replace the stored ones.
  app.put(
    '/v1/integrations/:integrationId',
    {
      schema: { params: IntegrationIdParam, body: UpdateIntegrationBody },
    },
    async (request) => {
      const { environmentId } = request.tenant;
      const body = request.body;
      const existing = await findIntegration(environmentId, request.params.integrationId);
      checkEnvironment(body._environmentId, environmentId);
      const secrets = await secretsFor(ctx.db);
      const current = openIntegration(secrets, existing);
      const credentials = body.credentials ? { ...body.credentials } : current.credentials;
      const configurations = body.configurations ?? current.configurations;
      const active = body.active ?? existing.active === 1;
      if (active) checkRequiredCredentials(existing.provider_id, credentials);

      const sealed = sealIntegration(secrets, existing.id, credentials, configurations);
      const changes: Partial<IntegrationTable> = {
        credentials: sealed.credentials,
        configurations: sealed.configurations,
        active: int(active),
        updated_at: nowIso(),
      };
      if (body.name !== undefined) changes.name = body.name;
      if (body.identifier !== undefined) changes.identifier = body.identifier;
      if (body.conditions !== undefined) changes.conditions = toJson(body.conditions);
      try {
        await k.updateTable('integrations').set(changes).where('id', '=', existing.id).execute();
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw conflict(`An integration with identifier '${body.identifier}' already exists in this environment`);
        }
        throw err;
      }
      if (active !== (existing.active === 1)) await settlePrimary(environmentId, existing.channel);
      return view(await findIntegration(environmentId, existing.id), true);
    },
  );

  // 15. List integrations of the key's organization (all its environments).
  app.get('/v1/integrations', async (request) => {
    const rows = await k
      .selectFrom('integrations')
      .selectAll()
      .where('organization_id', '=', request.tenant.organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return Promise.all(rows.map((row) => view(row)));
  });
}

