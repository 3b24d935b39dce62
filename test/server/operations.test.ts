import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dropDatabase, expectErrorBody, sqlOn, startServer, TestServer } from './helpers.ts';
import { activeIntegrations, createWorkflow, delayedInAppWorkflow, triggerEvent } from './fixtures.ts';
import { closedPort, dbQuery, waitFor } from './engine-fixtures.ts';
import { connect } from 'node:net';
import { ensureSubscriber } from './fixtures.ts';
import { openStream } from './stream-fixtures.ts';

// Running it: /health (alive), /ready (database reachable, migrations applied), /metrics
// (Prometheus text, behind a token), JSON logs with request ids and no secrets, 503 with
// Retry-After under pressure, and a SIGTERM that lets in-flight work finish.

const TOKEN = 'metrics-secret-token';

/** One sample of a metric from Prometheus text, by name and (some of) its labels. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const has = Object.entries(labels).every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`));
    if (has) return Number(m[3]);
  }
  return undefined;
}

describe('health, readiness, metrics and logs', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ NOTIF_METRICS_TOKEN: TOKEN, NOTIF_LOG_LEVEL: 'info', NOTIF_ALLOW_PRIVATE_WEBHOOKS: '1' });
    await activeIntegrations(server, ['chat-webhook']);
  });
  after(() => server.dispose());

  it('/health answers alive with a request id; /ready says the database is there and migrated', async () => {
    const health = await server.get('/health', { key: null });
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { ok: true });
    assert.match(health.headers.get('x-request-id') ?? '', /^[\w.:-]{8,}$/);
    const ready = await server.get('/ready', { key: null });
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { ok: true });
  });

  it('/metrics needs the token (and a token under 32 characters is warned of at start)', async () => {
    assert.match(server.output(), /warning: the metrics token has fewer than 32 characters/);
    expectErrorBody(await server.get('/metrics', { key: null }), 401);
    expectErrorBody(await server.get('/metrics', { key: null, headers: { authorization: 'Bearer wrong' } }), 401);
    expectErrorBody(await server.get('/metrics', { key: null, headers: { authorization: `ApiKey ${TOKEN}` } }), 401);
  });

  it('/metrics: request durations by route, connections, due and running jobs, scheduler lateness, webhook failures', async () => {
    await createWorkflow(server, {
      workflowId: 'ops-chat',
      name: 'Ops chat',
      steps: [{ name: 'chat', type: 'chat', controlValues: { body: 'hi' } }],
    });
    await delayedInAppWorkflow(server, 'ops-later', 1, 'later', 'Ops later');
    await triggerEvent(server, { name: 'ops-chat', to: 'ops-1' });
    const port = await closedPort();
    const creds = await server.patch('/v1/subscribers/ops-1/credentials', { providerId: 'chat-webhook', credentials: { webhookUrl: `http://127.0.0.1:${port}/hook` } });
    assert.equal(creds.status, 200, JSON.stringify(creds.body));
    await triggerEvent(server, { name: 'ops-chat', to: 'ops-1' });
    const later = await triggerEvent(server, { name: 'ops-later', to: 'ops-1' });
    for (let i = 0; i < 3; i++) assert.equal((await server.get('/v2/subscribers/ops-1')).status, 200);

    const scrape = async () => {
      const r = await server.get('/metrics', { key: null, headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
      return r.body as string;
    };
    let text = await scrape();
    assert.equal(sample(text, 'notif_http_request_duration_seconds_count', { method: 'GET', route: '/v2/subscribers/:subscriberId', status_code: '200' }), 3);
    assert.ok(sample(text, 'notif_http_request_duration_seconds_bucket', { route: '/v1/events/trigger', status_code: '201', le: '+Inf' })! >= 3);
    assert.ok(sample(text, 'notif_http_open_connections')! >= 1);
    assert.equal(sample(text, 'notif_webhook_failures_total'), 1);
    assert.equal(sample(text, 'notif_jobs_due'), 0);
    assert.equal(sample(text, 'notif_jobs_running'), 0, 'a waiting delay is held by no process');
    assert.ok(sample(text, 'notif_process_resident_memory_bytes')! > 0);
    assert.doesNotMatch(text, /ops-1/, 'no subscriber id in a label');

    await waitFor('the delay to end', async () => {
      const [job] = await dbQuery(server, `SELECT status FROM jobs WHERE transaction_id = ? AND step_index = 1`, [later.transactionId]);
      return job?.status === 'completed' ? true : undefined;
    });
    text = await scrape();
    assert.equal(sample(text, 'notif_scheduler_lateness_seconds_count'), 1);
    assert.ok(sample(text, 'notif_scheduler_lateness_seconds_sum')! < 1, 'ended within a second of its due time');
  });

  it('logs one JSON line per request with its id, never the API key or message content', async () => {
    await createWorkflow(server, { workflowId: 'ops-secret', name: 'Ops secret', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'TOP-SECRET-BODY {{payload.code}}' } }] });
    const r = await server.post('/v1/events/trigger', { name: 'ops-secret', to: 'ops-2', payload: { code: 'PAYLOAD-SECRET' } }, { headers: { 'x-request-id': 'lb-req-42' } });
    assert.equal(r.status, 201);
    assert.equal(r.headers.get('x-request-id'), 'lb-req-42');
    const feed = await server.get('/v1/subscribers/ops-2/notifications/feed');
    assert.match(JSON.stringify(feed.body), /TOP-SECRET-BODY PAYLOAD-SECRET/);
    const lines = () =>
      server
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{') && l.endsWith('}'))
        .map((l) => JSON.parse(l))
        .filter((l) => l.reqId === 'lb-req-42');
    // Logs are written asynchronously: wait for the request's last line.
    const mine = await waitFor('the log lines', async () => (lines().some((l) => l.res) ? lines() : undefined), 3000);
    assert.ok(mine.some((l) => l.req?.method === 'POST' && l.req?.url === '/v1/events/trigger'), 'the incoming request');
    assert.ok(mine.some((l) => l.res?.statusCode === 201 && typeof l.responseTime === 'number'), 'its completion');
    const all = server.output();
    assert.doesNotMatch(all, /test_key_a/, 'no API key');
    assert.doesNotMatch(all, /TOP-SECRET-BODY|PAYLOAD-SECRET/, 'no message content');
  });
});

describe('metrics are not served without a token', () => {
  it('/metrics is a 404 when no token is configured', async () => {
    const server = await startServer();
    try {
      expectErrorBody(await server.get('/metrics', { key: null }), 404);
    } finally {
      await server.dispose();
    }
  });
});

describe('readiness when the database is gone', () => {
  it('/ready answers 503 once migrations are missing or the database is unreachable; /health still 200', async () => {
    const server = await startServer();
    try {
      assert.equal((await server.get('/ready', { key: null })).status, 200);
      await sqlOn(server, `DELETE FROM kysely_migration WHERE name = ?`, ['0001_initial']);
      const unmigrated = expectErrorBody(await server.get('/ready', { key: null }), 503);
      // What kind of trouble only: the details (here the migration's name) are in the log.
      assert.equal(unmigrated.message, 'Not ready: migrations not applied');
      await sqlOn(server, `INSERT INTO kysely_migration (name, timestamp) VALUES (?, ?)`, ['0001_initial', new Date().toISOString()]);
      assert.equal((await server.get('/ready', { key: null })).status, 200);

      if (server.postgres) {
        // The database dropped under the server (WITH FORCE ends its connections).
        await dropDatabase(process.env.TEST_DATABASE_URL!, new URL(server.dbPath).pathname.slice(1));
      } else {
        // SQLite: the file is gone (a volume unmounted, a wrong clean-up).
        const { rmSync } = await import('node:fs');
        rmSync(server.dbPath);
      }
      const gone = expectErrorBody(await server.get('/ready', { key: null }), 503);
      // Not the database's own error text (it names hosts, users, databases).
      assert.equal(gone.message, server.postgres ? 'Not ready: database unreachable' : 'Not ready: the database file is gone');
      assert.equal(gone.statusCode, 503);
      assert.equal((await server.get('/health', { key: null })).status, 200);
    } finally {
      await server.dispose();
    }
  });
});

describe('overload', () => {
  it('answers 503 with Retry-After past a limit (heap here), the error body of decisions.md; /health still answers', async () => {
    const server = await startServer({ NOTIF_MAX_HEAP_BYTES: '1' });
    try {
      const r = await waitFor('the first memory sample', async () => {
        const reply = await server.get('/v2/subscribers');
        return reply.status === 503 ? reply : undefined;
      }, 5000);
      expectErrorBody(r, 503);
      assert.equal(r.headers.get('retry-after'), '5');
      assert.equal((await server.get('/health', { key: null })).status, 200);
    } finally {
      await server.dispose();
    }
  });
});

describe('graceful shutdown', () => {
  it('SIGTERM ends open streams and closes a connection that sent no request (a client\'s spare one) at once', async () => {
    const server = await startServer();
    try {
      await ensureSubscriber(server, 'stop-streams');
      const stream = await openStream(server, 'stop-streams');
      await stream.next((e) => e.event === 'unseen');
      // What a client leaves after dropping a stream: a connection that sends nothing (yet).
      const { hostname, port } = new URL(server.url);
      const spare = connect(Number(port), hostname);
      await new Promise((resolve) => spare.once('connect', resolve));
      const spareClosed = new Promise((resolve) => spare.once('close', resolve));
      const t0 = Date.now();
      await server.stop(); // SIGTERM
      const took = Date.now() - t0;
      await stream.ended;
      await spareClosed;
      assert.match(server.output(), /stopped/);
      assert.doesNotMatch(server.output(), /shutdown took over/);
      assert.ok(took < 6000, `stopped in ${took} ms (Node's headers timeout would hold it 10 s)`);
    } finally {
      await server.dispose();
    }
  });

  it('SIGTERM lets a large trigger in flight finish every step, then the process exits', async () => {
    // Draining is what is tested, not its time limit: 1,200 writes on a busy machine (PostgreSQL,
    // each also telling open streams) may take longer than the default 10 s.
    const server = await startServer({ NOTIF_SHUTDOWN_TIMEOUT_MS: '120000' });
    try {
      await createWorkflow(server, {
        workflowId: 'ops-big',
        name: 'Ops big',
        steps: Array.from({ length: 20 }, (_, i) => ({ name: `s${i}`, type: 'in_app', controlValues: { body: `step ${i}` } })),
      });
      const to = Array.from({ length: 60 }, (_, i) => `drain-${i}`);
      const inFlight = server.post('/v1/events/trigger', { name: 'ops-big', to });
      await waitFor('the trigger to be under way', async () => {
        const [row] = await dbQuery(server, `SELECT COUNT(*) AS n FROM messages WHERE template_identifier = 'ops-big'`);
        return Number(row.n) > 0 ? true : undefined;
      }, 10_000, 10);
      const stopped = server.stop(); // SIGTERM
      const answer = await inFlight;
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      await stopped;
      assert.match(server.output(), /stopped/);
      const [row] = await dbQuery(server, `SELECT COUNT(*) AS n FROM messages WHERE template_identifier = 'ops-big'`);
      assert.equal(Number(row.n), to.length * 20, 'every step of every run written before the exit');
      const left = await dbQuery(server, `SELECT id FROM jobs WHERE status <> 'completed'`);
      assert.equal(left.length, 0);
    } finally {
      await server.dispose();
    }
  });
});
