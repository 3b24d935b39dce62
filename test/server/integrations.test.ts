import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { expectErrorBody, KEYS, sqlOn, startServer, TestServer, type Reply } from './helpers.ts';

// Integrations: create (11), update (2), list (15), and their secrets at rest.

function expect422(reply: Reply, ...fields: string[]) {
  const b = expectErrorBody(reply, 422);
  assert.equal(typeof b.errors, 'object', `no errors map: ${JSON.stringify(b)}`);
  for (const f of fields) assert.ok(b.errors[f]?.messages?.length > 0, `errors lacks '${f}': ${JSON.stringify(b.errors)}`);
  return b;
}


/** Runs SQL on the server's own database directly (SQLite file or PostgreSQL), as someone holding a copy of it would. */

describe('POST /v1/integrations (create)', () => {
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  it('201 with the Integration; defaults for name, identifier, active, conditions, configurations', async () => {
    const r = await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const i = r.body;
    assert.match(i._id, /^[0-9a-f]{24}$/);
    assert.match(i._environmentId, /^[0-9a-f]{24}$/);
    assert.match(i._organizationId, /^[0-9a-f]{24}$/);
    assert.equal(i.name, 'sendgrid');
    assert.match(i.identifier, /^sendgrid-[a-z0-9]{6}$/);
    assert.equal(i.providerId, 'sendgrid');
    assert.equal(i.channel, 'email');
    assert.deepEqual(i.credentials, {});
    assert.deepEqual(i.configurations, {});
    assert.equal(i.active, false);
    assert.equal(i.deleted, false);
    assert.equal(i.primary, false);
    assert.deepEqual(i.conditions, []);
    const again = await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email' });
    assert.notEqual(again.body.identifier, i.identifier);
  });

  it('keeps every given field, returns credentials and configurations opened, drops unknown fields', async () => {
    const conditions = [
      { isNegated: false, type: 'BOOLEAN', value: 'AND', children: [{ field: 'tier', value: '2', operator: 'LARGER', on: 'subscriber' }] },
    ];
    const r = await server.post('/v1/integrations', {
      providerId: 'mailgun',
      channel: 'email',
      name: 'Mailgun EU',
      identifier: 'mailgun-eu',
      active: true,
      check: false,
      credentials: { apiKey: 'key-123', domain: 'mg.example.test', from: 'noreply@example.test', secure: true, region: 'eu', bogus: 'dropped' },
      configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: 'whsec_abc', extra: { nested: 1 } },
      conditions,
      deleted: true,
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const i = r.body;
    assert.equal(i.name, 'Mailgun EU');
    assert.equal(i.identifier, 'mailgun-eu');
    assert.equal(i.active, true);
    assert.equal(i.deleted, false);
    assert.deepEqual(i.credentials, { apiKey: 'key-123', domain: 'mg.example.test', from: 'noreply@example.test', secure: true, region: 'eu' });
    assert.deepEqual(i.configurations, { inboundWebhookEnabled: true, inboundWebhookSigningKey: 'whsec_abc', extra: { nested: 1 } });
    assert.deepEqual(i.conditions, conditions);
  });

  it('identifier is unique per environment: 409 on a clash, free in another environment', async () => {
    assert.equal((await server.post('/v1/integrations', { providerId: 'twilio', channel: 'sms', identifier: 'sms-main' })).status, 201);
    const clash = expectErrorBody(await server.post('/v1/integrations', { providerId: 'plivo', channel: 'sms', identifier: 'sms-main' }), 409);
    assert.equal(clash.error, 'Conflict');
    assert.match(clash.message, /sms-main/);
    assert.equal((await server.post('/v1/integrations', { providerId: 'twilio', channel: 'sms', identifier: 'sms-main' }, { key: KEYS.b })).status, 201);
    assert.equal((await server.post('/v1/integrations', { providerId: 'twilio', channel: 'sms', identifier: 'sms-main' }, { key: KEYS.other })).status, 201);
  });

  it('when active, 422 names each missing required credential of the provider', async () => {
    const r = expect422(
      await server.post('/v1/integrations', { providerId: 'mailgun', channel: 'email', active: true, credentials: { apiKey: 'k', from: '  ' } }),
      'credentials.domain', 'credentials.from',
    );
    assert.equal(r.errors['credentials.apiKey'], undefined);
    assert.match(r.message, /domain, from/);
    const twilio = expect422(await server.post('/v1/integrations', { providerId: 'twilio', channel: 'sms', active: true }), 'credentials.accountSid', 'credentials.token', 'credentials.from');
    assert.equal(Object.keys(twilio.errors).length, 3);
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', active: true, credentials: { apiKey: 'SG.x' } }), 'credentials.from');
    expect422(await server.post('/v1/integrations', { providerId: 'fcm', channel: 'push', active: true, credentials: {} }), 'credentials.serviceAccount');
    expect422(await server.post('/v1/integrations', { providerId: 'apns', channel: 'push', active: true, credentials: { secretKey: 'p8' } }), 'credentials.apiKey');
    // complete, inactive, chat and unknown providers need nothing more
    assert.equal((await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', active: true, credentials: { apiKey: 'SG.x', from: 'a@b.test' } })).status, 201);
    assert.equal((await server.post('/v1/integrations', { providerId: 'twilio', channel: 'sms', active: false })).status, 201);
    assert.equal((await server.post('/v1/integrations', { providerId: 'slack', channel: 'chat', active: true })).status, 201);
    assert.equal((await server.post('/v1/integrations', { providerId: 'acme-mailer', channel: 'email', active: true })).status, 201);
  });

  it('_environmentId must be the key\'s own environment; any other is a 404', async () => {
    const own = (await server.post('/v1/integrations', { providerId: 'novu', channel: 'in_app' })).body._environmentId;
    const ok = await server.post('/v1/integrations', { providerId: 'novu', channel: 'in_app', _environmentId: own });
    assert.equal(ok.status, 201);
    const envB = (await server.post('/v1/integrations', { providerId: 'novu', channel: 'in_app' }, { key: KEYS.b })).body._environmentId;
    const before = (await server.get('/v1/integrations')).body.length;
    expectErrorBody(await server.post('/v1/integrations', { providerId: 'novu', channel: 'in_app', _environmentId: envB }), 404);
    expectErrorBody(await server.post('/v1/integrations', { providerId: 'novu', channel: 'in_app', _environmentId: '0123456789abcdef01234567' }), 404);
    assert.equal((await server.get('/v1/integrations')).body.length, before);
  });

  it('422 for missing or mistyped fields, unknown channels, bad bodies', async () => {
    expect422(await server.post('/v1/integrations', { channel: 'email' }), 'providerId');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid' }), 'channel');
    const both = expect422(await server.post('/v1/integrations', {}), 'providerId', 'channel');
    assert.deepEqual(both.errors.channel.messages, ['is required']);
    const ch = expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'fax' }), 'channel');
    assert.deepEqual(ch.errors.channel, { messages: ['must be one of: in_app, email, sms, chat, push'], value: 'fax' });
    expect422(await server.post('/v1/integrations', { providerId: '', channel: 'email' }), 'providerId');
    expect422(await server.post('/v1/integrations', { providerId: 'x'.repeat(65), channel: 'email' }), 'providerId');
    expect422(await server.post('/v1/integrations', { providerId: 'bad provider', channel: 'email' }), 'providerId');
    expect422(await server.post('/v1/integrations', { providerId: 7, channel: 'email' }), 'providerId');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', active: 'true' }), 'active');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', active: 1 }), 'active');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', check: 'no' }), 'check');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', name: '' }), 'name');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', identifier: 'i'.repeat(256) }), 'identifier');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', credentials: [] }), 'credentials');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', credentials: 'k' }), 'credentials');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', credentials: { apiKey: 5 } }), 'credentials.apiKey');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', credentials: { secure: 'yes' } }), 'credentials.secure');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', credentials: { tlsOptions: [] } }), 'credentials.tlsOptions');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', credentials: { apiKey: 'k'.repeat(8193) } }), 'credentials.apiKey');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', conditions: {} }), 'conditions');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', conditions: [{ children: 'x' }] }), 'conditions.0.children');
    expect422(await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', configurations: [] }), 'configurations');
    expect422(
      await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', configurations: { inboundWebhookEnabled: 'yes' } }),
      'configurations.inboundWebhookEnabled',
    );
    expect422(
      await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', configurations: { inboundWebhookSigningKey: 42 } }),
      'configurations.inboundWebhookSigningKey',
    );
    expect422(await server.post('/v1/integrations', [{ providerId: 'sendgrid', channel: 'email' }]), 'body');
    expectErrorBody(await server.request('POST', '/v1/integrations', { raw: '{"providerId":' }), 400);
  });
});

