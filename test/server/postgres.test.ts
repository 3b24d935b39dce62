import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { dropDatabase, expectErrorBody, KEYS, startServer, TestServer } from './helpers.ts';
import { getFeed, inAppWorkflow, triggerEvent } from './fixtures.ts';
import { waitFor } from './engine-fixtures.ts';
import { sql } from 'kysely';
import { openDatabase } from '../../server/src/db/index.ts';
import { unseenCounter } from '../../server/src/db/read.ts';
import { Feed } from '../../server/src/inbox/feed.ts';
import { markMessages, setActionStatus } from '../../server/src/inbox/messages.ts';
import { FEED_ITEM_COLUMNS } from '../../server/src/inbox/views.ts';
import { FEED_FIELDS } from '../../src/store/feed-pages.ts';

// PostgreSQL specifics, with TEST_DATABASE_URL=postgres://... (scripts/ci-postgres.sh prints one;
// `npm run test:server:pg` runs the whole suite there). Skipped on SQLite runs.

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? '';
const skip = /^postgres(ql)?:\/\//.test(ADMIN_URL) ? false : 'needs TEST_DATABASE_URL=postgres://...';

async function withClient<T>(url: string, fn: (client: import('pg').Client) => Promise<T>): Promise<T> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

describe('PostgreSQL: one database, two server processes', { skip }, () => {
  const name = `notif_test_${randomBytes(6).toString('hex')}`;
  const url = databaseUrl(name);
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    await withClient(ADMIN_URL, (c) => c.query(`CREATE DATABASE "${name}"`));
    // Both start at once on the empty database: migrations and key registration run one process at a time.
    a = new TestServer({}, url);
    b = new TestServer({}, url);
    await Promise.all([a.start(), b.start()]);
  });
  after(async () => {
    await Promise.all([a?.dispose(), b?.dispose()]);
    await dropDatabase(ADMIN_URL, name);
  });

  it('migrated the schema once, with the portable column types', async () => {
    await withClient(url, async (c) => {
      const applied = await c.query('SELECT name FROM kysely_migration ORDER BY name');
      assert.ok(applied.rows.length >= 1);
      assert.equal(new Set(applied.rows.map((r) => r.name)).size, applied.rows.length, 'each migration once');
      const { rows } = await c.query(
        `SELECT table_name, column_name, data_type FROM information_schema.columns
          WHERE table_schema = 'public' AND (table_name, column_name) IN
            (('jobs', 'run_at'), ('jobs', 'locked_until'), ('idempotency_keys', 'created_at'), ('messages', 'read'),
             ('integrations', 'primary'), ('notifications', 'to'), ('notifications', 'payload'))`,
      );
      const type = (t: string, col: string) => rows.find((r) => r.table_name === t && r.column_name === col)?.data_type;
      assert.equal(type('jobs', 'run_at'), 'bigint');
      assert.equal(type('jobs', 'locked_until'), 'bigint');
      assert.equal(type('idempotency_keys', 'created_at'), 'bigint');
      assert.equal(type('messages', 'read'), 'integer');
      assert.equal(type('integrations', 'primary'), 'integer');
      assert.equal(type('notifications', 'to'), 'text');
      assert.equal(type('notifications', 'payload'), 'text');
      const unique = await c.query(
        `SELECT conname FROM pg_constraint WHERE contype IN ('u', 'p') AND conname IN
          ('subscribers_env_subscriber', 'integrations_env_identifier', 'workflows_env_workflow', 'idempotency_keys_pk')`,
      );
      assert.equal(unique.rows.length, 4);
      // Both processes registered the same keys at start: one organization and environment each.
      const orgs = await c.query(`SELECT name, count(*)::int AS n FROM organizations GROUP BY name ORDER BY name`);
      assert.deepEqual(orgs.rows, [
        { name: 'acme', n: 1 },
        { name: 'globex', n: 1 },
      ]);
      const envs = await c.query(`SELECT count(*)::int AS n FROM environments`);
      assert.equal(envs.rows[0].n, 3);
    });
  });

  it('serves what one process writes from the other', async () => {
    const wf = await a.post('/v2/workflows', {
      workflowId: 'pg-shared',
      name: 'Shared',
      steps: [
        { name: 'note', type: 'in_app', controlValues: { subject: 'Ünïcödé ✓', body: 'Hi {{payload.name}}' } },
        { name: 'wait', type: 'delay', controlValues: { amount: 1, unit: 'days' } },
      ],
    });
    assert.equal(wf.status, 201, JSON.stringify(wf.body));
    const t = await a.post('/v1/events/trigger', { name: 'pg-shared', to: { subscriberId: 'zoë', email: 'zoe@example.test' }, payload: { name: 'Zoë 👋' } });
    assert.equal(t.status, 201, JSON.stringify(t.body));
    const listed = await b.get('/v1/notifications', { query: { emails: 'ZOE@example.test' } });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.data.length, 1);
    const n = listed.body.data[0];
    assert.equal(n.transactionId, t.body.transactionId);
    assert.equal(n.subscriber.subscriberId, 'zoë');
    assert.deepEqual(n.payload, { name: 'Zoë 👋' });
    assert.deepEqual(
      n.jobs.map((j: any) => j.type),
      ['in_app', 'delay'],
    );
    const canceled = await b.delete(`/v1/events/trigger/${t.body.transactionId}`);
    assert.equal(canceled.body, true);
    const seen = await a.get(`/v1/notifications/${n._id}`);
    assert.equal(seen.body.jobs[1].status, 'canceled');
  });

  it('shares idempotency keys between the processes (the unique key and ON CONFLICT)', async () => {
    const body = { workflowId: 'pg-idem', name: 'Idem', steps: [] };
    const headers = { 'idempotency-key': 'pg-idem-1' };
    const first = await a.post('/v2/workflows', body, { headers });
    assert.equal(first.status, 201);
    const replay = await b.post('/v2/workflows', body, { headers });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get('idempotency-replay'), 'true');
    assert.deepEqual(replay.body, first.body);
    const clash = await b.post('/v2/workflows', { ...body, name: 'Other' }, { headers });
    assert.equal(clash.status, 422);
  });

  it('keeps one subscriber per subscriberId under concurrent triggers from both processes', async () => {
    await a.post('/v2/workflows', { workflowId: 'pg-race', name: 'Race', steps: [{ name: 'n', type: 'in_app', controlValues: { body: 'x' } }] });
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).post('/v1/events/trigger', { name: 'pg-race', to: 'racer', transactionId: `race-${i}` })),
    );
    for (const r of replies) assert.equal(r.status, 201, JSON.stringify(r.body));
    const count = await withClient(url, (c) => c.query(`SELECT count(*)::int AS n FROM subscribers WHERE subscriber_id = 'racer'`));
    assert.equal(count.rows[0].n, 1);
    const listed = await a.get('/v1/notifications', { query: { subscriberIds: 'racer', limit: 50 } });
    assert.equal(listed.body.data.length, 10);
  });

  it('keeps the data across a restart, with the migrations already done', async () => {
    await a.restart();
    const r = await a.get('/v1/notifications', { query: { subscriberIds: 'zoë' } });
    assert.equal(r.status, 200);
    assert.equal(r.body.data.length, 1);
    const other = await a.get('/v1/notifications', { key: KEYS.other });
    assert.deepEqual(other.body.data, []);
  });
});

