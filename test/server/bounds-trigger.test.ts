import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, KEYS, sqlOn, TestServer } from './helpers.ts';
import { createWorkflow, triggerEvent } from './fixtures.ts';
import { sleep, waitFor } from './engine-fixtures.ts';
import { databaseBytes, incompressible, probe } from './bounds-fixtures.ts';

// A byte budget per trigger: its payload is stored once (not once per message and job), a trigger
// whose payload x recipients x steps passes NOTIF_MAX_TRIGGER_BYTES is refused with a 422 naming
// the limit, and the fan-out and the feed's assembly yield by bytes, so that while a large trigger
// runs (or a page of large messages is put together) /health and another organization's feed are
// never stalled and never refused: every answer 200, and their p99 within STALL_MS of what the same
// probes measure just before (before these fixes: seconds, and 503s). That bound catches a stall
// whatever else the machine runs; the latency budget itself (p99 within 50 ms and 100 ms) is a
// figure for a quiet machine, which the test prints (its diagnostics) but does not assert. On
// PostgreSQL too (TEST_DATABASE_URL).

const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `step ${i}`, type: 'in_app', controlValues: { subject: `{{payload.title}} ${i}`, body: 'b' } }));
const recipients = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe('a trigger past the byte budget', () => {
  /** The budget set here: 1 MiB of payload x recipients x steps. */
  const BUDGET = 1024 * 1024;
  const PAYLOAD_BYTES = 100_000;
  let server: TestServer;
  before(async () => {
    server = await new TestServer({ NOTIF_MAX_TRIGGER_BYTES: String(BUDGET) }).start(['--no-seed']);
    await createWorkflow(server, { workflowId: 'three', name: 'Three', steps: steps(3) });
  });
  after(async () => server?.dispose());

  it('is refused with a 422 naming NOTIF_MAX_TRIGGER_BYTES, and writes nothing; one within it runs', async () => {
    const payload = { title: 'over', blob: incompressible(PAYLOAD_BYTES) };
    // 100 KB x 4 recipients x 3 steps = 1.2 MB, past the budget.
    const refused = await server.post('/v1/events/trigger', { name: 'three', to: recipients('over', 4), payload, transactionId: 'over-budget' });
    const body = expectErrorBody(refused, 422);
    assert.match(body.message, /NOTIF_MAX_TRIGGER_BYTES|1[,. ]?048[,. ]?576/, `the limit is named: ${body.message}`);
    const written = await server.get('/v1/notifications', { query: { transactionId: 'over-budget' } });
    assert.equal(written.status, 200);
    assert.equal(written.body.data.length, 0, 'no notification was recorded');
    // 100 KB x 3 recipients x 3 steps = 900 KB, within it.
    await triggerEvent(server, { name: 'three', to: recipients('within', 3), payload });
  });
});

