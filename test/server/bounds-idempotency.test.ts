import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createInboxProxy, subscriberHash } from '../../server/src/proxy.ts';
import { KEYS, sqlOn, TestServer } from './helpers.ts';
import { allMessages, createWorkflow, triggerEvent } from './fixtures.ts';
import { listen } from './bounds-fixtures.ts';

// End users bounded: the answers the service keeps for idempotency keys are capped per subscriber
// (NOTIF_IDEMPOTENCY_KEYS_PER_SUBSCRIBER answers, NOTIF_IDEMPOTENCY_BYTES_PER_SUBSCRIBER bytes) and
// per organization (NOTIF_IDEMPOTENCY_KEYS_PER_ORGANIZATION): past a cap the oldest answers are
// evicted, or the request is refused with 429. Without a cap, a signed-in user sending mark-as on
// 100 messages with a new key each time stores a 300 KB answer per request for 24 hours. Through
// the proxy, as an end user sends them; on PostgreSQL too (TEST_DATABASE_URL).

const HMAC_KEY = 'host-app-secret';
const KEYS_PER_SUBSCRIBER = 20;
const BYTES_PER_SUBSCRIBER = 2 * 1024 * 1024;
const KEYS_PER_ORGANIZATION = 50;
/** A stored answer is sealed (AES-GCM, base64url): four thirds of its size, and a few bytes more. */
const SEALED = 4 / 3;
/** Subscribers of the same organization, each sending fewer requests than its own cap. */
const OTHERS = ['grace', 'alan', 'edsger', 'barbara'];