describe('PostgreSQL: a database per test server', { skip }, () => {
  it('gives each TestServer its own database and drops it on dispose', async () => {
    const one = new TestServer();
    const two = new TestServer();
    assert.notEqual(one.dbPath, two.dbPath);
    assert.ok(one.postgres);
    const name = new URL(one.dbPath).pathname.slice(1);
    const exists = () => withClient(ADMIN_URL, async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1);
    try {
      await one.start();
      assert.equal(await exists(), true);
    } finally {
      await one.dispose();
      await two.dispose();
    }
    assert.equal(await exists(), false);
  });
});

describe('PostgreSQL: the hot reads as named statements', { skip }, () => {
  it('80 shapes of the feed, and connections the database ended, are all answered right', async () => {
    // The hot reads are named (prepared once per connection), a projection's page runs unnamed: a
    // feed asked for with 80 different projections and once without, and the unseen count, then
    // again after every connection of the service was ended (the pool makes new ones, which
    // prepare again), answer each the same.
    const server = await new TestServer().start(['--no-seed']);
    try {
      await inAppWorkflow(server, 'named-note', { subject: 'S {{payload.i}}', body: 'B {{payload.i}}' });
      for (let i = 0; i < 3; i++) await triggerEvent(server, { name: 'named-note', to: 'named', payload: { i } });
      const names = ['_id', 'subject', 'content', 'createdAt', 'read', 'seen', 'payload'];
      const shapes = Array.from({ length: 80 }, (_, i) => ['_id', ...names.filter((_, bit) => (i + 1) & (1 << bit))].join(',') + (i >= 64 ? ',cta' : ''));
      const read = async () => {
        const answers = [];
        for (const fields of [...shapes, undefined]) answers.push(JSON.stringify((await getFeed(server, 'named', fields ? { fields } : {})).data.map((m) => [m._id, m.subject, m.payload])));
        const count = await server.get('/v1/subscribers/named/notifications/unseen');
        assert.equal(count.status, 200);
        assert.equal(count.body.count, 3);
        return answers;
      };
      const first = await read();
      assert.equal(new Set(first).size > 1, true);
      const ended = await withClient(server.dbPath, async (c) =>
        (await c.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'notif-inbox'`)).rowCount,
      );
      assert.ok(ended! > 0, 'the service had connections to end');
      // The pool replaces the connections it hears were lost; a request may meet one just ended
      // before that, so wait until ten at once (on as many connections) are answered.
      const unseen = () => server.get('/v1/subscribers/named/notifications/unseen');
      await waitFor('the pool to reconnect', async () => ((await Promise.all(Array.from({ length: 10 }, unseen))).every((r) => r.status === 200) ? true : undefined), 5000);
      assert.deepEqual(await read(), first);
    } finally {
      await server.dispose();
    }
  });

  /**
   * A service serving one message ("S 1") to `subscriberId`; `alter` runs
   * on its database between `reads` before and after (a next version migrating under it).
   */
  async function migratedUnder<T>(subscriberId: string, alter: string, reads: (server: TestServer) => Promise<T>) {
    const server = await new TestServer().start(['--no-seed']);
    try {
      await inAppWorkflow(server, 'migrated', { subject: 'S {{payload.i}}', body: 'B' });
      await triggerEvent(server, { name: 'migrated', to: subscriberId, payload: { i: 1 } });
      const before = await reads(server);
      await withClient(server.dbPath, (c) => c.query(alter));
      return { before, after: await reads(server) };
    } finally {
      await server.dispose();
    }
  }

  it('a column another version adds to messages (a rolling deploy migrating) leaves the running service\'s feed answered', async () => {
    // Two migrations so far added a column to messages (job_key, seq). A process of the next
    // version migrates at start while this one still serves: a prepared `select *` of messages
    // then fails ("cached plan must not change result type") on each connection that prepared it.
    // Twenty at once: the page's query is prepared on several of the pool's connections.
    const { before, after } = await migratedUnder('widened', 'ALTER TABLE messages ADD COLUMN next_version_note text', (server) =>
      Promise.all(Array.from({ length: 20 }, () => server.get('/v1/subscribers/widened/notifications/feed'))),
    );
    assert.deepEqual(before.map((r) => r.status), Array(20).fill(200));
    assert.equal(before[0]!.body.data.length, 1);
    assert.deepEqual(after.map((r) => [r.status, r.body.data]), Array(20).fill([200, before[0]!.body.data]));
  });

  it('a column the named reads return changing type under the running service leaves every hot read answered', async () => {
    // A next version's migration may change a column's type. Every connection that prepared a
    // statement returning it then fails it ("cached plan must not change result type", 0A000):
    // the service prepares it again under a new name. A column the unprojected page returns: text to varchar.
    const { before, after } = await migratedUnder('retyped', 'ALTER TABLE messages ALTER COLUMN subject TYPE varchar(2000)', (server) =>
      Promise.all(
        Array.from({ length: 10 }, () => [server.get('/v1/subscribers/retyped/notifications/feed'), server.get('/v1/subscribers/retyped/notifications/unseen')]).flat(),
      ),
    );
    assert.deepEqual(new Set(before.map((r) => r.status)), new Set([200]));
    assert.deepEqual(
      after.map((r) => [r.status, r.body.data ?? r.body.count]),
      before.map((r) => [200, r.body.data ?? r.body.count]),
    );
    assert.equal(after[0]!.body.data[0].subject, 'S 1');
  });

  it('the page the elements ask for, and any part of its fields, is one named statement, its payloads and its subscriber\'s lookup others', async () => {
    // The service's own reads in this process, on a pool of one connection: the statements it
    // named are that connection's pg_prepared_statements.
    const server = await new TestServer().start(['--no-seed']);
    const db = await openDatabase({ location: server.dbPath, postgres: { poolSize: 1 } });
    try {
      await inAppWorkflow(server, 'elements-note', { subject: 'S {{payload.i}}', body: 'B {{payload.i}}' });
      for (let i = 0; i < 3; i++) await triggerEvent(server, { name: 'elements-note', to: 'elements', payload: { i } });
      await waitFor('the messages to be written', async () => ((await getFeed(server, 'elements')).totalCount === 3 ? true : undefined));
      const [tenant] = await db.kysely.selectFrom('subscribers').select(['organization_id', 'environment_id']).where('subscriber_id', '=', 'elements').execute();
      const feed = new Feed(db, { unseen: unseenCounter(db) });
      const page = async (fields: string) => {
        const answer = await feed.page({ organizationId: tenant!.organization_id, environmentId: tenant!.environment_id }, 'elements', { page: 0, limit: 20, fields: [fields] }, undefined);
        return JSON.parse(String(answer.body)) as { data: Record<string, unknown>[] };
      };
      const whole = await page(FEED_FIELDS);
      assert.deepEqual(whole.data.map((message) => message.payload), [{ i: 2 }, { i: 1 }, { i: 0 }], 'the payloads stored apart, read');
      const part = await page('_id,read,seen');
      assert.deepEqual(part.data.map((message) => Object.keys(message)), Array(3).fill(['_id', 'read', 'seen']), 'only the fields asked for');
      const named = (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db.kysely)).rows.map((row) => row.statement);
      const pages = named.filter((text) => /^select .* from "messages" where .* order by "created_at" desc/s.test(text));
      assert.equal(pages.length, 1, `one named text for both pages: ${JSON.stringify(named)}`);
      const columns = FEED_FIELDS.split(',').map((field) => FEED_ITEM_COLUMNS[field]);
      assert.deepEqual(columns.filter((column) => !pages[0]!.includes(`"${column}"`)), [], 'the text reads every column of the elements\' fields');
      assert.equal(named.filter((text) => text.includes('from "payloads"')).length, 1, `the payloads' read named: ${JSON.stringify(named)}`);
      assert.equal(named.filter((text) => text.includes('from "subscribers"')).length, 1, `the subscriber's lookup named: ${JSON.stringify(named)}`);
    } finally {
      await db.close();
      await server.dispose();
    }
  });

  it('marking one message or several and a CTA\'s action read the messages and their template by named statements, one text whatever the number of ids', async () => {
    const server = await new TestServer().start(['--no-seed']);
    const db = await openDatabase({ location: server.dbPath, postgres: { poolSize: 1 } });
    try {
      await inAppWorkflow(server, 'marked-note', { subject: 'S {{payload.i}}', body: 'B', primaryAction: { label: 'Go' } });
      for (let i = 0; i < 3; i++) await triggerEvent(server, { name: 'marked-note', to: 'marked', payload: { i } });
      const ids = await waitFor('the messages to be written', async () => {
        const { data } = await getFeed(server, 'marked');
        return data.length === 3 ? data.map((message) => message._id as string) : undefined;
      });
      const [tenantRow] = await db.kysely.selectFrom('subscribers').select(['organization_id', 'environment_id']).where('subscriber_id', '=', 'marked').execute();
      const tenant = { organizationId: tenantRow!.organization_id, environmentId: tenantRow!.environment_id };
      const one = await markMessages(db, tenant, 'marked', [ids[0]!], 'read');
      const all = await markMessages(db, tenant, 'marked', ids, 'seen');
      assert.deepEqual([one.map((message) => message.read), all.map((message) => message.seen)], [[true], [true, true, true]]);
      assert.deepEqual(all.map((message) => message.payload), [{ i: 2 }, { i: 1 }, { i: 0 }]);
      const acted = await setActionStatus(db, tenant, 'marked', ids[1]!, { type: 'primary', status: 'done' });
      assert.deepEqual([acted._id, acted.payload], [ids[1], { i: 1 }]);
      const named = (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db.kysely)).rows.map((row) => row.statement);
      const byIds = named.filter((text) => /from "messages" where "subscriber_id" = \$1 and "id" = any/.test(text));
      assert.equal(byIds.length, 2, `the ids checked and the messages read, each one text: ${JSON.stringify(named)}`);
      assert.equal(named.filter((text) => /from "messages" where "id" = \$1 and "subscriber_id" = \$2/.test(text)).length, 1, `the action's message: ${JSON.stringify(named)}`);
      assert.equal(named.filter((text) => text.includes('from "workflows"')).length, 1, `the embedded template's read: ${JSON.stringify(named)}`);
      assert.equal(acted.template?.triggers[0]?.identifier, 'marked-note');
    } finally {
      await db.close();
      await server.dispose();
    }
  });
});

// Runs on both databases: the same input gets the same answer whichever one is behind the service.
describe('input PostgreSQL cannot store (NUL characters)', () => {
  let server: TestServer;
  before(async () => (server = await startServer()));
  after(() => server.dispose());

  it('is refused with 422 and the field, before anything is written, on SQLite and PostgreSQL alike', async () => {
    const body = expectErrorBody(await server.post('/v2/subscribers', { subscriberId: 'a\u0000b' }), 422);
    assert.deepEqual(body.errors.subscriberId, { messages: ['must not contain NUL characters'], value: 'a\u0000b' });
    const nested = expectErrorBody(await server.post('/v1/events/trigger', { name: 'w', to: 'z', payload: { deep: ['ok', 'x\u0000'] } }), 422);
    assert.ok(nested.errors['payload.deep.1']);
    const query = expectErrorBody(await server.get('/v1/notifications', { query: { transactionId: 'tx\u0000' } }), 422);
    assert.ok(query.errors.transactionId);
    expectErrorBody(await server.delete('/v1/events/trigger/tx%00x'), 422);
    expectErrorBody(await server.get('/v2/subscribers/a%00b'), 422);
    const search = await server.get('/v2/subscribers', { query: { subscriberId: 'a' } });
    assert.equal(search.status, 200);
    assert.deepEqual(search.body.data, []);
  });
});
