import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KEYS, startServer, sqlOn, type TestServer } from './helpers.ts';
import { allMessages, createWorkflow, getFeed, inAppWorkflow, triggerEvent, unseenCount } from './fixtures.ts';

// The unseen count and the feed's totalCount stay exact under concurrent writes of every kind. On
// SQLite they come from counts kept by triggers (migration 0007); on PostgreSQL from counting. Both
// are compared with what the messages table holds, counted directly.

const SUBSCRIBERS = ['count-a', 'count-b', 'count-c'];

/** What the messages table holds for a subscriber's default feed (neither archived nor snoozed), counted directly. */
async function counted(server: TestServer, subscriberId: string) {
  const [row] = await sqlOn(
    server,
    `select count(*) as total, coalesce(sum(case when m.seen = 0 then 1 else 0 end), 0) as unseen,
       coalesce(sum(case when m.read = 0 then 1 else 0 end), 0) as unread
     from messages m join subscribers s on s.id = m.subscriber_id
     where s.subscriber_id = ? and m.channel = 'in_app' and m.archived = 0 and m.snoozed_until is null`,
    [subscriberId],
  );
  return { total: Number(row.total), unseen: Number(row.unseen), unread: Number(row.unread) };
}

/** What the API answers: the unseen and seen counts, and the feed's totalCount for each filter (a page of 1, so it is counted, not inferred). */
async function answered(server: TestServer, subscriberId: string) {
  const total = (query: Record<string, unknown>) => getFeed(server, subscriberId, { limit: 1, ...query }).then((b) => b.totalCount);
  return {
    unseen: await unseenCount(server, subscriberId, { limit: 1000 }),
    seen: await unseenCount(server, subscriberId, { seen: true, limit: 1000 }),
    total: await total({}),
    unreadFeed: await total({ read: false }),
    readFeed: await total({ read: true }),
    unseenFeed: await total({ seen: false }),
    seenFeed: await total({ seen: true }),
  };
}

async function assertExact(server: TestServer) {
  for (const s of SUBSCRIBERS) {
    const c = await counted(server, s);
    const a = await answered(server, s);
    assert.deepEqual(
      a,
      { unseen: c.unseen, seen: c.total - c.unseen, total: c.total, unreadFeed: c.unread, readFeed: c.total - c.unread, unseenFeed: c.unseen, seenFeed: c.total - c.unseen },
      `${s}: the table holds ${JSON.stringify(c)}`,
    );
  }
}

