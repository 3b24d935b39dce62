import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, KEYS, startServer, type TestServer } from './helpers.ts';

const inbox = (controlValues: Record<string, unknown>) => ({ name: 'inbox', type: 'in_app', controlValues });

describe('workflows (POST/GET /v2/workflows)', () => {
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  it('creates a workflow: 201 with ids, steps, flags and timestamps', async () => {
    const r = await server.post('/v2/workflows', {
      workflowId: 'welcome',
      name: 'Welcome',
      description: 'Greets new users',
      tags: ['onboarding'],
      critical: true,
      steps: [
        inbox({ subject: 'Hello', body: 'Hi {{payload.name}}', redirect: { url: '/start' }, feedIdentifier: 'news' }),
        { name: 'wait', type: 'delay', controlValues: { amount: 5, unit: 'minutes' } },
        { name: 'roll-up', type: 'digest', controlValues: { amount: 1, unit: 'hours', digestKey: 'postId' } },
        { name: 'mail', type: 'email', controlValues: { subject: 'Hi', body: 'Welcome' } },
      ],
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const w = r.body;
    assert.match(w._id, /^[0-9a-f]{24}$/);
    assert.equal(w.workflowId, 'welcome');
    assert.equal(w.name, 'Welcome');
    assert.equal(w.description, 'Greets new users');
    assert.deepEqual(w.tags, ['onboarding']);
    assert.equal(w.active, true);
    assert.equal(w.critical, true);
    assert.equal(w.steps.length, 4);
    assert.deepEqual(
      w.steps.map((s: any) => [s.name, s.type]),
      [['inbox', 'in_app'], ['wait', 'delay'], ['roll-up', 'digest'], ['mail', 'email']],
    );
    for (const s of w.steps) assert.match(s._id, /^[0-9a-f]{24}$/);
    assert.equal(new Set(w.steps.map((s: any) => s._id)).size, 4);
    assert.equal(w.steps[0].controlValues.body, 'Hi {{payload.name}}');
    assert.deepEqual(w.steps[1].controlValues, { amount: 5, unit: 'minutes' });
    assert.ok(!Number.isNaN(Date.parse(w.createdAt)));
    assert.equal(w.createdAt, w.updatedAt);
    assert.deepEqual(w.triggers[0].variables, [{ name: 'name' }]);
  });

  it('updates a workflow with the same workflowId: 201 (as a create: Novu\'s SDK takes no other), step ids kept by name and type', async () => {
    const first = await server.post('/v2/workflows', { workflowId: 'digest-me', name: 'One', steps: [inbox({ body: 'a' })] });
    assert.equal(first.status, 201);
    const second = await server.post('/v2/workflows', {
      workflowId: 'digest-me',
      name: 'Two',
      active: false,
      steps: [inbox({ body: 'b' }), { name: 'sms', type: 'sms', controlValues: { body: 'x' } }],
    });
    assert.equal(second.status, 201, JSON.stringify(second.body));
    assert.equal(second.body._id, first.body._id);
    assert.equal(second.body.name, 'Two');
    assert.equal(second.body.active, false);
    assert.equal(second.body.steps[0]._id, first.body.steps[0]._id);
    assert.equal(second.body.steps[0].controlValues.body, 'b');
    assert.notEqual(second.body.steps[1]._id, first.body.steps[0]._id);
    assert.equal(second.body.createdAt, first.body.createdAt);
    const list = await server.get('/v2/workflows');
    assert.equal(list.body.workflows.filter((w: any) => w.workflowId === 'digest-me').length, 1);
  });

  it('keeps a severity (high, medium, low, none; none when not given), and refuses any other', async () => {
    const made = await server.post('/v2/workflows', { workflowId: 'severe', name: 'Severe', severity: 'high', steps: [inbox({ body: 'a' })] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.severity, 'high');
    const kept = await server.post('/v2/workflows', { workflowId: 'severe', name: 'Severe again', steps: [inbox({ body: 'b' })] });
    assert.equal(kept.body.severity, 'high');
    const lowered = await server.post('/v2/workflows', { workflowId: 'severe', name: 'Severe', severity: 'low', steps: [inbox({ body: 'b' })] });
    assert.equal(lowered.body.severity, 'low');
    const plain = await server.post('/v2/workflows', { workflowId: 'not-severe', name: 'Plain', steps: [inbox({ body: 'a' })] });
    assert.equal(plain.body.severity, 'none');
    const refused = await server.post('/v2/workflows', { workflowId: 'too-severe', name: 'x', severity: 'critical', steps: [] });
    assert.ok(expectErrorBody(refused, 422).errors.severity);
  });

  it('keeps a severity (high, medium, low, none; none when not given), and refuses any other', async () => {
    const made = await server.post('/v2/workflows', { workflowId: 'severe', name: 'Severe', severity: 'high', steps: [inbox({ body: 'a' })] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.severity, 'high');
    const kept = await server.post('/v2/workflows', { workflowId: 'severe', name: 'Severe again', steps: [inbox({ body: 'b' })] });
    assert.equal(kept.body.severity, 'high');
    const lowered = await server.post('/v2/workflows', { workflowId: 'severe', name: 'Severe', severity: 'low', steps: [inbox({ body: 'b' })] });
    assert.equal(lowered.body.severity, 'low');
    const plain = await server.post('/v2/workflows', { workflowId: 'not-severe', name: 'Plain', steps: [inbox({ body: 'a' })] });
    assert.equal(plain.body.severity, 'none');
    const refused = await server.post('/v2/workflows', { workflowId: 'too-severe', name: 'x', severity: 'critical', steps: [] });
    assert.ok(expectErrorBody(refused, 422).errors.severity);
  });

  it('lists the workflows of the key\'s environment only', async () => {
    await server.post('/v2/workflows', { workflowId: 'staging-only', name: 'S', steps: [] }, { key: KEYS.b });
    const a = await server.get('/v2/workflows');
    assert.equal(a.status, 200);
    assert.ok(Array.isArray(a.body.workflows));
    assert.equal(a.body.totalCount, a.body.workflows.length);
    const ids = a.body.workflows.map((w: any) => w.workflowId);
    assert.ok(ids.includes('welcome'));
    assert.ok(!ids.includes('staging-only'));
    const b = await server.get('/v2/workflows', { key: KEYS.b });
    assert.deepEqual(b.body.workflows.map((w: any) => w.workflowId), ['staging-only']);
    const other = await server.get('/v2/workflows', { key: KEYS.other });
    assert.deepEqual(other.body, { workflows: [], totalCount: 0 });
  });

  it('accepts http(s), relative and placeholder-led URLs', async () => {
    const r = await server.post('/v2/workflows', {
      workflowId: 'urls',
      name: 'URLs',
      steps: [
        inbox({
          body: 'x',
          avatar: 'https://cdn.example.com/a.png',
          redirect: { url: '{{payload.url}}' },
          primaryAction: { label: 'Go', redirect: { url: '/items/{{payload.id}}' } },
          secondaryAction: { label: 'Docs', redirect: { url: 'http://example.com/docs?q={{payload.q}}' } },
        }),
      ],
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['workflowId missing', { name: 'x', steps: [] }, 'workflowId'],
    ['name missing', { workflowId: 'x', steps: [] }, 'name'],
    ['steps missing', { workflowId: 'x', name: 'x' }, 'steps'],
    ['workflowId with spaces', { workflowId: 'has space', name: 'x', steps: [] }, 'workflowId'],
    ['workflowId empty', { workflowId: '', name: 'x', steps: [] }, 'workflowId'],
    ['name not a string', { workflowId: 'x', name: { a: 1 }, steps: [] }, 'name'],
    ['steps not an array', { workflowId: 'x', name: 'x', steps: { inbox: true } }, 'steps'],
    ['tags not an array of strings', { workflowId: 'x', name: 'x', steps: [], tags: [{}] }, 'tags.0'],
    ['active not a boolean', { workflowId: 'x', name: 'x', steps: [], active: 'yes' }, 'active'],
    ['unknown step type', { workflowId: 'x', name: 'x', steps: [{ name: 's', type: 'fax', controlValues: {} }] }, 'steps.0.type'],
    ['step without name', { workflowId: 'x', name: 'x', steps: [{ type: 'in_app', controlValues: { body: 'b' } }] }, 'steps.0.name'],
    ['in_app without body', { workflowId: 'x', name: 'x', steps: [inbox({ subject: 's' })] }, 'steps.0.controlValues.body'],
    ['in_app body not a string', { workflowId: 'x', name: 'x', steps: [inbox({ body: 5 })] }, 'steps.0.controlValues.body'],
    ['javascript: redirect', { workflowId: 'x', name: 'x', steps: [inbox({ body: 'b', redirect: { url: 'javascript:alert(1)' } })] }, 'steps.0.controlValues.redirect.url'],
    ['protocol-relative redirect', { workflowId: 'x', name: 'x', steps: [inbox({ body: 'b', redirect: { url: '//evil.example' } })] }, 'steps.0.controlValues.redirect.url'],
    ['data: avatar', { workflowId: 'x', name: 'x', steps: [inbox({ body: 'b', avatar: 'data:image/svg+xml,<svg/>' })] }, 'steps.0.controlValues.avatar'],
    ['redirect without url', { workflowId: 'x', name: 'x', steps: [inbox({ body: 'b', redirect: {} })] }, 'steps.0.controlValues.redirect.url'],
    ['primaryAction without label', { workflowId: 'x', name: 'x', steps: [inbox({ body: 'b', primaryAction: {} })] }, 'steps.0.controlValues.primaryAction.label'],
    ['secondaryAction with an unsafe url', { workflowId: 'x', name: 'x', steps: [inbox({ body: 'b', secondaryAction: { label: 'l', redirect: { url: 'vbscript:x' } } })] }, 'steps.0.controlValues.secondaryAction.redirect.url'],
    ['feedIdentifier with a comma', { workflowId: 'x', name: 'x', steps: [inbox({ body: 'b', feedIdentifier: 'a,b' })] }, 'steps.0.controlValues.feedIdentifier'],
    ['delay without amount', { workflowId: 'x', name: 'x', steps: [{ name: 'd', type: 'delay', controlValues: { unit: 'seconds' } }] }, 'steps.0.controlValues.amount'],
    ['delay with a bad unit', { workflowId: 'x', name: 'x', steps: [{ name: 'd', type: 'delay', controlValues: { amount: 1, unit: 'weeks' } }] }, 'steps.0.controlValues.unit'],
    ['digest with amount 0', { workflowId: 'x', name: 'x', steps: [{ name: 'd', type: 'digest', controlValues: { amount: 0, unit: 'hours' } }] }, 'steps.0.controlValues.amount'],
    ['second step invalid', { workflowId: 'x', name: 'x', steps: [inbox({ body: 'ok' }), inbox({ body: '' })] }, 'steps.1.controlValues.body'],
  ];
  for (const [title, body, field] of invalid) {
    it(`answers 422 naming the field: ${title}`, async () => {
      const r = await server.post('/v2/workflows', body);
      const b = expectErrorBody(r, 422);
      assert.ok(b.errors?.[field], `errors lacks ${field}: ${JSON.stringify(b.errors)}`);
      assert.ok(b.errors[field].messages.length > 0);
    });
  }

  it('stored nothing for the rejected bodies', async () => {
    const list = await server.get('/v2/workflows');
    assert.ok(!list.body.workflows.some((w: any) => w.workflowId === 'x'));
  });
});
