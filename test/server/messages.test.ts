import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expectErrorBody, KEYS, sqlOn, startServer, type TestServer } from './helpers.ts';
import { allMessages, getFeed, inAppWorkflow, sendMessages, triggerEvent, unseenCount } from './fixtures.ts';

const markAll = (s: string) => `/v1/subscribers/${s}/messages/mark-all`;
const markAs = (s: string) => `/v1/subscribers/${s}/messages/mark-as`;
const action = (s: string, id: string, type: string) => `/v1/subscribers/${s}/messages/${id}/actions/${type}`;

describe('messages', () => {
  let server: TestServer;
  let counter = 0;
  /** A fresh subscriber with `plain` feed-less messages, and `billing` / `social` messages in those feeds. */
  const inbox = async (plain: number, billing = 0, social = 0) => {
    const id = `sub-${++counter}`;
    await sendMessages(server, { workflowId: 'plain', subscriberId: id, count: plain });
    await sendMessages(server, { workflowId: 'bill', subscriberId: id, count: billing });
    await sendMessages(server, { workflowId: 'chat', subscriberId: id, count: social });
    return id;
  };
  const state = async (id: string) => {
    const all = await allMessages(server, id);
    return {
      read: all.filter((m) => m.read).length,
      seen: all.filter((m) => m.seen).length,
      total: all.length,
      all,
    };
  };

  before(async () => {
    server = await startServer();
    await inAppWorkflow(server, 'plain', { body: 'Plain {{payload.i}}' });
    await inAppWorkflow(server, 'bill', { body: 'Bill {{payload.i}}', feedIdentifier: 'billing' });
    await inAppWorkflow(server, 'chat', { body: 'Chat {{payload.i}}', feedIdentifier: 'social' });
    await inAppWorkflow(server, 'invite', {
      body: 'Join?',
      primaryAction: { label: 'Accept', resultContent: 'Joined' },
      secondaryAction: { label: 'Decline' },
    });
  });
  after(() => server.dispose());

  describe('POST mark-all', () => {
    it('read: marks every unread message read and seen, sets the dates, answers 201 with the count', async () => {
      const id = await inbox(5);
      const before = Date.now();
      const r = await server.post(markAll(id), { markAs: 'read' });
      assert.equal(r.status, 201);
      assert.equal(r.body, 5);
      assert.match(r.headers.get('content-type') ?? '', /application\/json/);
      const s = await state(id);
      assert.equal(s.read, 5);
      assert.equal(s.seen, 5);
      for (const m of s.all) {
        assert.ok(Date.parse(m.lastReadDate) >= before - 1000, m.lastReadDate);
        assert.ok(Date.parse(m.lastSeenDate) >= before - 1000, m.lastSeenDate);
      }
      assert.equal(await unseenCount(server, id), 0);
      // Nothing left to change.
      assert.equal((await server.post(markAll(id), { markAs: 'read' })).body, 0);
    });

    it('counts only the messages that changed', async () => {
      const id = await inbox(4);
      const [a] = (await getFeed(server, id)).data.map((m) => m._id);
      await server.post(markAs(id), { messageId: a, markAs: 'read' });
      assert.equal((await server.post(markAll(id), { markAs: 'read' })).body, 3);
      assert.equal((await server.post(markAll(id), { markAs: 'unread' })).body, 4);
      assert.equal((await server.post(markAll(id), { markAs: 'unread' })).body, 0);
    });

    it('unread clears read and leaves seen', async () => {
      const id = await inbox(3);
      await server.post(markAll(id), { markAs: 'read' });
      const r = await server.post(markAll(id), { markAs: 'unread' });
      assert.equal(r.status, 201);
      assert.equal(r.body, 3);
      const s = await state(id);
      assert.equal(s.read, 0);
      assert.equal(s.seen, 3);
    });

    it('seen sets seen only, with lastSeenDate; unseen clears it', async () => {
      const id = await inbox(3);
      const seen = await server.post(markAll(id), { markAs: 'seen' });
      assert.equal(seen.status, 201);
      assert.equal(seen.body, 3);
      let s = await state(id);
      assert.equal(s.seen, 3);
      assert.equal(s.read, 0);
      assert.ok(s.all.every((m) => typeof m.lastSeenDate === 'string' && m.lastReadDate === undefined));
      assert.equal(await unseenCount(server, id), 0);
      assert.equal((await server.post(markAll(id), { markAs: 'seen' })).body, 0);
      const unseen = await server.post(markAll(id), { markAs: 'unseen' });
      assert.equal(unseen.body, 3);
      s = await state(id);
      assert.equal(s.seen, 0);
      assert.equal(await unseenCount(server, id), 3);
    });

    it('limits to a feed identifier given as a string', async () => {
      const id = await inbox(2, 3, 4);
      assert.equal((await server.post(markAll(id), { markAs: 'read', feedIdentifier: 'billing' })).body, 3);
      const s = await state(id);
      assert.deepEqual(
        s.all.filter((m) => m.read).map((m) => m.content.split(' ')[0]),
        ['Bill', 'Bill', 'Bill'],
      );
    });

    it('limits to feed identifiers given as an array or comma-separated', async () => {
      const id = await inbox(2, 3, 4);
      assert.equal((await server.post(markAll(id), { markAs: 'seen', feedIdentifier: ['billing', 'social'] })).body, 7);
      assert.equal((await state(id)).seen, 7);
      assert.equal((await server.post(markAll(id), { markAs: 'unseen', feedIdentifier: 'social,billing' })).body, 7);
      assert.equal((await state(id)).seen, 0);
      assert.equal((await server.post(markAll(id), { markAs: 'seen', feedIdentifier: ['social'] })).body, 4);
    });

    it('matches nothing for an unknown feed identifier', async () => {
      const id = await inbox(2, 1);
      assert.equal((await server.post(markAll(id), { markAs: 'read', feedIdentifier: 'nope' })).body, 0);
      assert.equal((await server.post(markAll(id), { markAs: 'read', feedIdentifier: ['nope', 'billing'] })).body, 1);
      assert.equal((await state(id)).read, 1);
    });

    it('answers 422 for a missing or unknown markAs and a bad feedIdentifier', async () => {
      const id = await inbox(1);
      for (const body of [{}, { markAs: 'archived' }, { markAs: 5 }, { markAs: 'read', feedIdentifier: { a: 1 } }, { markAs: 'read', feedIdentifier: [{}] }]) {
        const b = expectErrorBody(await server.post(markAll(id), body), 422);
        assert.ok(Object.keys(b.errors).length > 0, JSON.stringify(body));
      }
      assert.equal((await state(id)).read, 0);
    });

    it('answers 404 for an unknown subscriber and for another environment\'s', async () => {
      const id = await inbox(1);
      expectErrorBody(await server.post(markAll('nobody'), { markAs: 'read' }), 404);
      expectErrorBody(await server.post(markAll(id), { markAs: 'read' }, { key: KEYS.b }), 404);
      expectErrorBody(await server.post(markAll(id), { markAs: 'read' }, { key: KEYS.other }), 404);
      assert.equal((await state(id)).read, 0);
    });
  });

  describe('POST mark-as', () => {
    it('marks one message and returns 201 Message[]', async () => {
      const id = await inbox(3);
      const [a, b] = (await getFeed(server, id)).data;
      const r = await server.post(markAs(id), { messageId: a._id, markAs: 'read' });
      assert.equal(r.status, 201);
      assert.equal(r.body.length, 1);
      assert.equal(r.body[0]._id, a._id);
      assert.equal(r.body[0].read, true);
      assert.equal(r.body[0].seen, true);
      assert.equal(typeof r.body[0].lastReadDate, 'string');
      assert.equal(r.body[0].subscriber.subscriberId, id);
      assert.equal(r.body[0].template.triggers[0].identifier, 'plain');
      const after = (await getFeed(server, id)).data;
      assert.equal(after.find((m) => m._id === b._id).read, false);
    });

    it('marks several messages, in the order given', async () => {
      const id = await inbox(3);
      const ids = (await getFeed(server, id)).data.map((m) => m._id).reverse();
      const r = await server.post(markAs(id), { messageId: ids, markAs: 'seen' });
      assert.equal(r.status, 201);
      assert.deepEqual(r.body.map((m: any) => m._id), ids);
      assert.ok(r.body.every((m: any) => m.seen && !m.read));
      const back = await server.post(markAs(id), { messageId: ids.slice(0, 1), markAs: 'unseen' });
      assert.equal(back.body[0].seen, false);
      const unread = await server.post(markAs(id), { messageId: ids[1], markAs: 'unread' });
      assert.equal(unread.body[0].read, false);
      assert.equal(await unseenCount(server, id), 1);
    });

    it('answers 404 for a message of another subscriber, or unknown, and changes nothing', async () => {
      const mine = await inbox(1);
      const theirs = await inbox(1);
      const [m] = (await getFeed(server, mine)).data;
      const [t] = (await getFeed(server, theirs)).data;
      expectErrorBody(await server.post(markAs(mine), { messageId: [m._id, t._id], markAs: 'read' }), 404);
      expectErrorBody(await server.post(markAs(mine), { messageId: '0123456789abcdef01234567', markAs: 'read' }), 404);
      expectErrorBody(await server.post(markAs(mine), { messageId: m._id, markAs: 'read' }, { key: KEYS.b }), 404);
      assert.equal((await state(mine)).read, 0);
      assert.equal((await state(theirs)).read, 0);
    });

    it('leaves out a message deleted while it is marked (a DELETE between its update and its read), never a 500', async () => {
      const id = await inbox(2);
      const [gone, kept] = (await getFeed(server, id)).data.map((m) => m._id as string);
      // The delete lands exactly there: a trigger deletes the message as the mark updates it.
      if (server.postgres) {
        await sqlOn(server, `create function audit_delete_marked() returns trigger language plpgsql as $$ begin delete from messages where id = new.id; return null; end $$`);
        await sqlOn(server, `create trigger audit_delete_marked after update on messages for each row when (new.id = '${gone}') execute function audit_delete_marked()`);
      } else {
        await sqlOn(server, `create trigger audit_delete_marked after update on messages when new.id = '${gone}' begin delete from messages where id = new.id; end`);
      }
      try {
        const r = await server.post(markAs(id), { messageId: [gone, kept], markAs: 'read' });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        assert.deepEqual(r.body.map((m: any) => [m._id, m.read]), [[kept, true]]);
        assert.deepEqual((await state(id)).all.map((m) => m._id), [kept]);
      } finally {
        await sqlOn(server, server.postgres ? 'drop trigger audit_delete_marked on messages' : 'drop trigger audit_delete_marked');
      }
    });

    it('answers 422 for a bad body', async () => {
      const id = await inbox(1);
      const [m] = (await getFeed(server, id)).data;
      for (const body of [{ markAs: 'read' }, { messageId: m._id }, { messageId: m._id, markAs: 'done' }, { messageId: [], markAs: 'read' }, { messageId: '', markAs: 'read' }, { messageId: [{}], markAs: 'read' }]) {
        expectErrorBody(await server.post(markAs(id), body), 422);
      }
    });
  });

  describe('POST message action', () => {
    it('sets cta.action.status and result for a primary action, then done', async () => {
      await triggerEvent(server, { name: 'invite', to: 'actor-1' });
      const [m] = (await getFeed(server, 'actor-1')).data;
      assert.equal(m.cta.action.status, 'pending');
      const r = await server.post(action('actor-1', m._id, 'primary'), { status: 'done', payload: { answer: 'yes', n: 1 } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body._id, m._id);
      assert.equal(r.body.cta.action.status, 'done');
      assert.deepEqual(r.body.cta.action.result, { type: 'primary', payload: { answer: 'yes', n: 1 } });
      assert.deepEqual(r.body.cta.action.buttons, m.cta.action.buttons);
      assert.equal(r.body.subscriber.subscriberId, 'actor-1');
      const [stored] = (await getFeed(server, 'actor-1')).data;
      assert.deepEqual(stored.cta, r.body.cta);
    });

    it('sets a pending secondary action with an empty payload by default', async () => {
      await triggerEvent(server, { name: 'invite', to: 'actor-2' });
      const [m] = (await getFeed(server, 'actor-2')).data;
      const r = await server.post(action('actor-2', m._id, 'secondary'), { status: 'pending' });
      assert.equal(r.status, 201);
      assert.equal(r.body.cta.action.status, 'pending');
      assert.deepEqual(r.body.cta.action.result, { type: 'secondary', payload: {} });
    });

    it('answers 422 for an unknown type, status or a non-object payload', async () => {
      await triggerEvent(server, { name: 'invite', to: 'actor-3' });
      const [m] = (await getFeed(server, 'actor-3')).data;
      const bad: [string, unknown, string][] = [
        ['tertiary', { status: 'done' }, 'type'],
        ['primary', { status: 'finished' }, 'status'],
        ['primary', {}, 'status'],
        ['primary', { status: 'done', payload: 'yes' }, 'payload'],
      ];
      for (const [type, body, field] of bad) {
        const b = expectErrorBody(await server.post(action('actor-3', m._id, type), body), 422);
        assert.ok(b.errors[field], JSON.stringify(b.errors));
      }
      const [after] = (await getFeed(server, 'actor-3')).data;
      assert.equal(after.cta.action.status, 'pending');
      assert.equal(after.cta.action.result, undefined);
    });

    it('answers 422 for a payload past 4 KB of JSON, storing nothing; 4 KB is stored', async () => {
      await triggerEvent(server, { name: 'invite', to: 'actor-big' });
      const [m] = (await getFeed(server, 'actor-big')).data;
      // {"x":"..."}: 8 bytes around the text; "é" is 2 bytes of UTF-8.
      const sized = (bytes: number, char = 'a') => ({ x: char.repeat((bytes - 8) / Buffer.byteLength(char)) });
      for (const payload of [sized(4098), sized(4098, 'é'), { blob: 'x'.repeat(900_000) }]) {
        const b = expectErrorBody(await server.post(action('actor-big', m._id, 'primary'), { status: 'done', payload }), 422);
        assert.match(b.message, /payload/);
        assert.match(b.message, /4096 bytes/);
        assert.deepEqual(b.errors.payload.value, null, 'the payload is not echoed back');
      }
      const [unchanged] = (await getFeed(server, 'actor-big')).data;
      assert.equal(unchanged.cta.action.status, 'pending');
      assert.equal(unchanged.cta.action.result, undefined);
      const fits = sized(4096, 'é');
      assert.equal(Buffer.byteLength(JSON.stringify(fits)), 4096);
      const r = await server.post(action('actor-big', m._id, 'primary'), { status: 'done', payload: fits });
      assert.equal(r.status, 201, JSON.stringify(r.body).slice(0, 300));
      assert.deepEqual(r.body.cta.action.result.payload, fits);
    });

    it('answers 404 when the message is not that subscriber\'s, or in another environment', async () => {
      await triggerEvent(server, { name: 'invite', to: ['actor-4', 'actor-5'] });
      const [m] = (await getFeed(server, 'actor-4')).data;
      expectErrorBody(await server.post(action('actor-5', m._id, 'primary'), { status: 'done' }), 404);
      expectErrorBody(await server.post(action('actor-4', '0123456789abcdef01234567', 'primary'), { status: 'done' }), 404);
      expectErrorBody(await server.post(action('actor-4', m._id, 'primary'), { status: 'done' }, { key: KEYS.b }), 404);
      expectErrorBody(await server.post(action('nobody', m._id, 'primary'), { status: 'done' }), 404);
    });

    it('answers 404 for a message deleted after it was read and before it is updated, never a 201 for nothing stored', async () => {
      await triggerEvent(server, { name: 'invite', to: 'actor-6' });
      const [m] = (await getFeed(server, 'actor-6')).data;
      // The delete lands exactly there: a trigger deletes the message in place of the action's update.
      if (server.postgres) {
        await sqlOn(server, `create function delete_acted() returns trigger language plpgsql as $$ begin delete from messages where id = old.id; return null; end $$`);
        await sqlOn(server, `create trigger delete_acted before update on messages for each row when (old.id = '${m._id}') execute function delete_acted()`);
      } else {
        await sqlOn(server, `create trigger delete_acted before update on messages when old.id = '${m._id}' begin delete from messages where id = old.id; select raise(ignore); end`);
      }
      try {
        expectErrorBody(await server.post(action('actor-6', m._id, 'primary'), { status: 'done' }), 404);
        assert.deepEqual((await getFeed(server, 'actor-6')).data, []);
      } finally {
        await sqlOn(server, server.postgres ? 'drop trigger delete_acted on messages' : 'drop trigger delete_acted');
      }
    });
  });

  describe('DELETE /v1/messages/:messageId', () => {
    it('deletes a message: 200 {acknowledged, status: deleted}; then 404', async () => {
      const id = await inbox(2);
      const [m] = (await getFeed(server, id)).data;
      const r = await server.delete(`/v1/messages/${m._id}`);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { acknowledged: true, status: 'deleted' });
      const after = await getFeed(server, id);
      assert.equal(after.totalCount, 1);
      assert.ok(!after.data.some((x) => x._id === m._id));
      expectErrorBody(await server.delete(`/v1/messages/${m._id}`), 404);
    });

    it('answers 404 for an unknown id and for another environment\'s message, which stays', async () => {
      const id = await inbox(1);
      const [m] = (await getFeed(server, id)).data;
      expectErrorBody(await server.delete('/v1/messages/0123456789abcdef01234567'), 404);
      expectErrorBody(await server.delete(`/v1/messages/${m._id}`, { key: KEYS.b }), 404);
      expectErrorBody(await server.delete(`/v1/messages/${m._id}`, { key: KEYS.other }), 404);
      assert.equal((await getFeed(server, id)).totalCount, 1);
    });
  });

  describe('DELETE /v1/messages/transaction/:transactionId', () => {
    it('deletes the messages of a transaction: 204 with an empty body', async () => {
      await triggerEvent(server, { name: 'plain', to: ['tx-1', 'tx-2'], transactionId: 'tx-del-1' });
      await triggerEvent(server, { name: 'plain', to: 'tx-1', transactionId: 'tx-keep-1' });
      const r = await server.delete('/v1/messages/transaction/tx-del-1');
      assert.equal(r.status, 204);
      assert.equal(r.body, '');
      assert.deepEqual((await getFeed(server, 'tx-1')).data.map((m) => m.transactionId), ['tx-keep-1']);
      assert.equal((await getFeed(server, 'tx-2')).totalCount, 0);
      expectErrorBody(await server.delete('/v1/messages/transaction/tx-del-1'), 404);
    });

    it('restricts to a channel', async () => {
      await triggerEvent(server, { name: 'plain', to: 'tx-3', transactionId: 'tx-chan-1' });
      expectErrorBody(await server.delete('/v1/messages/transaction/tx-chan-1', { query: { channel: 'email' } }), 404);
      assert.equal((await getFeed(server, 'tx-3')).totalCount, 1);
      const r = await server.delete('/v1/messages/transaction/tx-chan-1', { query: { channel: 'in_app' } });
      assert.equal(r.status, 204);
      assert.equal((await getFeed(server, 'tx-3')).totalCount, 0);
    });

    it('answers 422 for an unknown channel, 404 for an unknown transaction or another environment\'s', async () => {
      await triggerEvent(server, { name: 'plain', to: 'tx-4', transactionId: 'tx-env-1' });
      const b = expectErrorBody(await server.delete('/v1/messages/transaction/tx-env-1', { query: { channel: 'fax' } }), 422);
      assert.ok(b.errors.channel);
      expectErrorBody(await server.delete('/v1/messages/transaction/no-such-tx'), 404);
      expectErrorBody(await server.delete('/v1/messages/transaction/tx-env-1', { key: KEYS.b }), 404);
      assert.equal((await getFeed(server, 'tx-4')).totalCount, 1);
    });
  });
});
