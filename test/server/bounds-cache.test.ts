import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer } from './helpers.ts';
import { createWorkflow, getFeed, triggerEvent } from './fixtures.ts';

// The feed's answer cache is keyed only on the projection's known fields: `fields=` names the
// Message does not have change nothing in the answer, so they must not make a new entry each. Else
// one end user asking pages with new made-up names evicts every other subscriber's kept page
// (2,500 such requests evicted 50 subscribers' pages from the default 32 MB in under 7 s). On
// PostgreSQL too (TEST_DATABASE_URL).

/** What the feed asks for (src/store/store.ts). */
const FEED_FIELDS = '_id,subject,content,createdAt,read,seen,avatar,cta,templateIdentifier,transactionId,payload';
const OTHERS = Array.from({ length: 50 }, (_, i) => `other-${i}`);
/** Requests with made-up names: each page of 100 is about 40 KB uncompressed, so these ask for 12 MB in all. */
const MADE_UP = 300;

interface CacheStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
}

describe('the feed answer cache and unknown projection fields', { timeout: 120_000 }, () => {
  let server: TestServer;
  const stats = async (): Promise<CacheStats> => (await server.get('/__feed-cache', { key: null })).body;

  before(async () => {
    // A 4 MB cache: a tenth of the requests below would fill it.
    server = await new TestServer({ NOTIF_FEED_CACHE_MB: '4' }).start(['--no-seed', '--faults']);
    await createWorkflow(server, {
      workflowId: 'note',
      name: 'Note',
      steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'Hello {{payload.n}}', body: 'A message of a usual length, number {{payload.n}}', primaryAction: { label: 'Open' } } }],
    });
    for (let n = 0; n < 20; n++) await triggerEvent(server, { name: 'note', to: OTHERS, payload: { n } });
    for (let n = 0; n < 100; n++) await triggerEvent(server, { name: 'note', to: 'mallory', payload: { n } });
  });
  after(async () => server?.dispose());

  it("made-up names in `fields` make no new entries, and evict no other subscriber's page", async (t) => {
    for (const subscriberId of OTHERS) await getFeed(server, subscriberId, { limit: 20, fields: FEED_FIELDS });
    const kept = await stats();

    // One end user, pages of 100 uncompressed (a client that does not ask for compression), each with a new made-up name.
    let first: unknown;
    for (let i = 0; i < MADE_UP; i++) {
      const page = await server.get('/v1/subscribers/mallory/notifications/feed', {
        query: { limit: 100, fields: `${FEED_FIELDS},madeUp${i}` },
        headers: { 'accept-encoding': 'identity' },
      });
      assert.equal(page.status, 200);
      first ??= page.body;
      if (i === MADE_UP - 1) assert.deepEqual(page.body, first, 'a made-up name changes nothing in the answer');
    }
    const flooded = await stats();
    t.diagnostic(`before: ${kept.entries} entries, ${kept.bytes} bytes; after ${MADE_UP} made-up lists: ${flooded.entries} entries, ${flooded.bytes} bytes of ${flooded.maxBytes}`);

    // Every other subscriber's page is still kept: asked again, each is a hit.
    for (const subscriberId of OTHERS) await getFeed(server, subscriberId, { limit: 20, fields: FEED_FIELDS });
    const hits = (await stats()).hits - flooded.hits;
    assert.equal(hits, OTHERS.length, `${OTHERS.length - hits} of ${OTHERS.length} other subscribers' pages were evicted`);
    assert.ok(flooded.entries - kept.entries <= 1, `${flooded.entries - kept.entries} entries for one page asked with ${MADE_UP} made-up names`);
  });
});