describe('primary integration', () => {
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  const creds = { apiKey: 'k', from: 'a@b.test' };
  const byId = async (key: string = KEYS.a) => new Map((await server.get('/v1/integrations', { key })).body.map((i: any) => [i._id, i]));

  it('the first active integration of a channel in an environment becomes primary; inactive ones never are', async () => {
    const inactive = (await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', credentials: creds })).body;
    const first = (await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', active: true, credentials: creds })).body;
    const second = (await server.post('/v1/integrations', { providerId: 'postmark', channel: 'email', active: true, credentials: creds })).body;
    const sms = (await server.post('/v1/integrations', { providerId: 'acme-sms', channel: 'sms', active: true })).body;
    const inB = (await server.post('/v1/integrations', { providerId: 'postmark', channel: 'email', active: true, credentials: creds }, { key: KEYS.b })).body;
    assert.equal(inactive.primary, false);
    assert.equal(first.primary, true);
    assert.equal(second.primary, false);
    assert.equal(sms.primary, true);
    assert.equal(inB.primary, true);

    // deactivating the primary hands it to the oldest active one left
    const off = await server.put(`/v1/integrations/${first._id}`, { active: false });
    assert.equal(off.status, 200);
    assert.equal(off.body.primary, false);
    let all = await byId();
    assert.equal((all.get(second._id) as any).primary, true);
    assert.equal((all.get(inactive._id) as any).primary, false);
    assert.equal((all.get(sms._id) as any).primary, true);
    // activating another does not take it over
    const on = await server.put(`/v1/integrations/${inactive._id}`, { active: true });
    assert.equal(on.body.primary, false);
    all = await byId();
    assert.deepEqual([...all.values()].filter((i: any) => i.channel === 'email' && i._environmentId === first._environmentId && i.primary).map((i: any) => i._id), [second._id]);
    // the other environment of the organization kept its own primary
    assert.equal(((await byId(KEYS.b)).get(inB._id) as any).primary, true);
  });
});

describe('PUT /v1/integrations/:integrationId (update)', () => {
  let server: TestServer;
  let mailgun: any;
  before(async () => {
    server = await startServer();
    mailgun = (
      await server.post('/v1/integrations', {
        providerId: 'mailgun',
        channel: 'email',
        identifier: 'mg',
        credentials: { apiKey: 'key-1', domain: 'mg.example.test' },
        configurations: { inboundWebhookSigningKey: 'sign-1' },
      })
    ).body;
    await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', identifier: 'taken' });
  });
  after(() => server.dispose());

  it('updates only the given fields; 200 with the Integration', async () => {
    const r = await server.put(`/v1/integrations/${mailgun._id}`, { name: 'Renamed' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.name, 'Renamed');
    assert.equal(r.body.identifier, 'mg');
    assert.deepEqual(r.body.credentials, { apiKey: 'key-1', domain: 'mg.example.test' });
    assert.deepEqual(r.body.configurations, { inboundWebhookSigningKey: 'sign-1' });
    assert.equal(r.body.active, false);
    const same = await server.put(`/v1/integrations/${mailgun._id}`, {});
    assert.equal(same.status, 200);
    assert.equal(same.body.name, 'Renamed');
    const conds = await server.put(`/v1/integrations/${mailgun._id}`, { conditions: [{ isNegated: true, type: 'BOOLEAN', value: 'OR', children: [] }], identifier: 'mg-2' });
    assert.deepEqual(conds.body.conditions, [{ isNegated: true, type: 'BOOLEAN', value: 'OR', children: [] }]);
    assert.equal(conds.body.identifier, 'mg-2');
  });

  it('credentials and configurations replace the stored ones', async () => {
    const r = await server.put(`/v1/integrations/${mailgun._id}`, {
      credentials: { apiKey: 'key-2', domain: 'mg2.example.test', from: 'x@example.test' },
      configurations: { inboundWebhookEnabled: false },
    });
    assert.deepEqual(r.body.credentials, { apiKey: 'key-2', domain: 'mg2.example.test', from: 'x@example.test' });
    assert.deepEqual(r.body.configurations, { inboundWebhookEnabled: false });
  });

  it('activating validates the required credentials (422 naming them); complete ones activate', async () => {
    await server.put(`/v1/integrations/${mailgun._id}`, { credentials: { apiKey: 'key-3' } });
    const refused = expect422(await server.put(`/v1/integrations/${mailgun._id}`, { active: true }), 'credentials.domain', 'credentials.from');
    assert.match(refused.message, /mailgun/);
    assert.equal((await server.get('/v1/integrations')).body.find((i: any) => i._id === mailgun._id).active, false);
    expect422(await server.put(`/v1/integrations/${mailgun._id}`, { active: true, credentials: { apiKey: 'k', domain: 'd' } }), 'credentials.from');
    const ok = await server.put(`/v1/integrations/${mailgun._id}`, { active: true, credentials: { apiKey: 'k', domain: 'd', from: 'f@x.test' } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.active, true);
    assert.equal(ok.body.primary, true);
    // while active, credentials cannot lose a required field
    expect422(await server.put(`/v1/integrations/${mailgun._id}`, { credentials: { apiKey: 'k' } }), 'credentials.domain', 'credentials.from');
    // deactivating needs nothing
    const off = await server.put(`/v1/integrations/${mailgun._id}`, { active: false, credentials: {} });
    assert.equal(off.body.active, false);
    assert.deepEqual(off.body.credentials, {});
  });

  it('409 when the new identifier is taken in the environment', async () => {
    const r = expectErrorBody(await server.put(`/v1/integrations/${mailgun._id}`, { identifier: 'taken' }), 409);
    assert.match(r.message, /taken/);
  });

  it('404 for an unknown integration, one of another environment or organization, or another _environmentId', async () => {
    expectErrorBody(await server.put('/v1/integrations/0123456789abcdef01234567', { name: 'x' }), 404);
    expectErrorBody(await server.put('/v1/integrations/not-an-id', { name: 'x' }), 404);
    expectErrorBody(await server.put(`/v1/integrations/${mailgun._id}`, { name: 'hijack' }, { key: KEYS.b }), 404);
    expectErrorBody(await server.put(`/v1/integrations/${mailgun._id}`, { name: 'hijack' }, { key: KEYS.other }), 404);
    const envB = (await server.post('/v1/integrations', { providerId: 'novu', channel: 'in_app' }, { key: KEYS.b })).body._environmentId;
    expectErrorBody(await server.put(`/v1/integrations/${mailgun._id}`, { _environmentId: envB }), 404);
    const own = await server.put(`/v1/integrations/${mailgun._id}`, { _environmentId: mailgun._environmentId });
    assert.equal(own.status, 200);
    assert.notEqual((await server.get('/v1/integrations')).body.find((i: any) => i._id === mailgun._id).name, 'hijack');
  });

  it('422 for mistyped fields; channel and providerId are not updatable (dropped)', async () => {
    expect422(await server.put(`/v1/integrations/${mailgun._id}`, { active: 'false' }), 'active');
    expect422(await server.put(`/v1/integrations/${mailgun._id}`, { name: 5 }), 'name');
    expect422(await server.put(`/v1/integrations/${mailgun._id}`, { credentials: [] }), 'credentials');
    expect422(await server.put(`/v1/integrations/${mailgun._id}`, { conditions: 'none' }), 'conditions');
    expect422(await server.put(`/v1/integrations/${mailgun._id}`, []), 'body');
    const r = await server.put(`/v1/integrations/${mailgun._id}`, { channel: 'sms', providerId: 'twilio' });
    assert.equal(r.status, 200);
    assert.equal(r.body.channel, 'email');
    assert.equal(r.body.providerId, 'mailgun');
  });
});

describe('GET /v1/integrations (list)', () => {
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  it('lists the integrations of the key\'s organization, every environment of it, and no other', async () => {
    const a1 = (await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', credentials: { apiKey: 'a1' } })).body;
    const b1 = (await server.post('/v1/integrations', { providerId: 'twilio', channel: 'sms' }, { key: KEYS.b })).body;
    const a2 = (await server.post('/v1/integrations', { providerId: 'fcm', channel: 'push' })).body;
    const o1 = (await server.post('/v1/integrations', { providerId: 'slack', channel: 'chat' }, { key: KEYS.other })).body;

    const forA = await server.get('/v1/integrations');
    assert.equal(forA.status, 200);
    assert.ok(Array.isArray(forA.body));
    assert.deepEqual(forA.body.map((i: any) => i._id), [a1._id, b1._id, a2._id]);
    assert.deepEqual(forA.body[0], { ...a1, credentials: { apiKey: '****' } });

    const forB = await server.get('/v1/integrations', { key: KEYS.b });
    assert.deepEqual(forB.body.map((i: any) => i._id), [a1._id, b1._id, a2._id]);

    const forOther = await server.get('/v1/integrations', { key: KEYS.other });
    assert.deepEqual(forOther.body.map((i: any) => i._id), [o1._id]);
    expectErrorBody(await server.get('/v1/integrations', { key: null }), 401);
  });

  it('masks secrets in the list, for every environment of the organization; only create and update answers show them', async () => {
    const credentials = { apiKey: 'SG.live-secret-api-key-WXYZ', secretKey: 'short', from: 'noreply@example.test', region: 'eu', secure: true, tlsOptions: { key: 'PRIVATE-KEY-PEM-ABCD', rejectUnauthorized: false } };
    const configurations = { inboundWebhookEnabled: true, inboundWebhookSigningKey: 'whsec_signing_key_9876' };
    const created = await server.post('/v1/integrations', { providerId: 'mailgun', channel: 'email', identifier: 'masked', credentials, configurations });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body.credentials, credentials, 'the create answer shows what was given');
    assert.deepEqual(created.body.configurations, configurations);
    const masked = {
      apiKey: '****WXYZ',
      secretKey: '****',
      from: 'noreply@example.test',
      region: 'eu',
      secure: true,
      tlsOptions: { key: '****ABCD', rejectUnauthorized: false },
    };
    for (const key of [KEYS.a, KEYS.b]) {
      const listed = (await server.get('/v1/integrations', { key })).body.find((i: any) => i._id === created.body._id);
      assert.deepEqual(listed.credentials, masked, `listed with ${key}`);
      assert.deepEqual(listed.configurations, { inboundWebhookEnabled: true, inboundWebhookSigningKey: '****9876' });
      const text = JSON.stringify((await server.get('/v1/integrations', { key })).body);
      for (const secret of ['SG.live-secret-api-key-WXYZ', 'PRIVATE-KEY-PEM-ABCD', 'whsec_signing_key_9876']) assert.equal(text.includes(secret), false, secret);
    }
    const updated = await server.put(`/v1/integrations/${created.body._id}`, { name: 'Renamed' });
    assert.deepEqual(updated.body.credentials, credentials, 'the update answer shows them');
    // The masked form is never taken for the secret: an update without credentials keeps the stored ones.
    const again = (await server.get('/v1/integrations')).body.find((i: any) => i._id === created.body._id);
    assert.equal(again.credentials.apiKey, '****WXYZ');
  });
});

describe('secrets at rest', () => {
  const SECRET = 'sk_live_PLAINTEXT_must_not_be_stored_1234567890';
  const SIGNING = 'whsec_SIGNING_must_not_be_stored_0987654321';

  function assertNotInFiles(server: TestServer, ...needles: string[]) {
    if (server.postgres) return; // the columns are checked through SQL above
    for (const file of [server.dbPath, `${server.dbPath}-wal`]) {
      if (!existsSync(file)) continue;
      const bytes = readFileSync(file);
      for (const n of needles) assert.equal(bytes.indexOf(n), -1, `${file} contains '${n}'`);
    }
  }

  it('stores credentials and the signing key sealed, everywhere (the idempotency store too); a restart still opens them', async () => {
    const server = await startServer();
    try {
      const created = await server.post(
        '/v1/integrations',
        {
          providerId: 'sendgrid',
          channel: 'email',
          identifier: 'secret-test',
          active: true,
          credentials: { apiKey: SECRET, from: 'a@b.test' },
          configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: SIGNING },
        },
        { headers: { 'idempotency-key': 'create-secret-integration' } },
      );
      assert.equal(created.status, 201);
      assert.equal(created.body.credentials.apiKey, SECRET);
      assert.equal(created.body.configurations.inboundWebhookSigningKey, SIGNING);
      const updated = await server.put(`/v1/integrations/${created.body._id}`, { credentials: { apiKey: `${SECRET}-v2`, from: 'a@b.test' } }, {
        headers: { 'idempotency-key': 'update-secret-integration' },
      });
      assert.equal(updated.body.credentials.apiKey, `${SECRET}-v2`);

      const [row] = await sqlOn(server, 'SELECT credentials, configurations FROM integrations WHERE id = ?', [created.body._id]);
      assert.match(row.credentials, /^enc:v1:/);
      assert.ok(!row.credentials.includes(SECRET));
      assert.ok(!row.credentials.includes('a@b.test'));
      const config = JSON.parse(row.configurations);
      assert.equal(config.inboundWebhookEnabled, true);
      assert.match(config.inboundWebhookSigningKey, /^enc:v1:/);
      assert.ok(!row.configurations.includes(SIGNING));
      const stored = await sqlOn(server, 'SELECT body FROM idempotency_keys');
      assert.equal(stored.length, 2);
      for (const s of stored) {
        assert.match(s.body, /^enc:v1:/);
        assert.ok(!s.body.includes(SECRET));
      }
      // the key lives beside the data when NOTIF_ENCRYPTION_KEY is not set
      const keyRows = await sqlOn(server, "SELECT value FROM settings WHERE name = 'encryption_key'");
      assert.equal(Buffer.from(keyRows[0].value, 'base64').length, 32);
      // no byte of the database (nor of its write-ahead log) holds a secret
      assertNotInFiles(server, SECRET, SIGNING);

      // the replay opens the sealed response
      const replay = await server.post(
        '/v1/integrations',
        {
          providerId: 'sendgrid',
          channel: 'email',
          identifier: 'secret-test',
          active: true,
          credentials: { apiKey: SECRET, from: 'a@b.test' },
          configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: SIGNING },
        },
        { headers: { 'idempotency-key': 'create-secret-integration' } },
      );
      assert.equal(replay.status, 201);
      assert.equal(replay.headers.get('idempotency-replay'), 'true');
      assert.deepEqual(replay.body, created.body);

      await server.restart();
      // An update answer shows the secrets opened (the list masks them).
      const opened = await server.put(`/v1/integrations/${created.body._id}`, {});
      assert.equal(opened.body.credentials.apiKey, `${SECRET}-v2`);
      assert.equal(opened.body.configurations.inboundWebhookSigningKey, SIGNING);
      assertNotInFiles(server, SECRET, SIGNING);
    } finally {
      await server.dispose();
    }
  });

  it('with NOTIF_ENCRYPTION_KEY no key is stored, and the same variable opens the secrets after a restart', async () => {
    const server = await startServer({ NOTIF_ENCRYPTION_KEY: 'correct horse battery staple' });
    try {
      const created = await server.post('/v1/integrations', { providerId: 'twilio', channel: 'sms', credentials: { token: SECRET } });
      assert.equal(created.status, 201);
      const settings = await sqlOn(server, 'SELECT name FROM settings');
      assert.ok(!settings.some((s) => s.name === 'encryption_key'), JSON.stringify(settings));
      assert.ok(settings.some((s) => s.name === 'encryption_salt'));
      assertNotInFiles(server, SECRET);
      await server.restart();
      assert.equal((await server.put(`/v1/integrations/${created.body._id}`, {})).body.credentials.token, SECRET);
    } finally {
      await server.dispose();
    }
  });

  it('a sealed value moved to another row does not open there', async () => {
    const server = await startServer();
    try {
      const one = (await server.post('/v1/integrations', { providerId: 'expo', channel: 'push', credentials: { apiKey: 'one' } })).body;
      const two = (await server.post('/v1/integrations', { providerId: 'expo', channel: 'push', credentials: { apiKey: 'two' } })).body;
      const [sealed] = await sqlOn(server, 'SELECT credentials FROM integrations WHERE id = ?', [one._id]);
      await sqlOn(server, 'UPDATE integrations SET credentials = ? WHERE id = ?', [sealed.credentials, two._id]);
      const r = await server.get('/v1/integrations');
      const b = expectErrorBody(r, 500);
      assert.match(b.errorId, /^[0-9a-f]{16}$/);
      assert.ok(!JSON.stringify(b).includes('one'), 'the error names no secret');
      assert.ok(!server.output().includes('"apiKey"'), 'the log names no secret');
    } finally {
      await server.dispose();
    }
  });
});