describe('idempotency answers kept per subscriber and per organization', { timeout: 120_000 }, () => {
  let server: TestServer;
  let proxy: Awaited<ReturnType<typeof listen>>;
  let organizationId: string;
  const as = (subscriberId: string) => ({
    'x-subscriber-id': subscriberId,
    'x-subscriber-hash': subscriberHash(subscriberId, HMAC_KEY),
    'content-type': 'application/json',
  });
  /** The answers kept for the organization of the test keys: how many, and their bytes as stored. */
  const stored = async () => {
    const [row] = await sqlOn(server, 'select count(*) as n, coalesce(sum(length(body)), 0) as bytes from idempotency_keys where organization_id = ?', [organizationId]);
    return { count: Number(row.n), bytes: Number(row.bytes) };
  };
  /** The keys of the organization's kept answers (one subscriber's only, when given), oldest first. */
  const keptKeysOf = async (subscriberId?: string): Promise<string[]> => {
    const ofSubscriber = subscriberId === undefined ? '' : `and subscriber_key like '% ${subscriberId}'`;
    const rows = await sqlOn(server, `select key from idempotency_keys where organization_id = ? and state = 'done' ${ofSubscriber} order by created_at`, [organizationId]);
    return rows.map((row: { key: string }) => row.key);
  };
  const send = (subscriberId: string, path: string, key: string, body: unknown) =>
    fetch(`${proxy.url}/notif/v1/subscribers/${subscriberId}/messages/${path}`, {
      method: 'POST',
      headers: { ...as(subscriberId), 'idempotency-key': key },
      body: JSON.stringify(body),
    });

  before(async () => {
    server = await new TestServer({
      NOTIF_IDEMPOTENCY_KEYS_PER_SUBSCRIBER: String(KEYS_PER_SUBSCRIBER),
      NOTIF_IDEMPOTENCY_BYTES_PER_SUBSCRIBER: String(BYTES_PER_SUBSCRIBER),
      NOTIF_IDEMPOTENCY_KEYS_PER_ORGANIZATION: String(KEYS_PER_ORGANIZATION),
    }).start(['--no-seed']);
    proxy = await listen(createInboxProxy({ serviceUrl: server.url, apiKey: KEYS.a, hmacKey: HMAC_KEY }));
    await createWorkflow(server, {
      workflowId: 'note',
      name: 'Note',
      steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'Hello {{payload.n}}', body: 'A message of a usual length, number {{payload.n}}', primaryAction: { label: 'Open' } } }],
    });
    for (let n = 0; n < 100; n++) await triggerEvent(server, { name: 'note', to: 'ada', payload: { n } });
    await triggerEvent(server, { name: 'note', to: OTHERS, payload: { n: 0 } });
    [{ id: organizationId }] = await sqlOn(server, "select id from organizations where name = 'acme'");
  });
  after(async () => {
    proxy?.close();
    await server?.dispose();
  });

  it('mark-as on 100 messages with a new key each time keeps at most NOTIF_IDEMPOTENCY_KEYS_PER_SUBSCRIBER answers and NOTIF_IDEMPOTENCY_BYTES_PER_SUBSCRIBER bytes', async (t) => {
    const ids = (await allMessages(server, 'ada')).map((m) => m._id);
    assert.equal(ids.length, 100);
    const statuses: Record<string, number> = {};
    const answered: string[] = [];
    let lastStored: { key: string; body: unknown } | undefined;
    let answerBytes = 0;
    for (let i = 0; i < 60; i++) {
      const body = { messageId: ids, markAs: i % 2 ? 'read' : 'unread' };
      const answer = await send('ada', 'mark-as', `ada-${i}`, body);
      answerBytes = Math.max(answerBytes, (await answer.arrayBuffer()).byteLength);
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      assert.ok(answer.status === 201 || answer.status === 429, `answer ${i}: ${answer.status}`);
      if (answer.status === 429) assert.ok(answer.headers.get('retry-after'), 'a 429 says when to retry');
      else {
        lastStored = { key: `ada-${i}`, body };
        answered.push(`ada-${i}`);
      }
    }
    const kept = await stored();
    t.diagnostic(`60 requests with answers of ${Math.round(answerBytes / 1024)} KB: ${JSON.stringify(statuses)}; kept ${kept.count} answers, ${(kept.bytes / 1e6).toFixed(1)} MB`);
    assert.ok(kept.count <= KEYS_PER_SUBSCRIBER, `${kept.count} answers kept for one subscriber (cap ${KEYS_PER_SUBSCRIBER})`);
    assert.ok(kept.bytes <= BYTES_PER_SUBSCRIBER * SEALED + 4096, `${kept.bytes} bytes kept for one subscriber (cap ${BYTES_PER_SUBSCRIBER} before sealing)`);
    // What is kept is the newest answers, the oldest evicted first.
    const keptKeys = (await keptKeysOf('ada')).sort((a, b) => answered.indexOf(a) - answered.indexOf(b));
    assert.ok(keptKeys.length > 0, 'some answers are kept');
    assert.deepEqual(keptKeys, answered.slice(-keptKeys.length));
    // The newest answer given is still the one a retry gets.
    assert.ok(lastStored, 'some requests were answered');
    const retry = await send('ada', 'mark-as', lastStored.key, lastStored.body);
    assert.equal(retry.status, 201);
    assert.equal(retry.headers.get('idempotency-replay'), 'true');
  });

  it('keeps at most NOTIF_IDEMPOTENCY_KEYS_PER_ORGANIZATION answers for all its subscribers together', async (t) => {
    const statuses: Record<string, number> = {};
    const answered = await keptKeysOf();
    // Four more subscribers, each within its own cap (15 of 20), together past the organization's (50).
    for (const subscriberId of OTHERS) {
      for (let i = 0; i < 15; i++) {
        const answer = await send(subscriberId, 'mark-all', `${subscriberId}-${i}`, { markAs: i % 2 ? 'read' : 'seen' });
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        assert.ok(answer.status === 201 || answer.status === 429, `${subscriberId} ${i}: ${answer.status}`);
        if (answer.status === 201) answered.push(`${subscriberId}-${i}`);
      }
    }
    const kept = await stored();
    t.diagnostic(`${JSON.stringify(statuses)}; the organization keeps ${kept.count} answers`);
    assert.ok(kept.count <= KEYS_PER_ORGANIZATION, `${kept.count} answers kept for one organization (cap ${KEYS_PER_ORGANIZATION})`);
    // The newest are kept: the earlier test's answers and the first of these were evicted first.
    const keptKeys = (await keptKeysOf()).sort((a, b) => answered.indexOf(a) - answered.indexOf(b));
    assert.ok(keptKeys.length > KEYS_PER_SUBSCRIBER, `${keptKeys.length} answers kept, of several subscribers`);
    assert.deepEqual(keptKeys, answered.slice(-keptKeys.length));
  });
});
