import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer } from './helpers.ts';

// A trigger whose payload lacks a variable a step uses: the message renders it empty (end users never
// read template syntax), each step's execution details name what is missing
// (GET /v1/notifications/:id), and the service logs a warning.

describe('a payload that lacks variables the steps use', () => {
  let server: TestServer;

  before(async () => {
    server = await new TestServer().start(['--no-seed', '--log']);
    const made = await server.post('/v2/workflows', {
      workflowId: 'comment-reply',
      name: 'Comment reply',
      steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: '{{payload.author}} replied to your comment', body: '“{{payload.comment.text}}” on {{payload.page}}' } }],
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal((await server.post('/v2/subscribers', { subscriberId: 'ada' })).status, 201);
  });
  after(() => server?.dispose());

  it('renders the missing ones empty, names them in the execution details, and warns in the log', async () => {
    const sent = await server.post('/v1/events/trigger', { name: 'comment-reply', to: 'ada', payload: { page: 'Pricing' } });
    assert.equal(sent.status, 201);
    const feed = await server.get('/v1/subscribers/ada/notifications/feed');
    const [message] = feed.body.data;
    assert.equal(message.subject, ' replied to your comment');
    assert.equal(message.content[0].content, '“” on Pricing');

    const listed = await server.get(`/v1/notifications?transactionId=${sent.body.transactionId}`);
    const notification = await server.get(`/v1/notifications/${listed.body.data[0]._id}`);
    const details = notification.body.jobs[0].executionDetails.map((detail: { status: string; detail: string }) => `${detail.status}: ${detail.detail}`);
    assert.ok(
      details.includes("Warning: The trigger's payload lacks {{payload.author}}, {{payload.comment.text}}: rendered empty"),
      JSON.stringify(details),
    );

    const warnings = server
      .output()
      .split('\n')
      .filter((line) => line.includes('lacks variables'));
    assert.equal(warnings.length, 1, server.output());
    assert.deepEqual(JSON.parse(warnings[0]!).missingVariables, ['author', 'comment.text']);
  });

  it('a payload with every variable renders them, with no warning', async () => {
    const before = server.output().split('lacks variables').length;
    const sent = await server.post('/v1/events/trigger', {
      name: 'comment-reply',
      to: 'ada',
      payload: { author: 'Grace', comment: { text: 'Nice' }, page: 'Docs' },
    });
    assert.equal(sent.status, 201);
    const [message] = (await server.get('/v1/subscribers/ada/notifications/feed')).body.data;
    assert.equal(message.subject, 'Grace replied to your comment');
    assert.equal(message.content[0].content, '“Nice” on Docs');
    const listed = await server.get(`/v1/notifications?transactionId=${sent.body.transactionId}`);
    const notification = await server.get(`/v1/notifications/${listed.body.data[0]._id}`);
    assert.equal(notification.body.jobs[0].executionDetails.some((detail: { status: string }) => detail.status === 'Warning'), false);
    assert.equal(server.output().split('lacks variables').length, before);
  });
});