describe('counts: exact under concurrent writes', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await inAppWorkflow(server, 'counted', { subject: 'Hello {{payload.i}}', body: 'Body', primaryAction: { label: 'Accept' } });
    for (const s of SUBSCRIBERS) for (let i = 0; i < 6; i++) await triggerEvent(server, { name: 'counted', to: s, payload: { i } });
  });
  after(() => server.dispose());

  it('start exact', async () => {
    await assertExact(server);
    const [a] = await Promise.all([counted(server, 'count-a')]);
    assert.deepEqual(a, { total: 6, unseen: 6, unread: 6 });
  });

  it('stay exact through triggers, mark-as, mark-all, actions and deletes running at once', async () => {
    const ids = new Map<string, string[]>();
    for (const s of SUBSCRIBERS) ids.set(s, (await allMessages(server, s)).map((m) => m._id));
    const base = (s: string) => `/v1/subscribers/${s}/messages`;
    const ops: Promise<unknown>[] = [];
    for (let round = 0; round < 4; round++) {
      for (const s of SUBSCRIBERS) {
        // (The first message is deleted in round 2: never marked, so no mark can meet it gone.)
        const [doomed, ...mine] = ids.get(s)!;
        const pick = (k: number) => mine[(round * 3 + k) % mine.length]!;
        ops.push(
          triggerEvent(server, { name: 'counted', to: SUBSCRIBERS, payload: { i: 100 + round } }),
          server.post(`${base(s)}/mark-as`, { messageId: [pick(0), pick(1)], markAs: (['read', 'unread', 'seen', 'unseen'] as const)[round % 4] }),
          server.post(`${base(s)}/mark-as`, { messageId: pick(2), markAs: round % 2 ? 'unseen' : 'read' }),
          server.post(`${base(s)}/${pick(3)}/actions/primary`, { status: 'done' }),
        );
        if (s == 'count-b') ops.push(server.post(`${base(s)}/mark-all`, { markAs: round % 2 ? 'seen' : 'read' }));
        if (round == 2) ops.push(server.delete(`/v1/messages/${doomed}`));
      }
    }
    // (The API's replies; a trigger's fixture asserts its own.)
    for (const r of (await Promise.all(ops)) as { status: number; headers?: unknown }[]) if (r.headers) assert.ok(r.status < 300, `a write answered ${JSON.stringify(r)}`);
    await assertExact(server);
    // Something of each kind really happened.
    const b = await counted(server, 'count-b');
    assert.equal(b.total, 6 + 4 * SUBSCRIBERS.length - 1);
    const a = await counted(server, 'count-a');
    assert.ok(a.unread < a.total && a.unseen < a.total, JSON.stringify(a));
  });

  it('a whole transaction deleted leaves every recipient exact', async () => {
    const { transactionId } = await triggerEvent(server, { name: 'counted', to: SUBSCRIBERS, payload: { i: 999 } });
    const before = await counted(server, 'count-c');
    const r = await server.delete(`/v1/messages/transaction/${transactionId}`);
    assert.ok(r.status < 300, String(r.status));
    assert.equal((await counted(server, 'count-c')).total, before.total - 1);
    await assertExact(server);
  });

  it('on SQLite, the kept counts are what the table holds', { skip: !!process.env.TEST_DATABASE_URL && 'PostgreSQL counts, it keeps none' }, async () => {
    const kept = await sqlOn(
      server,
      `select s.subscriber_id as id, c.total, c.unseen, c.unread from inbox_counts c join subscribers s on s.id = c.subscriber_id order by 1`,
    );
    assert.deepEqual(
      kept.map((k) => ({ id: k.id, total: k.total, unseen: k.unseen, unread: k.unread })),
      await Promise.all(SUBSCRIBERS.map(async (s) => ({ id: s, ...(await counted(server, s)) }))),
    );
  });
});

// On PostgreSQL the counts and the feed's versions of requests that arrive together are read in
// one statement (server/src/batched.ts, inbox/feed.ts): each answer must still be its own.
describe('counts: asked all at once, each answer is its own', () => {
  let server: TestServer;
  const N = 8;
  const twin = (i: number) => `together-${i}`;
  /** Environment a: subscriber i has i + 1 messages; environment b: N - i. Odd ones saw their newest. */
  const expected = (key: string, i: number) => {
    const total = key == KEYS.a ? i + 1 : N - i;
    return { total, unseen: total - (i % 2) };
  };
  before(async () => {
    server = await startServer();
    for (const key of [KEYS.a, KEYS.b]) {
      await inAppWorkflow(server, 'together', { body: 'Body {{payload.n}}' }, key);
      for (let n = 0; n < N; n++) {
        const to = Array.from({ length: N }, (_, i) => i).filter((i) => expected(key, i).total > n);
        await triggerEvent(server, { name: 'together', to: to.map(twin), payload: { n } }, key);
      }
      for (let i = 1; i < N; i += 2) {
        const [newest] = (await getFeed(server, twin(i), { limit: 1 }, key)).data;
        const r = await server.post(`/v1/subscribers/${twin(i)}/messages/mark-as`, { messageId: newest._id, markAs: 'seen' }, { key });
        assert.ok(r.status < 300, JSON.stringify(r.body));
      }
    }
  });
  after(() => server.dispose());

  it('unseen and seen counts, capped or not, and pages of both environments, asked at once', async () => {
    const asks: { what: string; want: number; got: Promise<number> }[] = [];
    for (let round = 0; round < 3; round++)
      for (const key of [KEYS.a, KEYS.b])
        for (let i = 0; i < N; i++) {
          const { total, unseen } = expected(key, i);
          const ask = (what: string, want: number, got: Promise<number>) => asks.push({ what: `${key} ${twin(i)} ${what}`, want, got });
          ask('unseen', unseen, unseenCount(server, twin(i), {}, key));
          ask('unseen, limit 3', Math.min(3, unseen), unseenCount(server, twin(i), { limit: 3 }, key));
          ask('seen', total - unseen, unseenCount(server, twin(i), { seen: true }, key));
          ask('feed totalCount', total, getFeed(server, twin(i), { limit: 1 }, key).then((b) => b.totalCount));
          ask('feed first message', total - 1, getFeed(server, twin(i), { limit: 1 }, key).then((b) => Number(/\d+/.exec(b.data[0].content)![0])));
        }
    const got = await Promise.all(asks.map((a) => a.got));
    assert.deepEqual(
      asks.map((a, j) => `${a.what}: ${got[j]}`),
      asks.map((a) => `${a.what}: ${a.want}`),
    );
  });
});

