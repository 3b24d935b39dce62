import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KEYS, startServer, type TestServer } from './helpers.ts';

// Storage is the service's promise: what it answered is on disk, whatever happens to the process.

describe('durability', () => {
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  it('keeps data across a graceful restart', async () => {
    const created = await server.post('/v2/subscribers', { subscriberId: 'restart-1', firstName: 'Grace' });
    assert.equal(created.status, 201);
    await server.restart();
    const r = await server.get('/v2/subscribers/restart-1');
    assert.equal(r.status, 200);
    assert.equal(r.body.firstName, 'Grace');
    assert.equal(r.body._id, created.body._id);
  });

  it('keeps every answered write after kill -9', async () => {
    const ids = Array.from({ length: 25 }, (_, i) => `killed-${i}`);
    for (const id of ids) {
      const r = await server.post('/v2/subscribers', { subscriberId: id, email: `${id}@example.com` });
      assert.equal(r.status, 201);
    }
    await server.restart(true); // SIGKILL: no shutdown hooks, no checkpoint
    for (const id of ids) {
      const r = await server.get(`/v2/subscribers/${id}`);
      assert.equal(r.status, 200, `${id} lost after kill -9`);
      assert.equal(r.body.email, `${id}@example.com`);
    }
  });

  it('keeps the keys registered at start and still confines them to their environment', async () => {
    await server.restart(true);
    const mine = await server.get('/v2/subscribers/restart-1');
    assert.equal(mine.status, 200);
    const other = await server.get('/v2/subscribers/restart-1', { key: KEYS.b });
    assert.equal(other.status, 404);
  });
});
