import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../server/src/db/index.ts';
import { DEMO_SUBSCRIBER_IDS, seedDemo } from '../../server/src/seed.ts';
import { expectErrorBody, SERVICE_COMMAND, TestServer } from './helpers.ts';
import { allMessages, unseenCount } from './fixtures.ts';

describe('demo seed', () => {
  let server: TestServer;
  let key: string;
  before(async () => {
    server = await new TestServer().start([]);
    const m = /development API key[^:]*: (\S+)/.exec(server.output());
    assert.ok(m, `no key in the output:\n${server.output()}`);
    key = m[1]!;
  });
  after(() => server.dispose());

  it('prints a development key that works', async () => {
    assert.match(key, /^nk_[0-9a-f]{48}$/);
    assert.equal((await server.get('/v2/workflows', { key })).status, 200);
  });

  it('prints the same development key again when it starts on its seeded database', async () => {
    await server.stop();
    await server.start([]);
    const again = /development API key[^:]*: (\S+)/.exec(server.output());
    assert.equal(again?.[1], key, server.output());
  });

  it('has four workflows: CTA buttons, a redirect, one in the billing feed, and an announcement of free text', async () => {
    const body = (await server.get('/v2/workflows', { key })).body.workflows;
    assert.deepEqual(body.map((w: any) => w.workflowId), ['project-invite', 'comment-reply', 'invoice-paid', 'announcement']);
    const steps = body.map((w: any) => w.steps[0].controlValues);
    assert.ok(steps.some((cv: any) => cv.primaryAction?.label === 'Accept' && cv.secondaryAction?.label === 'Decline' && cv.primaryAction.resultContent));
    assert.ok(steps.some((cv: any) => cv.redirect?.url && !cv.feedIdentifier));
    assert.ok(steps.some((cv: any) => cv.feedIdentifier === 'billing'));
    // The announcement's subject and body are the payload's, whatever they are; its link is optional.
    const subject = 'A subject of any length';
    const sent = await server.post('/v1/events/trigger', { name: 'announcement', to: 'grace', payload: { subject, body: 'Any body.' } }, { key });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const [newest] = await allMessages(server, 'grace', {}, key);
    assert.equal(newest.subject, subject);
    assert.equal(newest.content, 'Any body.');
    assert.deepEqual(newest.cta.data, {});
  });

  it('has five subscribers with about fifty messages over two weeks, some read, some seen', async () => {
    assert.equal(DEMO_SUBSCRIBER_IDS.length, 5);
    assert.equal(DEMO_SUBSCRIBER_IDS[0], 'ada');
    const messages: any[] = [];
    for (const id of DEMO_SUBSCRIBER_IDS) messages.push(...(await allMessages(server, id, {}, key)).filter((m) => m.templateIdentifier !== 'announcement'));
    expectErrorBody(await server.get('/v1/subscribers/nobody/notifications/feed', { key }), 404);
    assert.ok(messages.length >= 40 && messages.length <= 60, `${messages.length} messages`);
    const subscribers = new Map(messages.map((m) => [m.subscriber.subscriberId, m.subscriber]));
    assert.equal(subscribers.size, 5);
    for (const s of subscribers.values()) {
      assert.ok(s.firstName && s.lastName && s.email, JSON.stringify(s));
      if (s.avatar !== undefined) {
        // Served by the playground itself (demo/public): no request leaves the machine.
        assert.match(s.avatar, /^\/avatars\/[a-z]+\.svg$/);
        assert.ok(existsSync(new URL(`../../demo/public${s.avatar}`, import.meta.url)), `${s.avatar} exists in demo/public`);
      }
    }
    assert.ok(messages.some((m) => m.avatar?.startsWith('/avatars/')), 'messages carry the actors\' avatars (relative URLs survive rendering)');
    assert.ok([...subscribers.values()].some((s) => s.avatar === undefined), 'some subscribers have no avatar');
    const read = messages.filter((m) => m.read).length;
    const seen = messages.filter((m) => m.seen).length;
    assert.ok(read > 0 && read < messages.length, `read ${read}`);
    assert.ok(seen > read && seen < messages.length, `seen ${seen}`);
    const now = Date.now();
    const ages = messages.map((m) => now - Date.parse(m.createdAt));
    assert.ok(ages.every((a) => a > 0 && a < 15 * 86_400_000));
    assert.ok(Math.max(...ages) > 7 * 86_400_000, 'spread over two weeks');
    assert.ok(messages.some((m) => m.cta.action?.buttons?.length === 2));
    assert.ok(messages.some((m) => m._feedId));
    assert.ok(messages.every((m) => m.content.length > 0 && !m.content.includes('{{')));
  });

  it('gives ada most messages, with some unseen and some unread', async () => {
    const ada = await allMessages(server, 'ada', {}, key);
    assert.ok(ada.length >= 20, `${ada.length}`);
    assert.ok((await unseenCount(server, 'ada', {}, key)) > 0);
    assert.ok(ada.some((m) => !m.read) && ada.some((m) => m.read));
  });

  it('`seed` makes the demo data in a new database, prints its key, and refuses a database that holds data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notif-seed-cli-'));
    const cli = (args: string[]) => {
      try {
        return { code: 0, out: execFileSync(process.execPath, [...SERVICE_COMMAND, ...args], { encoding: 'utf8', stdio: 'pipe' }) };
      } catch (e) {
        const err = e as { status: number; stdout: string; stderr: string };
        return { code: err.status, out: err.stdout + err.stderr };
      }
    };
    try {
      const location = join(dir, 'seeded.db');
      const first = cli(['seed', '--db', location]);
      assert.equal(first.code, 0, first.out);
      const key = /development API key[^:]*: (\S+)/.exec(first.out)?.[1];
      assert.ok(key, first.out);
      const db = await openDatabase({ location });
      try {
        const count = await db.kysely.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        assert.equal(Number(count.n), 50);
      } finally {
        await db.close();
      }
      const again = cli(['seed', '--db', location]);
      assert.notEqual(again.code, 0);
      assert.match(again.out, /already holds data/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('seeds the demo data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'notif-seed-'));
    const db = await openDatabase({ location: join(dir, 'seed.db') });
    try {
      const result = await seedDemo(db);
      assert.deepEqual(result.subscriberIds, [...DEMO_SUBSCRIBER_IDS]);
      const count = await db.kysely.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 50);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a database seeded by an earlier version', () => {
  let server: TestServer;
  after(() => server?.dispose());

  it('gets the demo workflows added since when served, and keeps every workflow it has as it is', async () => {
    server = await new TestServer().start([]);
    const key = /development API key[^:]*: (\S+)/.exec(server.output())![1]!;
    const list = async () => (await server.get('/v2/workflows', { key })).body.workflows as any[];
    // What the playground's page used to add, and a seeded workflow changed since.
    const own = { workflowId: 'playground-note', name: 'Playground: note', steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: '{{payload.subject}}', body: '{{payload.body}}' } }] };
    const made = await server.post('/v2/workflows', own, { key });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const invite = (await list()).find((w) => w.workflowId === 'project-invite');
    assert.equal((await server.post('/v2/workflows', { ...invite, name: 'Invitation, renamed' }, { key })).status, 201);
    await server.stop();
    // As the seed of a version before the announcement made it.
    const db = await openDatabase({ location: server.dbPath });
    try {
      await db.kysely.deleteFrom('workflows').where('workflow_id', '=', 'announcement').execute();
    } finally {
      await db.close();
    }
    await server.start([]);
    assert.match(server.output(), /added demo workflows to the demo environment: announcement/);
    const after1 = await list();
    assert.deepEqual(after1.map((w) => w.workflowId).sort(), ['announcement', 'comment-reply', 'invoice-paid', 'playground-note', 'project-invite']);
    assert.equal(after1.find((w) => w.workflowId === 'project-invite').name, 'Invitation, renamed');
    assert.equal(after1.find((w) => w.workflowId === 'playground-note').name, 'Playground: note');

    // A second start adds nothing and changes nothing.
    await server.stop();
    await server.start([]);
    assert.doesNotMatch(server.output(), /added demo workflows/);
    assert.deepEqual(await list(), after1);
  });

  it('a database that was never seeded gets no demo workflows', async () => {
    const bare = await new TestServer().start(['--no-seed']);
    try {
      await bare.stop();
      await bare.start([]);
      assert.doesNotMatch(bare.output(), /demo/);
      assert.deepEqual((await bare.get('/v2/workflows')).body, { workflows: [], totalCount: 0 });
    } finally {
      await bare.dispose();
    }
  });
});
