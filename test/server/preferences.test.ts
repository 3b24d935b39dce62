import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, KEYS, startServer, type Reply, type TestServer } from './helpers.ts';
import { createWorkflow, ensureSubscriber, getFeed, triggerEvent } from './fixtures.ts';
import { notificationOf } from './engine-fixtures.ts';

// Preferences: the two PATCH extensions (global, per workflow) and the engine honouring them.

const CHANNELS = ['in_app', 'email', 'sms', 'chat', 'push'] as const;
const step = (type: string) => ({ name: `${type}-step`, type, controlValues: { subject: 'S', body: `via ${type}` } });

const patchGlobal = (s: TestServer, id: string, body: unknown, key: string = KEYS.a) =>
  s.patch(`/v1/subscribers/${id}/preferences`, body, { key });
const patchWorkflow = (s: TestServer, id: string, workflowId: string, body: unknown, key: string = KEYS.a) =>
  s.patch(`/v1/subscribers/${id}/preferences/${workflowId}`, body, { key });

function ok(r: Reply) {
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** The job statuses of a trigger's run for one subscriber, by step type. */
async function jobsOf(server: TestServer, transactionId: string) {
  const n = await notificationOf(server, transactionId);
  return Object.fromEntries(n.jobs.map((j: any) => [j.type, j])) as Record<string, any>;
}

describe('preferences', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createWorkflow(server, { workflowId: 'everything', name: 'Everything', steps: CHANNELS.map(step) });
    await createWorkflow(server, { workflowId: 'news', name: 'News', steps: [step('in_app'), step('email')] });
    await createWorkflow(server, { workflowId: 'security', name: 'Security', critical: true, steps: [step('in_app'), step('sms')] });
    await createWorkflow(server, { workflowId: 'staging-wf', name: 'Staging', steps: [step('in_app')] }, KEYS.b);
    for (const id of ['p-api', 'p-global', 'p-critical', 'p-back', ...CHANNELS.map((c) => `p-${c}`)]) await ensureSubscriber(server, id);
    await ensureSubscriber(server, 'p-staging', {}, KEYS.b);
  });
  after(() => server.dispose());

  it('PATCH per workflow: answers the preferences (criticality all) with the change and its override', async () => {
    const body = ok(await patchWorkflow(server, 'p-api', 'news', { channels: { in_app: false } }));
    const news = body.workflows.find((w: any) => w.workflow.identifier === 'news');
    assert.deepEqual(news, {
      enabled: true,
      channels: { in_app: false, email: true },
      overrides: [{ channel: 'in_app', source: 'subscriber' }],
      workflow: { slug: 'news', identifier: 'news', name: 'News' },
    });
    assert.deepEqual(body.workflows.map((w: any) => w.workflow.identifier), ['everything', 'news', 'security', 'fixture-noop']);
    // A second change of another setting keeps the first; GET shows the same.
    ok(await patchWorkflow(server, 'p-api', 'news', { enabled: false, channels: { email: true } }));
    const read = ok(await server.get('/v2/subscribers/p-api/preferences'));
    const again = read.workflows.find((w: any) => w.workflow.identifier === 'news');
    assert.equal(again.enabled, false);
    assert.deepEqual(again.channels, { in_app: false, email: true });
    assert.deepEqual(again.overrides, [{ channel: 'in_app', source: 'subscriber' }, { channel: 'email', source: 'subscriber' }]);
    assert.deepEqual(read.global, { enabled: true, channels: { in_app: true, email: true, sms: true, chat: true, push: true } });
  });

  it('PATCH global: enabled and channels', async () => {
    const body = ok(await patchGlobal(server, 'p-api', { enabled: false, channels: { sms: false } }));
    assert.deepEqual(body.global, { enabled: false, channels: { in_app: true, email: true, sms: false, chat: true, push: true } });
    assert.deepEqual(ok(await patchGlobal(server, 'p-api', {})).global, body.global, 'an empty body changes nothing');
    assert.equal(ok(await patchGlobal(server, 'p-api', { enabled: true })).global.enabled, true);
  });

  it('422 for bad bodies, with the field named', async () => {
    for (const [bad, field] of [
      [{ enabled: 'no' }, 'enabled'],
      [{ channels: { in_app: 'off' } }, 'channels.in_app'],
      [{ channels: [] }, 'channels'],
      [{ channels: { email: null } }, 'channels.email'],
    ] as const) {
      for (const r of [await patchGlobal(server, 'p-api', bad), await patchWorkflow(server, 'p-api', 'news', bad)]) {
        const b = expectErrorBody(r, 422);
        assert.ok(b.errors?.[field], `${JSON.stringify(bad)}: ${JSON.stringify(b.errors)}`);
      }
    }
    expectErrorBody(await server.request('PATCH', '/v1/subscribers/p-api/preferences', { raw: '[1' }), 400);
  });

  it('404 for an unknown subscriber or workflow, or one of another environment; 422 for a critical workflow', async () => {
    expectErrorBody(await patchGlobal(server, 'nobody', { enabled: false }), 404);
    expectErrorBody(await patchWorkflow(server, 'nobody', 'news', { enabled: false }), 404);
    const unknown = expectErrorBody(await patchWorkflow(server, 'p-api', 'no-such-workflow', { enabled: false }), 404);
    assert.match(unknown.message, /no-such-workflow/);
    expectErrorBody(await patchWorkflow(server, 'p-api', 'staging-wf', { enabled: false }), 404);
    expectErrorBody(await patchGlobal(server, 'p-api', { enabled: false }, KEYS.b), 404);
    expectErrorBody(await patchWorkflow(server, 'p-staging', 'news', { enabled: false }, KEYS.b), 404);
    expectErrorBody(await patchGlobal(server, 'p-api', { enabled: false }, KEYS.other), 404);
    const critical = expectErrorBody(await patchWorkflow(server, 'p-api', 'security', { channels: { sms: false } }), 422);
    assert.match(critical.message, /critical/);
    // The staging subscriber's own change stays in staging.
    const staging = ok(await patchWorkflow(server, 'p-staging', 'staging-wf', { channels: { in_app: false } }, KEYS.b));
    assert.deepEqual(staging.workflows.map((w: any) => w.workflow.identifier), ['staging-wf', 'fixture-noop']);
  });

  it('the engine skips exactly the step of each channel turned off for the workflow, saying why', async () => {
    for (const c of CHANNELS) ok(await patchWorkflow(server, `p-${c}`, 'everything', { channels: { [c]: false } }));
    const t = await triggerEvent(server, { name: 'everything', to: CHANNELS.map((c) => `p-${c}`) });
    const notifications = (await server.get('/v1/notifications', { query: { transactionId: t.transactionId, limit: 50 } })).body.data;
    assert.equal(notifications.length, CHANNELS.length);
    for (const c of CHANNELS) {
      const n = notifications.find((x: any) => x.subscriber.subscriberId === `p-${c}`);
      for (const job of n.jobs) {
        if (job.type === c) {
          assert.equal(job.status, 'skipped', `${c} skipped for p-${c}`);
          const detail = job.executionDetails.at(-1);
          assert.equal(detail.status, 'Warning');
          assert.equal(detail.detail, `Step skipped: the subscriber turned ${c} off for workflow 'everything' (workflow preference)`);
        } else {
          assert.notEqual(job.status, 'skipped', `${job.type} runs for p-${c}`);
        }
      }
    }
    assert.equal((await getFeed(server, 'p-in_app')).data.length, 0);
    assert.equal((await getFeed(server, 'p-email')).data.length, 1);
    // The other workflow is not touched by a per-workflow preference.
    const news = await jobsOf(server, (await triggerEvent(server, { name: 'news', to: 'p-in_app' })).transactionId);
    assert.equal(news.in_app.status, 'completed');
  });

  it('global off skips every step; a global channel off skips that channel in every workflow', async () => {
    ok(await patchGlobal(server, 'p-global', { enabled: false }));
    const all = await jobsOf(server, (await triggerEvent(server, { name: 'everything', to: 'p-global' })).transactionId);
    for (const c of CHANNELS) {
      assert.equal(all[c].status, 'skipped');
      assert.match(all[c].executionDetails.at(-1).detail, /every notification off \(global preference\)/);
    }
    ok(await patchGlobal(server, 'p-global', { enabled: true, channels: { email: false } }));
    for (const wf of ['everything', 'news']) {
      const jobs = await jobsOf(server, (await triggerEvent(server, { name: wf, to: 'p-global' })).transactionId);
      assert.equal(jobs.email.status, 'skipped', wf);
      assert.match(jobs.email.executionDetails.at(-1).detail, /email off for every workflow \(global preference\)/);
      assert.equal(jobs.in_app.status, 'completed', wf);
    }
    ok(await patchWorkflow(server, 'p-global', 'news', { enabled: false }));
    const news = await jobsOf(server, (await triggerEvent(server, { name: 'news', to: 'p-global' })).transactionId);
    assert.equal(news.in_app.status, 'skipped');
    assert.match(news.in_app.executionDetails.at(-1).detail, /turned workflow 'news' off/);
  });

  it('a critical workflow delivers whatever the preferences say, and shows its channels on', async () => {
    ok(await patchGlobal(server, 'p-critical', { enabled: false, channels: { in_app: false, sms: false } }));
    const jobs = await jobsOf(server, (await triggerEvent(server, { name: 'security', to: 'p-critical' })).transactionId);
    assert.equal(jobs.in_app.status, 'completed');
    assert.notEqual(jobs.sms.status, 'skipped');
    assert.equal((await getFeed(server, 'p-critical')).data.length, 1);
    const prefs = ok(await server.get('/v2/subscribers/p-critical/preferences', { query: { criticality: 'critical' } }));
    assert.deepEqual(prefs.workflows[0], {
      enabled: true,
      channels: { in_app: true, sms: true },
      overrides: [],
      workflow: { slug: 'security', identifier: 'security', name: 'Security' },
    });
  });

  it('turning a channel back on restores delivery', async () => {
    ok(await patchWorkflow(server, 'p-back', 'news', { channels: { in_app: false } }));
    await triggerEvent(server, { name: 'news', to: 'p-back' });
    assert.equal((await getFeed(server, 'p-back')).data.length, 0);
    ok(await patchWorkflow(server, 'p-back', 'news', { channels: { in_app: true } }));
    await triggerEvent(server, { name: 'news', to: 'p-back', payload: { n: 2 } });
    assert.equal((await getFeed(server, 'p-back')).data.length, 1);
  });
});
