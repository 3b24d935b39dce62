import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from './helpers.ts';
import { b64, createWorkflow, getFeed, triggerEvent } from './fixtures.ts';

// The audit's bad-input corpus, on whichever database the run uses (TEST_DATABASE_URL for
// PostgreSQL): every request is refused with a 4xx and decisions.md's error body, never a 500.

/** JSON nested `levels` deep: {"a":{"a":...1...}} */
const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
const DEEP = deep(4100);
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** `n` distinct two-character keys. */
const keys = (n: number) => Array.from({ length: n }, (_, i) => ALPHABET[Math.floor(i / 62)]! + ALPHABET[i % 62]!);

interface Case {
  name: string;
  method: string;
  path: string;
  /** Raw JSON text. */
  body?: string;
  idempotent?: boolean;
}

describe('the bad-input corpus', () => {
  let server: TestServer;
  let messageId: string;
  let integrationId: string;

  before(async () => {
    server = await startServer();
    await createWorkflow(server, { workflowId: 'hello', name: 'Hello', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'hi', primaryAction: { label: 'OK' } } }] });
    await triggerEvent(server, { name: 'hello', to: 'ada', payload: { a: 1 } });
    messageId = (await getFeed(server, 'ada')).data[0]._id;
    const integration = await server.post('/v1/integrations', { providerId: 'sendgrid', channel: 'email', identifier: 'sg' });
    assert.equal(integration.status, 201, JSON.stringify(integration.body));
    integrationId = integration.body._id;
  });
  after(async () => server?.dispose());

  function corpus(): Case[] {
    const cases: Case[] = [
      { name: 'subscriber data', method: 'POST', path: '/v2/subscribers', body: `{"subscriberId":"deep-1","data":${DEEP}}` },
      { name: 'trigger payload', method: 'POST', path: '/v1/events/trigger', body: `{"name":"hello","to":"ada","payload":${DEEP}}` },
      { name: 'trigger overrides', method: 'POST', path: '/v1/events/trigger', body: `{"name":"hello","to":"ada","overrides":${DEEP}}` },
      { name: 'trigger to[].data', method: 'POST', path: '/v1/events/trigger', body: `{"name":"hello","to":[{"subscriberId":"deep-2","data":${DEEP}}]}` },
      { name: 'trigger actor data', method: 'POST', path: '/v1/events/trigger', body: `{"name":"hello","to":"ada","actor":{"subscriberId":"deep-3","data":${DEEP}}}` },
      {
        name: 'action payload',
        method: 'POST',
        path: `/v1/subscribers/ada/messages/${messageId}/actions/primary`,
        body: `{"status":"done","payload":${DEEP}}`,
      },
      {
        name: 'workflow controlValues',
        method: 'POST',
        path: '/v2/workflows',
        body: `{"workflowId":"deep","name":"Deep","steps":[{"name":"s","type":"in_app","controlValues":${DEEP}}]}`,
      },
      { name: 'integration configurations', method: 'POST', path: '/v1/integrations', body: `{"providerId":"sendgrid","channel":"email","configurations":${DEEP}}` },
      { name: 'integration update configurations', method: 'PUT', path: `/v1/integrations/${integrationId}`, body: `{"configurations":${DEEP}}` },
      { name: 'credentials', method: 'PATCH', path: '/v1/subscribers/ada/credentials', body: `{"providerId":"slack","credentials":${DEEP}}` },
      { name: 'a deep body', method: 'POST', path: '/v1/subscribers/ada/messages/mark-all', body: DEEP },
      { name: 'a lone surrogate recipient', method: 'POST', path: '/v1/events/trigger', body: '{"name":"hello","to":"\\ud800x"}' },
      { name: 'a lone surrogate key', method: 'POST', path: '/v1/events/trigger', body: '{"name":"hello","to":"ada","payload":{"\\udc00":1}}' },
      { name: 'a lone surrogate subscriber', method: 'POST', path: '/v2/subscribers', body: '{"subscriberId":"x\\udbff","firstName":"\\ud800"}' },
      { name: 'NUL in a payload key', method: 'POST', path: '/v1/events/trigger', body: '{"name":"hello","to":"ada","payload":{"a\\u0000":1}}' },
    ];
    for (const c of [...cases]) if (c.body) cases.push({ ...c, name: `${c.name} (idempotency key)`, idempotent: true });
    const filters: [string, string][] = [
      ['a key with a backslash', 'eyJhXFwiOjF9'],
      ['a key with a backslash (built)', b64({ 'a\\': 1 })],
      ['a key with a quote', b64({ 'a"': 1 })],
      // As many leaves as fit the query's 8 KB of base64 (two-character keys).
      ['860 leaves', b64(Object.fromEntries(keys(860).map((k) => [k, 0])))],
      ['760 nested leaves', b64({ a: Object.fromEntries(keys(760).map((k) => [k, {}])) })],
      ['NUL in a value', b64({ a: 'x\u0000' })],
      ['NUL in a key', b64({ 'a\u0000': 1 })],
      ['a lone surrogate key', Buffer.from('{"\\ud800":1}').toString('base64')],
      ['a lone surrogate value', Buffer.from('{"a":"\\udfff"}').toString('base64')],
      ['deep', Buffer.from(deep(4100)).toString('base64').slice(0, 8192)],
      ['deep but short', Buffer.from(deep(200)).toString('base64')],
    ];
    for (const [name, payload] of filters) {
      cases.push({ name: `feed filter: ${name}`, method: 'GET', path: `/v1/subscribers/ada/notifications/feed?payload=${encodeURIComponent(payload)}` });
    }
    return cases;
  }

  it('answers every request of the corpus with a 4xx and the error body: 0 answers of 500', async () => {
    const fivehundreds: string[] = [];
    const accepted: string[] = [];
    let n = 0;
    for (const c of corpus()) {
      const headers: Record<string, string> = { authorization: 'ApiKey test_key_a' };
      if (c.body !== undefined) headers['content-type'] = 'application/json';
      if (c.idempotent) headers['idempotency-key'] = `bad-input-${n}`;
      const res = await fetch(server.url + c.path, { method: c.method, headers, body: c.body });
      const text = await res.text();
      n++;
      if (res.status >= 500) fivehundreds.push(`${c.name}: ${res.status} ${text.slice(0, 200)}`);
      else if (res.status < 400) accepted.push(`${c.name}: ${res.status}`);
      else {
        const body = JSON.parse(text);
        if (body.statusCode !== res.status || !body.message || !body.timestamp || !body.path) accepted.push(`${c.name}: ${text.slice(0, 200)}`);
      }
    }
    console.log(`bad-input corpus on ${server.postgres ? 'PostgreSQL' : 'SQLite'}: ${n} requests, ${fivehundreds.length} answers of 500, ${accepted.length} not refused with the error body`);
    assert.deepEqual(fivehundreds, []);
    assert.deepEqual(accepted, []);
    assert.equal((await server.get('/health')).status, 200);
  });

  it('still accepts what is merely deep enough, and well-formed pairs of surrogates', async () => {
    const r = await server.post('/v1/events/trigger', { name: 'hello', to: 'ada', payload: JSON.parse(deep(20)), overrides: {} });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const emoji = await server.post('/v2/subscribers', { subscriberId: 'emoji-\u{1F600}', firstName: '\u{1F600}' });
    assert.equal(emoji.status, 201, JSON.stringify(emoji.body));
    const feed = await getFeed(server, 'ada', { payload: b64({ a: { a: 1 } }) });
    assert.equal(feed.totalCount, 0);
  });

  it('tells why a JSON body is refused: where it is broken, or the key that is not allowed; nothing is written', async () => {
    const send = (body: string) =>
      fetch(server.url + '/v2/subscribers', { method: 'POST', headers: { authorization: 'ApiKey test_key_a', 'content-type': 'application/json; charset=utf-8' }, body }).then(
        async (r) => ({ status: r.status, body: (await r.json()) as { message: string; path: string } }),
      );
    const broken = await send('{"subscriberId":"json-1",}');
    assert.equal(broken.status, 400);
    assert.match(broken.body.message, /^Body is not valid JSON: .*position 25/);
    for (const body of ['{"subscriberId":"json-2","__proto__":{"admin":true}}', '{"subscriberId":"json-2","data":{"constructor":{"prototype":{"admin":true}}}}', '{"subscriberId":"json-2","\\u005f_proto__":{}}', '\uFEFF{"subscriberId":"json-2","__proto__":{}}']) {
      const r = await send(body);
      assert.equal(r.status, 400, body);
      assert.match(r.body.message, /^Body holds a key that is not allowed: __proto__/, body);
      assert.equal(r.body.path, '/v2/subscribers');
    }
    assert.equal((await server.get('/v2/subscribers/json-2')).status, 404, 'nothing was written');
    const fine = await send('{"subscriberId":"json-3","data":{"constructor":"a word like any other"}}');
    assert.equal(fine.status, 201, JSON.stringify(fine.body));
  });
});
