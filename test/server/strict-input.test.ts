import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, TestServer } from './helpers.ts';
import { ensureSubscriber, inAppWorkflow } from './fixtures.ts';

// Input the service refuses instead of quietly ignoring or spending seconds on: unknown keys in a
// preferences change (a misspelt setting must not answer 200 having changed nothing), and JSON
// with more keys in all than any request needs (MAX_JSON_KEYS, server/src/bad-input.ts).

describe('strict input', () => {
  let server: TestServer;
  before(async () => {
    server = await new TestServer().start();
    await inAppWorkflow(server, 'strict', { subject: 's', body: 'b' });
    await ensureSubscriber(server, 'si-a');
  });
  after(async () => {
    await server?.stop();
    await server?.dispose();
  });

  it('a preferences change naming an unknown key, at any level, is a 422 naming it; nothing changes', async () => {
    for (const path of ['/v1/subscribers/si-a/preferences', '/v1/subscribers/si-a/preferences/strict']) {
      const top = expectErrorBody(await server.patch(path, { channel: { email: false } }), 422);
      assert.deepEqual(top.errors.channel, { messages: ['is not a known field'], value: { email: false } });
      assert.match(top.message, /channel/);
      const inner = expectErrorBody(await server.patch(path, { enabled: false, channels: { fax: false } }), 422);
      assert.deepEqual(Object.keys(inner.errors), ['channels.fax']);
    }
    const prefs = await server.get('/v2/subscribers/si-a/preferences');
    assert.equal(prefs.status, 200);
    assert.deepEqual(prefs.body.global, { enabled: true, channels: { in_app: true } });
    assert.ok(prefs.body.workflows.every((w: any) => w.enabled));
    // Known keys still work, and other bodies keep ignoring what they do not know.
    assert.equal((await server.patch('/v1/subscribers/si-a/preferences', { channels: { email: false } })).status, 200);
    assert.ok([200, 201].includes((await server.post('/v2/subscribers', { subscriberId: 'si-a', firstName: 'A', unknownField: 1 })).status));
  });

  it('JSON holding more than 10,000 keys and items in all is a 422, and nothing of it is stored', async () => {
    const payload: Record<string, number> = {};
    for (let i = 0; i < 70_000; i++) payload[`k${i}`] = 1;
    // (How long the refusal takes is a benchmark's question, not a test's: a busy machine took 1.8 s.)
    const before = (await server.get('/v1/notifications', { query: { subscriberIds: 'si-a' } })).body.data.length;
    const r = expectErrorBody(await server.post('/v1/events/trigger', { name: 'strict', to: 'si-a', payload }), 422);
    assert.match(r.message, /more than 10000 keys/);
    assert.equal((await server.get('/v1/notifications', { query: { subscriberIds: 'si-a' } })).body.data.length, before, 'no notification');
    // At the limit it is read.
    const fine: Record<string, number> = {};
    for (let i = 0; i < 9_000; i++) fine[`k${i}`] = 1;
    assert.equal((await server.post('/v1/events/trigger', { name: 'strict', to: 'si-a', payload: fine })).status, 201);
  });
});
