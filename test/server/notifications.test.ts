import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase } from '../../server/src/db/index.ts';
import { expectErrorBody, KEYS, startServer, type TestServer } from './helpers.ts';

// Endpoints 16, 17 and 18 over real HTTP. Runs are made through the public API (POST /v2/workflows,
// POST /v1/events/trigger). Severity, topics and context keys cannot be set by a trigger yet, so the
// tests of those filters write them into the server's own database beside it.

const UNKNOWN_ID = '0123456789abcdef01234567';
const CANCELABLE = ['pending', 'queued', 'delayed', 'running'];

interface Created {
  workflows: Record<string, string>;
  /** notification _id by transactionId */
  notifications: Record<string, string>;
}

async function createWorkflow(server: TestServer, workflowId: string, steps: unknown[], key: string = KEYS.a): Promise<string> {
  const r = await server.post('/v2/workflows', { workflowId, name: `Workflow ${workflowId}`, tags: ['t1'], steps }, { key });
  assert.ok(r.status === 201 || r.status === 200, `create workflow ${workflowId}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body._id;
}

async function trigger(server: TestServer, body: Record<string, unknown>, key: string = KEYS.a): Promise<string> {
  const r = await server.post('/v1/events/trigger', body, { key });
  assert.equal(r.status, 201, `trigger ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
  return r.body.transactionId;
}

async function list(server: TestServer, query: Record<string, any> = {}, key: string = KEYS.a) {
  const r = await server.get('/v1/notifications', { query, key });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as { data: any[]; hasMore: boolean; pageSize: number; page: number };
}

const inApp = (subject: string) => ({ name: `${subject} in-app`, type: 'in_app', controlValues: { subject, body: 'Hello {{payload.name}}' } });

describe('notifications (endpoints 16, 17, 18)', () => {
  let server: TestServer;
  const made: Created = { workflows: {}, notifications: {} };
  const order: string[] = []; // transactionIds in the order they were triggered

  before(async () => {
    server = await startServer();
    made.workflows.welcome = await createWorkflow(server, 'welcome', [inApp('Welcome')]);
    made.workflows.reminder = await createWorkflow(server, 'reminder', [
      inApp('First'),
      { name: 'wait', type: 'delay', controlValues: { amount: 1, unit: 'hours' } },
      inApp('Second'),
    ]);
    made.workflows.alerts = await createWorkflow(server, 'alerts', [inApp('Alert'), { name: 'mail', type: 'email', controlValues: { subject: 'Alert', body: 'x' } }]);
    const runs: [string, Record<string, unknown>][] = [
      ['tx-welcome-alice', { name: 'welcome', to: { subscriberId: 'alice', email: 'Alice@Example.test', firstName: 'Alice', lastName: 'A' }, payload: { name: 'Alice' } }],
      ['tx-welcome-bob', { name: 'welcome', to: { subscriberId: 'bob', email: 'bob@example.test', phone: '+15550100' }, payload: { name: 'Bob' } }],
      ['tx-reminder-alice', { name: 'reminder', to: 'alice', payload: { name: 'Alice' } }],
      ['tx-alerts-bob', { name: 'alerts', to: ['bob'], payload: { level: 3 }, overrides: { note: 'o' } }],
      ['tx-welcome-carol', { name: 'welcome', to: 'carol' }],
    ];
    for (const [transactionId, body] of runs) {
      await trigger(server, { ...body, transactionId });
      order.push(transactionId);
      await new Promise((r) => setTimeout(r, 5)); // distinct createdAt, so the order is certain
    }
    // Another environment of the same organization, and another organization, each with their own run.
    await createWorkflow(server, 'welcome', [inApp('Staging')], KEYS.b);
    await trigger(server, { name: 'welcome', to: 'alice', transactionId: 'tx-staging' }, KEYS.b);
    await createWorkflow(server, 'welcome', [inApp('Globex')], KEYS.other);
    await trigger(server, { name: 'welcome', to: 'alice', transactionId: 'tx-globex' }, KEYS.other);

    for (const n of (await list(server, { limit: 50 })).data) made.notifications[n.transactionId] = n._id;
  });
  after(() => server.dispose());

  describe('GET /v1/notifications/:notificationId (16)', () => {
    it('returns the Notification with its jobs, subscriber and template', async () => {
      const id = made.notifications['tx-welcome-alice']!;
      const r = await server.get(`/v1/notifications/${id}`);
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /application\/json/);
      const n = r.body;
      assert.equal(n._id, id);
      assert.equal(n.transactionId, 'tx-welcome-alice');
      assert.equal(n._templateId, made.workflows.welcome);
      assert.match(n._environmentId, /^[0-9a-f]{24}$/);
      assert.match(n._organizationId, /^[0-9a-f]{24}$/);
      assert.match(n._subscriberId, /^[0-9a-f]{24}$/);
      assert.deepEqual(n.channels, ['in_app']);
      assert.deepEqual(n.subscriber, {
        _id: n._subscriberId,
        subscriberId: 'alice',
        firstName: 'Alice',
        lastName: 'A',
        email: 'Alice@Example.test',
      });
      assert.equal(n.template._id, made.workflows.welcome);
      assert.equal(n.template.name, 'Workflow welcome');
      assert.equal(typeof n.template.origin, 'string');
      assert.equal(n.template.triggers[0].type, 'event');
      assert.equal(n.template.triggers[0].identifier, 'welcome');
      assert.deepEqual(n.template.triggers[0].variables, [{ name: 'name' }]);
      assert.deepEqual(n.payload, { name: 'Alice' });
      assert.deepEqual(n.controls, {});
      assert.equal(n.to.subscriberId, 'alice');
      assert.deepEqual(n.tags, ['t1']);
      assert.deepEqual(n.topics, []);
      assert.equal(n.severity, 'none');
      assert.equal(n.critical, false);
      assert.deepEqual(n.contextKeys, []);
      assert.ok(!Number.isNaN(Date.parse(n.createdAt)) && !Number.isNaN(Date.parse(n.updatedAt)));

      assert.equal(n.jobs.length, 1);
      const job = n.jobs[0];
      assert.match(job._id, /^[0-9a-f]{24}$/);
      assert.equal(job.type, 'in_app');
      assert.equal(job.status, 'completed');
      assert.deepEqual(job.payload, { name: 'Alice' });
      assert.equal(job.scheduleExtensionsCount, 0);
      assert.ok(!Number.isNaN(Date.parse(job.updatedAt)));
      assert.ok(Array.isArray(job.executionDetails) && job.executionDetails.length >= 1);
      const detail = job.executionDetails.at(-1);
      for (const field of ['_id', 'createdAt', 'status', 'detail', 'source']) assert.equal(typeof detail[field], 'string', field);
      assert.equal(typeof detail.isRetry, 'boolean');
      assert.equal(typeof detail.isTest, 'boolean');
      assert.equal(job.step.name, 'Welcome in-app');
      assert.equal(job.step._templateId, made.workflows.welcome);
      assert.equal(job.step.active, true);
      assert.deepEqual(job.step.controlVariables, { subject: 'Welcome', body: 'Hello {{payload.name}}' });
      assert.deepEqual(job.step.filters, []);
      assert.deepEqual(job.step.variants, []);
      assert.equal(typeof job.step.metadata, 'object');
      assert.equal(job.overrides.workflowId, 'welcome');
      assert.equal(job.overrides.stepId, job.step._id);
    });

    it('lists a run\'s jobs in step order, with the digest and overrides of each', async () => {
      const r = await server.get(`/v1/notifications/${made.notifications['tx-reminder-alice']}`);
      assert.equal(r.status, 200);
      const jobs = r.body.jobs;
      assert.deepEqual(jobs.map((j: any) => j.type), ['in_app', 'delay', 'in_app']);
      assert.deepEqual(jobs.map((j: any) => j.step.name), ['First in-app', 'wait', 'Second in-app']);
      assert.equal(jobs[0].status, 'completed');
      assert.deepEqual(jobs[1].step.metadata, { amount: 1, unit: 'hours', type: 'regular' });
      assert.ok(CANCELABLE.includes(jobs[2].status), jobs[2].status);
      const alerts = await server.get(`/v1/notifications/${made.notifications['tx-alerts-bob']}`);
      assert.deepEqual(alerts.body.channels, ['in_app', 'email']);
      assert.equal(alerts.body.jobs[1].overrides.note, 'o');
      assert.equal(alerts.body.subscriber.phone, '+15550100');
    });

    it('answers 404 for an unknown id, and for a notification of another environment or organization', async () => {
      const b = expectErrorBody(await server.get(`/v1/notifications/${UNKNOWN_ID}`), 404);
      assert.equal(b.error, 'Not Found');
      assert.equal(b.path, `/v1/notifications/${UNKNOWN_ID}`);
      const id = made.notifications['tx-welcome-alice']!;
      expectErrorBody(await server.get(`/v1/notifications/${id}`, { key: KEYS.b }), 404);
      expectErrorBody(await server.get(`/v1/notifications/${id}`, { key: KEYS.other }), 404);
      expectErrorBody(await server.get(`/v1/notifications/${id}`, { key: null }), 401);
    });
  });

  describe('GET /v1/notifications (17)', () => {
    it('lists the environment\'s notifications newest first, 10 a page by default', async () => {
      const body = await list(server);
      assert.deepEqual(
        body.data.map((n) => n.transactionId),
        [...order].reverse(),
      );
      assert.equal(body.hasMore, false);
      assert.equal(body.pageSize, 10);
      assert.equal(body.page, 0);
      assert.ok(body.data.every((n) => Array.isArray(n.jobs) && n.jobs.length > 0));
      const staging = await list(server, {}, KEYS.b);
      assert.deepEqual(staging.data.map((n) => n.transactionId), ['tx-staging']);
      const globex = await list(server, {}, KEYS.other);
      assert.deepEqual(globex.data.map((n) => n.transactionId), ['tx-globex']);
    });

    it('pages with page and limit, and says when there is more', async () => {
      const first = await list(server, { limit: 2 });
      assert.deepEqual(first.data.map((n) => n.transactionId), [order[4], order[3]]);
      assert.equal(first.hasMore, true);
      assert.equal(first.pageSize, 2);
      const last = await list(server, { limit: 2, page: 2 });
      assert.deepEqual(last.data.map((n) => n.transactionId), [order[0]]);
      assert.equal(last.hasMore, false);
      assert.equal(last.page, 2);
      const beyond = await list(server, { limit: 2, page: 9 });
      assert.deepEqual(beyond.data, []);
      assert.equal(beyond.hasMore, false);
    });

    it('filters by channels, templates, subscriberIds, emails and transactionId', async () => {
      const ids = async (query: Record<string, any>) => (await list(server, query)).data.map((n) => n.transactionId);
      assert.deepEqual(await ids({ channels: 'email' }), ['tx-alerts-bob']);
      assert.deepEqual(await ids({ channels: ['sms', 'email'] }), ['tx-alerts-bob']);
      assert.deepEqual(await ids({ channels: 'push' }), []);
      assert.deepEqual(await ids({ templates: made.workflows.reminder }), ['tx-reminder-alice']);
      assert.deepEqual(await ids({ templates: [made.workflows.reminder, made.workflows.alerts] }), ['tx-alerts-bob', 'tx-reminder-alice']);
      assert.deepEqual(await ids({ subscriberIds: 'bob' }), ['tx-alerts-bob', 'tx-welcome-bob']);
      assert.deepEqual(await ids({ subscriberIds: ['carol', 'nobody'] }), ['tx-welcome-carol']);
      assert.deepEqual(await ids({ emails: 'alice@example.test' }), ['tx-reminder-alice', 'tx-welcome-alice']);
      assert.deepEqual(await ids({ emails: ['BOB@example.test', 'alice@example.test'], templates: made.workflows.welcome }), [
        'tx-welcome-bob',
        'tx-welcome-alice',
      ]);
      assert.deepEqual(await ids({ transactionId: 'tx-welcome-bob' }), ['tx-welcome-bob']);
      assert.deepEqual(await ids({ transactionId: 'tx-staging' }), [], 'another environment\'s transaction');
      assert.deepEqual(await ids({ subscriberIds: 'alice', channels: 'email' }), []);
    });

    it('matches the deprecated search on the transactionId, subscriberId or email', async () => {
      const ids = async (search: string) => (await list(server, { search })).data.map((n) => n.transactionId);
      assert.deepEqual(await ids('tx-welcome-carol'), ['tx-welcome-carol']);
      assert.deepEqual(await ids('carol'), ['tx-welcome-carol']);
      assert.deepEqual(await ids('ALICE@example.test'), ['tx-reminder-alice', 'tx-welcome-alice']);
      assert.deepEqual(await ids('nothing-matches'), []);
    });

    it('filters by createdAt with after and before', async () => {
      const all = (await list(server)).data;
      const createdOf = (tx: string) => all.find((n) => n.transactionId === tx).createdAt;
      const ids = async (query: Record<string, any>) => (await list(server, query)).data.map((n) => n.transactionId);
      assert.deepEqual(await ids({ after: createdOf('tx-alerts-bob') }), ['tx-welcome-carol', 'tx-alerts-bob']);
      assert.deepEqual(await ids({ before: createdOf('tx-welcome-bob') }), ['tx-welcome-bob', 'tx-welcome-alice']);
      assert.deepEqual(await ids({ after: createdOf('tx-welcome-bob'), before: createdOf('tx-reminder-alice') }), [
        'tx-reminder-alice',
        'tx-welcome-bob',
      ]);
      // Epoch milliseconds work as well.
      assert.deepEqual(await ids({ after: String(Date.parse(createdOf('tx-welcome-carol'))) }), ['tx-welcome-carol']);
      assert.deepEqual(await ids({ after: '2999-01-01T00:00:00Z' }), []);
      assert.equal((await ids({ before: '2000-01-01' })).length, 0);
    });

    it('answers 422 with the error body for bad filters and bounds', async () => {
      const bad = async (query: Record<string, any>, field: string) => {
        const b = expectErrorBody(await server.get('/v1/notifications', { query }), 422);
        assert.ok(b.errors?.[field], `errors.${field} in ${JSON.stringify(b)}`);
        return b;
      };
      const a = await bad({ after: 'yesterday-ish' }, 'after');
      assert.equal(a.errors.after.value, 'yesterday-ish');
      await bad({ before: '2024-13-45T99:00:00Z' }, 'before');
      await bad({ limit: 0 }, 'limit');
      await bad({ limit: 51 }, 'limit');
      await bad({ limit: 'ten' }, 'limit');
      await bad({ page: -1 }, 'page');
      await bad({ channels: 'fax' }, 'channels.0');
      await bad({ severity: 'urgent' }, 'severity.0');
      await bad({ contextKeys: 'no-colon' }, 'contextKeys.0');
      // The bounds themselves are fine.
      assert.equal((await list(server, { limit: 50, page: 0 })).pageSize, 50);
      assert.equal((await list(server, { limit: 1 })).data.length, 1);
    });

    it('filters by severity, topicKey and exact contextKeys', async () => {
      // A trigger cannot set these yet: write them beside the server, in its database.
      const db = await openDatabase({ location: server.dbPath });
      try {
        const set = (tx: string, values: Record<string, unknown>) =>
          db.kysely.updateTable('notifications').set(values).where('transaction_id', '=', tx).execute();
        await set('tx-welcome-alice', {
          severity: 'high',
          topics: JSON.stringify([{ _topicId: 'a1b2c3d4e5f6a1b2c3d4e5f6', topicKey: 'releases' }]),
          context_keys: JSON.stringify(['tenant:acme', 'project:p1']),
        });
        await set('tx-welcome-bob', {
          severity: 'low',
          topics: JSON.stringify([
            { _topicId: 'a1b2c3d4e5f6a1b2c3d4e5f7', topicKey: 'news' },
            { _topicId: 'a1b2c3d4e5f6a1b2c3d4e5f6', topicKey: 'releases' },
          ]),
          context_keys: JSON.stringify(['tenant:acme']),
        });
        await set('tx-staging', { severity: 'high', topics: JSON.stringify([{ _topicId: 'x', topicKey: 'releases' }]) });
      } finally {
        await db.close();
      }
      const ids = async (query: Record<string, any>, key: string = KEYS.a) =>
        (await list(server, query, key)).data.map((n) => n.transactionId);
      assert.deepEqual(await ids({ severity: 'high' }), ['tx-welcome-alice']);
      assert.deepEqual(await ids({ severity: ['high', 'low'] }), ['tx-welcome-bob', 'tx-welcome-alice']);
      assert.deepEqual(await ids({ severity: 'none' }), ['tx-welcome-carol', 'tx-alerts-bob', 'tx-reminder-alice']);
      assert.deepEqual(await ids({ topicKey: 'releases' }), ['tx-welcome-bob', 'tx-welcome-alice']);
      assert.deepEqual(await ids({ topicKey: 'news' }), ['tx-welcome-bob']);
      assert.deepEqual(await ids({ topicKey: 'rel' }), [], 'no partial match');
      assert.deepEqual(await ids({ topicKey: 'releases' }, KEYS.b), ['tx-staging']);
      // Exact: the notification's context keys are the given set, in any order.
      assert.deepEqual(await ids({ contextKeys: ['project:p1', 'tenant:acme'] }), ['tx-welcome-alice']);
      assert.deepEqual(await ids({ contextKeys: 'tenant:acme' }), ['tx-welcome-bob']);
      assert.deepEqual(await ids({ contextKeys: 'project:p1' }), []);
      assert.deepEqual(await ids({ contextKeys: ['tenant:acme', 'project:p1', 'x:y'] }), []);

      const n = await server.get(`/v1/notifications/${made.notifications['tx-welcome-alice']}`);
      assert.equal(n.body.severity, 'high');
      assert.deepEqual(n.body.topics, [{ _topicId: 'a1b2c3d4e5f6a1b2c3d4e5f6', topicKey: 'releases' }]);
      assert.deepEqual(n.body.contextKeys, ['tenant:acme', 'project:p1']);
    });
  });

  describe('DELETE /v1/events/trigger/:transactionId (18)', () => {
    it('cancels the pending jobs of a run: true, then false once nothing is left', async () => {
      const wrongEnv = await server.delete('/v1/events/trigger/tx-reminder-alice', { key: KEYS.b });
      expectErrorBody(wrongEnv, 404);
      const r = await server.delete('/v1/events/trigger/tx-reminder-alice');
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /application\/json/);
      assert.equal(r.body, true);

      const n = (await server.get(`/v1/notifications/${made.notifications['tx-reminder-alice']}`)).body;
      assert.deepEqual(n.jobs.map((j: any) => j.status), ['completed', 'canceled', 'canceled']);
      for (const job of n.jobs.slice(1)) {
        const last = job.executionDetails.at(-1);
        assert.equal(last.status, 'Warning');
        assert.match(last.detail, /^Canceled/);
        assert.match(last.detail, /tx-reminder-alice/);
      }
      // The completed step keeps its own history.
      assert.equal(n.jobs[0].executionDetails.at(-1)?.status, 'Success');

      const again = await server.delete('/v1/events/trigger/tx-reminder-alice');
      assert.equal(again.status, 200);
      assert.equal(again.body, false);
    });

    it('answers false for a run that already finished, and 404 for an unknown transaction', async () => {
      const done = await server.delete('/v1/events/trigger/tx-welcome-carol');
      assert.equal(done.status, 200);
      assert.equal(done.body, false);
      const n = (await server.get(`/v1/notifications/${made.notifications['tx-welcome-carol']}`)).body;
      assert.equal(n.jobs[0].status, 'completed');

      const b = expectErrorBody(await server.delete('/v1/events/trigger/tx-never-triggered'), 404);
      assert.match(b.message, /tx-never-triggered/);
      expectErrorBody(await server.delete('/v1/events/trigger/tx-globex'), 404);
      expectErrorBody(await server.delete('/v1/events/trigger/tx-staging', { key: KEYS.other }), 404);
    });

    it('cancels every subscriber\'s run of a transaction, and only in the key\'s environment', async () => {
      await createWorkflow(server, 'reminder', [inApp('First'), { name: 'wait', type: 'delay', controlValues: { amount: 1, unit: 'days' } }, inApp('Second')], KEYS.b);
      const tx = await trigger(server, { name: 'reminder', to: ['dave', 'erin'], transactionId: 'tx-shared' });
      await trigger(server, { name: 'reminder', to: 'dave', transactionId: 'tx-shared' }, KEYS.b);
      const r = await server.delete(`/v1/events/trigger/${tx}`);
      assert.equal(r.body, true);
      const mine = (await list(server, { transactionId: tx })).data;
      assert.equal(mine.length, 2);
      for (const n of mine) assert.deepEqual(n.jobs.map((j: any) => j.status), ['completed', 'canceled', 'canceled']);
      const theirs = (await list(server, { transactionId: tx }, KEYS.b)).data;
      assert.equal(theirs.length, 1);
      assert.ok(CANCELABLE.includes(theirs[0].jobs[1].status), 'the other environment\'s run is untouched');
      assert.equal((await server.delete(`/v1/events/trigger/${tx}`, { key: KEYS.b })).body, true);
    });

    it('takes an idempotency-key like every non-GET request', async () => {
      const tx = await trigger(server, { name: 'reminder', to: 'frank' });
      const headers = { 'idempotency-key': `cancel-${tx}` };
      const first = await server.delete(`/v1/events/trigger/${tx}`, { headers });
      assert.equal(first.body, true);
      const replay = await server.delete(`/v1/events/trigger/${tx}`, { headers });
      assert.equal(replay.status, 200);
      assert.equal(replay.body, true);
      assert.equal(replay.headers.get('idempotency-replay'), 'true');
    });
  });
});
