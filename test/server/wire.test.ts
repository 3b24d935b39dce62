import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { KEYS, startServer, type TestServer } from './helpers.ts';
import { getFeed, inAppWorkflow, sendMessages } from './fixtures.ts';

// The lean wire: compressed answers when the request accepts them, and the feed's projection
// (`fields`, an extension: a spec server ignores it) that the elements send.

/** One GET with exactly these headers (fetch would add and undo its own accept-encoding): status, headers, raw bytes. */
function rawGet(server: TestServer, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; bytes: Buffer }>((resolve, reject) => {
    const req = httpRequest(server.url + path, { headers: { authorization: `ApiKey ${KEYS.a}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** What the elements ask for (src/store/feed-pages.ts FEED_FIELDS). */
const ELEMENT_FIELDS = '_id,subject,content,createdAt,read,seen,avatar,cta,templateIdentifier,transactionId,payload';

describe('the wire: compression and the feed projection', () => {
  let server: TestServer;
  const feed = `/v1/subscribers/reader/notifications/feed?limit=20`;
  before(async () => {
    server = await startServer();
    await inAppWorkflow(server, 'comment', {
      subject: '{{payload.author}} commented',
      body: '{{payload.comment}}',
      primaryAction: { label: 'Reply' },
      secondaryAction: { label: 'Dismiss' },
    });
    await sendMessages(server, {
      workflowId: 'comment',
      subscriberId: 'reader',
      count: 20,
      payload: (i) => ({ author: `Author ${i}`, comment: `Comment number ${i}, with a little more text to be realistic.` }),
    });
  });
  after(() => server.dispose());

  it('compresses with brotli or gzip as asked, and not at all when not asked', async () => {
    const plain = await rawGet(server, feed, {});
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    const body = JSON.parse(plain.bytes.toString('utf8'));
    assert.equal(body.data.length, 20);

    const br = await rawGet(server, feed, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.match(String(br.headers.vary), /accept-encoding/i);
    assert.deepEqual(JSON.parse(brotliDecompressSync(br.bytes).toString('utf8')), body);
    assert.ok(br.bytes.length * 5 < plain.bytes.length, `br ${br.bytes.length} B vs ${plain.bytes.length} B`);

    const gzip = await rawGet(server, feed, { 'accept-encoding': 'gzip' });
    assert.equal(gzip.headers['content-encoding'], 'gzip');
    assert.deepEqual(JSON.parse(gunzipSync(gzip.bytes).toString('utf8')), body);

    const identity = await rawGet(server, feed, { 'accept-encoding': 'identity' });
    assert.equal(identity.headers['content-encoding'], undefined);
    assert.deepEqual(identity.bytes, plain.bytes);
  });

  it('honours q-values: a refused encoding is never used, the other one is', async () => {
    const noBr = await rawGet(server, feed, { 'accept-encoding': 'br;q=0, gzip;q=0.5' });
    assert.equal(noBr.headers['content-encoding'], 'gzip');
    const none = await rawGet(server, feed, { 'accept-encoding': 'gzip;q=0, br;q=0.0' });
    assert.equal(none.headers['content-encoding'], undefined);
    assert.equal(JSON.parse(none.bytes.toString('utf8')).data.length, 20);
    const star = await rawGet(server, feed, { 'accept-encoding': '*' });
    assert.equal(star.headers['content-encoding'], 'br');
    assert.equal(JSON.parse(brotliDecompressSync(star.bytes).toString('utf8')).data.length, 20);
  });

  it('leaves small answers uncompressed (under 1 KB)', async () => {
    const r = await rawGet(server, '/v1/subscribers/reader/notifications/unseen', { 'accept-encoding': 'br, gzip' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-encoding'], undefined);
    assert.deepEqual(JSON.parse(r.bytes.toString('utf8')), { count: 20 });
  });

  it('without a projection a message is the full Message, subscriber and template embedded', async () => {
    const { data } = await getFeed(server, 'reader', { limit: 20 });
    for (const m of data) {
      for (const key of ['_id', '_templateId', '_environmentId', '_organizationId', '_notificationId', '_subscriberId', 'subscriber', 'template', 'createdAt', 'updatedAt', 'deliveredAt', 'content', 'channel', 'read', 'seen', 'cta', 'status', 'payload', 'overrides', 'transactionId']) {
        assert.ok(key in m, `${key} in the message`);
      }
      assert.equal(m.subscriber.subscriberId, 'reader');
      assert.equal(m.template.triggers[0].identifier, 'comment');
    }
    // Every message of the page embeds the same subscriber and template.
    assert.deepEqual(data[0].template, data[19].template);
  });

  it('with `fields` a message has only the named fields and `_id`; the paging fields stay', async () => {
    const full = await getFeed(server, 'reader', { limit: 20 });
    const body = await getFeed(server, 'reader', { limit: 20, fields: ELEMENT_FIELDS });
    assert.deepEqual({ ...body, data: undefined }, { ...full, data: undefined });
    assert.equal(body.data.length, 20);
    body.data.forEach((m, i) => {
      const f = full.data[i];
      const expected = Object.fromEntries(ELEMENT_FIELDS.split(',').filter((k) => k in f).map((k) => [k, f[k]]));
      assert.deepEqual(m, expected);
    });
    // Repeated, with an embed and an unknown name (ignored), still `_id` first.
    const some = await getFeed(server, 'reader', { limit: 2, fields: ['read', 'subscriber,nonsense'] });
    assert.deepEqual(Object.keys(some.data[0]).sort(), ['_id', 'read', 'subscriber']);
    assert.equal(some.data[0].subscriber.subscriberId, 'reader');
    const template = await getFeed(server, 'reader', { limit: 2, fields: 'template' });
    assert.deepEqual(Object.keys(template.data[0]).sort(), ['_id', 'template']);
    assert.equal(template.data[0].template.triggers[0].identifier, 'comment');
    // Names every object inherits are unknown names too: ignored, never a 500 (they named no column).
    for (const name of ['toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf']) {
      for (const named of [name, `${name},read`, `subscriber,${name}`]) {
        const r = await server.get('/v1/subscribers/reader/notifications/feed', { query: { limit: 2, fields: named } });
        assert.equal(r.status, 200, `fields=${named}: ${r.status} ${JSON.stringify(r.body)}`);
        assert.deepEqual(Object.keys(r.body.data[0]).sort(), ['_id', ...named.split(',').filter((k) => k != name)].sort(), `fields=${named}`);
      }
    }
  });

  it('a page of 20 as the elements ask for it is at most 8 KB on the wire (gzip)', async () => {
    const r = await rawGet(server, `${feed}&fields=${ELEMENT_FIELDS}`, { 'accept-encoding': 'gzip' });
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.ok(r.bytes.length <= 8 * 1024, `${r.bytes.length} B`);
  });

  it('answers a projection of another environment\'s subscriber with 404, and a bad one with 422', async () => {
    const other = await server.get('/v1/subscribers/reader/notifications/feed', { key: KEYS.b, query: { fields: '_id' } });
    assert.equal(other.status, 404);
    const long = await server.get('/v1/subscribers/reader/notifications/feed', { query: { fields: 'x'.repeat(1001) } });
    assert.equal(long.status, 422);
    assert.ok(long.body.errors);
  });
});