// The notifications family's counts (GET /v2/subscribers/{id}/notifications/count) for every kind
// of filter, after family changes of every kind ran at once with triggers: each equals what the
// messages table holds (read row by row and filtered here) and what the same list filter returns;
// the unseen count and the default feed agree.
describe('family counts: exact for every filter under concurrent changes', () => {
  let server: TestServer;
  const PEOPLE = ['fam-count-a', 'fam-count-b'];
  const FILTERS: Record<string, unknown>[] = [
    {},
    { read: false },
    { read: true },
    { seen: false },
    { seen: true },
    { archived: true },
    { archived: true, read: false },
    { snoozed: true },
    { tags: ['billing'] },
    { tags: ['social'], read: false },
    { severity: 'high' },
    { severity: ['low', 'none'] },
    { data: { kind: 'invoice' } },
    { data: { kind: 'invoice' }, read: false, severity: 'high' },
  ];
  const family = (subscriberId: string, rest = '') => `/v2/subscribers/${subscriberId}/notifications${rest}`;

  /** The filter applied here, row by row, to what the table holds. */
  function matches(row: any, filter: any): boolean {
    const archived = Number(row.archived) === 1;
    const snoozed = row.snoozed_until !== null;
    if (filter.archived === undefined && archived) return false;
    if (filter.snoozed === undefined && snoozed) return false;
    if (filter.archived !== undefined && archived !== filter.archived) return false;
    if (filter.snoozed !== undefined && snoozed !== filter.snoozed) return false;
    if (filter.read !== undefined && (Number(row.read) === 1) !== filter.read) return false;
    if (filter.seen !== undefined && (Number(row.seen) === 1) !== filter.seen) return false;
    if (filter.tags && !JSON.parse(row.tags).some((tag: string) => filter.tags.includes(tag))) return false;
    if (filter.severity) {
      const wanted = Array.isArray(filter.severity) ? filter.severity : [filter.severity];
      if (!wanted.includes(row.severity ?? 'none')) return false;
    }
    if (filter.data) {
      const data = row.data ? JSON.parse(row.data) : {};
      if (!Object.entries(filter.data).every(([key, value]) => data[key] === value)) return false;
    }
    return true;
  }

  async function assertFamilyExact() {
    for (const person of PEOPLE) {
      const rows = await sqlOn(
        server,
        `select m.id, m.read, m.seen, m.archived, m.snoozed_until, m.tags, m.severity, m.data from messages m join subscribers s on s.id = m.subscriber_id
         where s.subscriber_id = ? and m.channel = 'in_app' and s.environment_id = (select environment_id from subscribers where subscriber_id = ? limit 1)`,
        [person, person],
      );
      const r = await server.get(family(person, '/count'), { query: { filters: JSON.stringify(FILTERS) } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const expected = FILTERS.map((filter) => rows.filter((row) => matches(row, filter)).length);
      assert.deepEqual(r.body.map((entry: any) => entry.count), expected, `${person}: counts of ${JSON.stringify(FILTERS)}`);
      for (const [index, filter] of FILTERS.entries()) {
        const query: Record<string, any> = { limit: 100, ...filter };
        if (filter.data) query.data = JSON.stringify(filter.data);
        const listed = await server.get(family(person), { query });
        assert.equal(listed.body.data.length, expected[index], `${person}: list of ${JSON.stringify(filter)}`);
      }
      const visible = rows.filter((row) => matches(row, {}));
      assert.equal(await unseenCount(server, person, { limit: 1000 }), visible.filter((row) => Number(row.seen) === 0).length, `${person}: unseen`);
      assert.equal((await getFeed(server, person, { limit: 1 })).totalCount, visible.length, `${person}: feed total`);
      assert.equal((await getFeed(server, person, { limit: 1, read: false })).totalCount, visible.filter((row) => Number(row.read) === 0).length, `${person}: feed unread`);
    }
  }

  before(async () => {
    server = await startServer();
    await createWorkflow(server, {
      workflowId: 'fam-billing',
      name: 'Billing',
      tags: ['billing'],
      steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Invoice {{payload.i}}', data: { kind: 'invoice' } } }],
    });
    await createWorkflow(server, { workflowId: 'fam-social', name: 'Social', tags: ['social'], steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Like {{payload.i}}' } }] });
    for (let i = 0; i < 8; i++) {
      const severity = ['high', 'low', undefined][i % 3];
      await triggerEvent(server, { name: i % 2 ? 'fam-social' : 'fam-billing', to: PEOPLE, payload: { i }, ...(severity ? { overrides: { severity } } : {}) });
    }
  });
  after(() => server.dispose());

  it('every filter counts exactly after archive, snooze, read, bulk and delete ran at once with triggers', async () => {
    const later = () => new Date(Date.now() + 3_600_000).toISOString();
    for (let round = 0; round < 3; round++) {
      const ops: Promise<{ status: number; body: unknown }>[] = [];
      for (const person of PEOPLE) {
        const listed: string[] = (await server.get(family(person), { query: { limit: 100 } })).body.data.map((item: any) => item.id);
        // (The oldest is deleted in round 2: never changed in the same round, so no change meets it gone.)
        const doomed = listed[listed.length - 1];
        const ids = listed.slice(0, -1);
        const archived: string[] = (await server.get(family(person), { query: { limit: 100, archived: true } })).body.data.map((item: any) => item.id);
        const snoozed: string[] = (await server.get(family(person), { query: { limit: 100, snoozed: true } })).body.data.map((item: any) => item.id);
        const pick = (list: string[], k: number) => list[(round * 5 + k) % Math.max(1, list.length)];
        const patch = (id: string | undefined, change: string, body?: unknown) =>
          id ? ops.push(server.patch(family(person, `/${id}/${change}`), body)) : undefined;
        patch(pick(ids, 0), 'archive');
        patch(pick(ids, 1), 'snooze', { snoozeUntil: later() });
        patch(pick(ids, 2), 'read');
        patch(pick(ids, 3), 'unread');
        patch(pick(ids, 4), 'actions/primary/complete');
        patch(pick(archived, 0), 'unarchive');
        patch(pick(snoozed, 0), 'unsnooze');
        patch(pick(snoozed, 1), 'archive');
        ops.push(server.post(family(person, '/seen'), { notificationIds: ids.slice(0, 2) }));
        if (round === 1) ops.push(server.post(family(person, '/read-archive'), { tags: ['social'] }));
        if (round === 2 && doomed) ops.push(server.delete(family(person, `/${doomed}`)));
        if (person === 'fam-count-b') ops.push(server.post(family(person, '/read'), { data: JSON.stringify({ kind: 'invoice' }) }));
        ops.push(server.post('/v1/events/trigger', { name: 'fam-billing', to: person, payload: { i: 100 + round }, overrides: { severity: 'high' } }));
      }
      for (const reply of await Promise.all(ops)) assert.ok(reply.status < 300, JSON.stringify(reply));
      await assertFamilyExact();
    }
    const [a] = await Promise.all([server.get(family('fam-count-a', '/count'), { query: { filters: JSON.stringify([{ archived: true }, { snoozed: true }]) } })]);
    assert.ok(a.body.every((entry: any) => entry.count > 0), `some archived and some snoozed: ${JSON.stringify(a.body)}`);
  });

  it('on SQLite, the kept counts are the visible messages', { skip: !!process.env.TEST_DATABASE_URL && 'PostgreSQL counts, it keeps none' }, async () => {
    for (const person of PEOPLE) {
      const [kept] = await sqlOn(server, `select c.total, c.unseen, c.unread from inbox_counts c join subscribers s on s.id = c.subscriber_id where s.subscriber_id = ?`, [person]);
      const [counted] = await sqlOn(
        server,
        `select count(*) as total, coalesce(sum(case when m.seen = 0 then 1 else 0 end), 0) as unseen, coalesce(sum(case when m.read = 0 then 1 else 0 end), 0) as unread
         from messages m join subscribers s on s.id = m.subscriber_id where s.subscriber_id = ? and m.channel = 'in_app' and m.archived = 0 and m.snoozed_until is null`,
        [person],
      );
      assert.deepEqual({ total: kept.total, unseen: kept.unseen, unread: kept.unread }, { total: counted.total, unseen: counted.unseen, unread: counted.unread });
    }
  });
});