describe('a large trigger within the budget', { timeout: 120_000 }, () => {
  // 250 KB x 20 recipients x 5 in-app steps: within a budget set large enough (64 MiB).
  const PAYLOAD_BYTES = 250_000;
  const RECIPIENTS = 20;
  const STEPS = 5;
  /** The most a probe's p99 may grow while the large work runs: a stall, not a busy machine's noise. */
  const STALL_MS = 1500;
  /** Answers each probe has at least before it stops. */
  const MIN_ANSWERS = 3;
  let server: TestServer;
  const feedUrl = () => `${server.url}/v1/subscribers/reader/notifications/feed?limit=20`;
  const otherOrganization = { authorization: `ApiKey ${KEYS.other}` };

  before(async () => {
    server = await new TestServer({ NOTIF_MAX_TRIGGER_BYTES: String(64 * 1024 * 1024) }).start(['--no-seed']);
    await createWorkflow(server, { workflowId: 'large', name: 'Large', steps: steps(STEPS) });
    await createWorkflow(server, { workflowId: 'note', name: 'Note', steps: steps(1) }, KEYS.other);
    await createWorkflow(server, { workflowId: 'single', name: 'Single', steps: steps(1) });
    for (let i = 0; i < 5; i++) await triggerEvent(server, { name: 'note', to: 'reader', payload: { title: `note ${i}` } }, KEYS.other);
    // Warm: the first requests compile schemas and fill caches.
    for (let i = 0; i < 20; i++) {
      await fetch(`${server.url}/health`).then((r) => r.arrayBuffer());
      await fetch(feedUrl(), { headers: otherOrganization }).then((r) => r.arrayBuffer());
    }
  });
  after(async () => server?.dispose());

  it('stores its payload once, not once per notification, job and message', async (t) => {
    const payloadBytes = 200_000;
    const bytesBefore = await databaseBytes(server, sqlOn);
    // 200 KB x 10 recipients x 5 steps (today: 11 copies per recipient, 22 MB).
    await triggerEvent(server, { name: 'large', to: recipients('stored', 10), payload: { title: 'stored', blob: incompressible(payloadBytes) } });
    const grown = (await databaseBytes(server, sqlOn)) - bytesBefore;
    t.diagnostic(`the database grew by ${(grown / 1e6).toFixed(2)} MB`);
    // The payload once, a few times over at most for the rows and indexes around it.
    const allowed = 4 * payloadBytes + 2_000_000;
    assert.ok(grown <= allowed, `the database grew by ${grown} bytes for one ${payloadBytes}-byte payload to 10 recipients x ${STEPS} steps (at most ${allowed})`);
  });

  /** /health and the other organization's feed probed for 3 s with nothing else running: what this machine adds by itself. */
  async function quietFigures() {
    const health = probe(`${server.url}/health`, 20);
    const feed = probe(feedUrl(), 50, otherOrganization);
    await sleep(3000);
    return { health: await health.stop(), feed: await feed.stop() };
  }

  it("/health and another organization's feed stay fast while it runs", async (t) => {
    // The same probes first, with nothing else running: what this machine adds by itself.
    const quiet = await quietFigures();

    const health = probe(`${server.url}/health`, 20);
    const feed = probe(feedUrl(), 50, otherOrganization);
    const started = Date.now();
    const answer = await server.post('/v1/events/trigger', {
      name: 'large',
      to: recipients('large', RECIPIENTS),
      payload: { title: 'large', blob: incompressible(PAYLOAD_BYTES) },
    });
    const answeredMs = Date.now() - started;
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    // Until every message is written (a service may answer before its fan-out ends).
    await waitFor(
      'every message written',
      async () => {
        const [{ n }] = await sqlOn(server, `select count(*) as n from messages where transaction_id = ? and channel = 'in_app'`, [answer.body.transactionId]);
        return Number(n) === RECIPIENTS * STEPS || undefined;
      },
      60_000,
      250,
    );
    // A quick trigger (a fast machine writes it in tens of milliseconds) can end before a probe
    // asked once: each probe answers a few times before it stops, so there is a figure to judge.
    await waitFor('the probes to answer', async () => (health.latencies.length >= MIN_ANSWERS && feed.latencies.length >= MIN_ANSWERS) || undefined, 10_000, 20);
    const during = { health: await health.stop(), feed: await feed.stop() };
    t.diagnostic(`answered in ${answeredMs} ms, all written in ${Date.now() - started} ms`);
    t.diagnostic(`before: /health ${JSON.stringify(quiet.health)}; feed ${JSON.stringify(quiet.feed)}`);
    t.diagnostic(`during: /health ${JSON.stringify(during.health)}; feed ${JSON.stringify(during.feed)}`);
    assert.deepEqual(Object.keys(during.health.statuses), ['200'], `every /health answered 200: ${JSON.stringify(during.health.statuses)}`);
    assert.deepEqual(Object.keys(during.feed.statuses), ['200'], `every feed of the other organization answered 200: ${JSON.stringify(during.feed.statuses)}`);
    assert.ok(during.health.p99 <= STALL_MS + quiet.health.p99, `/health p99 ${during.health.p99} ms while it ran (${quiet.health.p99} ms before)`);
    assert.ok(during.feed.p99 <= STALL_MS + quiet.feed.p99, `the other organization's feed p99 ${during.feed.p99} ms while it ran (${quiet.feed.p99} ms before)`);
  });

  it("a feed page of ten 1 MB messages is put together without stalling /health or another organization's feed", async (t) => {
    const PAGES = 4;
    for (let i = 0; i < 10; i++) await triggerEvent(server, { name: 'single', to: 'heavy', payload: { title: `heavy ${i}`, blob: incompressible(1_000_000) } });
    const quiet = await quietFigures();

    const health = probe(`${server.url}/health`, 20);
    const feed = probe(feedUrl(), 50, otherOrganization);
    const started = Date.now();
    // The pages' bodies are read whole meanwhile, and parsed only once the probes have stopped: parsing
    // 10 MB of JSON holds this process's event loop for a tenth of a second or more, and the probes
    // answered then would count it against the service.
    const bodies: ArrayBuffer[] = [];
    for (let i = 0; i < PAGES; i++) {
      // As a browser asks: compressed if the service will.
      const page = await fetch(`${server.url}/v1/subscribers/heavy/notifications/feed?limit=10`, { headers: { authorization: `ApiKey ${KEYS.a}`, 'accept-encoding': 'br, gzip' } });
      assert.equal(page.status, 200);
      bodies.push(await page.arrayBuffer());
    }
    const during = { health: await health.stop(), feed: await feed.stop() };
    for (const body of bodies) assert.equal(JSON.parse(new TextDecoder().decode(body)).data.length, 10);
    t.diagnostic(`${PAGES} pages of about 10 MB in ${Date.now() - started} ms`);
    t.diagnostic(`before: /health ${JSON.stringify(quiet.health)}; feed ${JSON.stringify(quiet.feed)}`);
    t.diagnostic(`during: /health ${JSON.stringify(during.health)}; feed ${JSON.stringify(during.feed)}`);
    assert.deepEqual(Object.keys(during.health.statuses), ['200'], `every /health answered 200: ${JSON.stringify(during.health.statuses)}`);
    assert.deepEqual(Object.keys(during.feed.statuses), ['200'], `every feed of the other organization answered 200: ${JSON.stringify(during.feed.statuses)}`);
    assert.ok(during.health.p99 <= STALL_MS + quiet.health.p99, `/health p99 ${during.health.p99} ms while the pages were put together (${quiet.health.p99} ms before)`);
    assert.ok(during.feed.p99 <= STALL_MS + quiet.feed.p99, `the other organization's feed p99 ${during.feed.p99} ms meanwhile (${quiet.feed.p99} ms before)`);
  });
});
