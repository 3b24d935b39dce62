import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate } from 'node:timers/promises';
import { batched } from '../../server/src/batched.ts';

/** A few turns of the event loop: a load's end settles, and the next load it lets start starts. */
const turn = async () => {
  for (let i = 0; i < 3; i++) await setImmediate();
};

/** A load that records each call's keys and answers when told (its ends, in order). */
function recorder<K>(answer: (key: K) => unknown = (key) => `v${key}`) {
  const loads: K[][] = [];
  const ends: ((fail?: Error) => void)[] = [];
  let running = 0;
  let most = 0;
  const load = (keys: K[]) => {
    loads.push(keys);
    most = Math.max(most, ++running);
    return new Promise<unknown[]>((resolve, reject) =>
      ends.push((fail) => (running--, fail ? reject(fail) : resolve(keys.map(answer)))),
    );
  };
  return { load, loads, ends, most: () => most };
}

describe('batched', () => {
  it('calls of one turn are one load, each answered with its own value', async () => {
    const r = recorder<number>();
    const get = batched(r.load);
    const answers = Promise.all([1, 2, 3].map(get));
    await turn();
    assert.deepEqual(r.loads, [[1, 2, 3]]);
    r.ends[0]!();
    assert.deepEqual(await answers, ['v1', 'v2', 'v3']);
  });

  it('a call alone waits for nothing but the turn', async () => {
    const r = recorder<number>();
    const get = batched(r.load, 1);
    const one = get(7);
    await turn();
    assert.deepEqual(r.loads, [[7]]);
    r.ends[0]!();
    assert.equal(await one, 'v7');
  });

  it('with inFlight 1, calls made while a load runs wait, then go together in the next', async () => {
    const r = recorder<number>();
    const get = batched(r.load, 1);
    const first = get(1);
    await turn();
    const later = [get(2), get(3)];
    await turn();
    const last = get(4);
    await turn();
    assert.deepEqual(r.loads, [[1]], 'nothing more starts while one load runs');
    r.ends[0]!();
    assert.equal(await first, 'v1');
    await turn();
    assert.deepEqual(r.loads, [[1], [2, 3, 4]]);
    r.ends[1]!();
    assert.deepEqual(await Promise.all([...later, last]), ['v2', 'v3', 'v4']);
    assert.equal(r.most(), 1);
  });

  it('with inFlight 2, two loads run at once and no third', async () => {
    const r = recorder<number>();
    const get = batched(r.load, 2);
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < 4; i++) {
      all.push(get(i));
      await turn();
    }
    assert.deepEqual(r.loads, [[0], [1]]);
    r.ends[1]!();
    await turn();
    assert.deepEqual(r.loads, [[0], [1], [2, 3]]);
    r.ends[0]!();
    r.ends[2]!();
    assert.deepEqual(await Promise.all(all), ['v0', 'v1', 'v2', 'v3']);
    assert.equal(r.most(), 2);
  });

  it('a failed load rejects each of its calls, and the next load still runs', async () => {
    const r = recorder<number>();
    const get = batched(r.load, 1);
    const failing = [get(1), get(2)].map((p) => p.then(() => 'answered', (e: Error) => e.message));
    await turn();
    const next = get(3);
    r.ends[0]!(new Error('gone'));
    assert.deepEqual(await Promise.all(failing), ['gone', 'gone']);
    await turn();
    r.ends[1]!();
    assert.equal(await next, 'v3');
  });

  it('at most 1,000 keys a load', async () => {
    const r = recorder<number>();
    const get = batched(r.load);
    const answers = Promise.all(Array.from({ length: 2500 }, (_, i) => get(i)));
    await turn();
    assert.deepEqual(r.loads.map((keys) => [keys.length, keys[0]]), [[1000, 0], [1000, 1000], [500, 2000]]);
    r.ends.forEach((end) => end());
    assert.equal((await answers)[2499], 'v2499');
  });
});

// A load that throws before it returns a promise, or answers with something that is not a list,
// must fail its own calls and nothing else: the batcher must not take the process down (an
// exception in its setImmediate callback, an unhandled rejection), nor stay counted as running,
// which with inFlight 1 would leave every later call waiting for ever.
describe('batched: a load that breaks its contract', () => {
  it('a load that throws synchronously rejects its calls, and the next load still runs', async () => {
    let calls = 0;
    const get = batched(
      (keys: number[]) => {
        if (calls++ == 0) throw new Error('thrown');
        return Promise.resolve(keys.map((key) => `v${key}`));
      },
      1,
    );
    const failing = [get(1), get(2)].map((p) => p.then(() => 'answered', (e: Error) => e.message));
    assert.deepEqual(await Promise.all(failing), ['thrown', 'thrown']);
    assert.equal(await get(3), 'v3');
  });

  it('a load that answers no list rejects its calls, and the next load still runs', async () => {
    let calls = 0;
    const get = batched(async (keys: number[]) => (calls++ == 0 ? (undefined as unknown as string[]) : keys.map((key) => `v${key}`)), 1);
    const failing = [get(1), get(2)].map((p) => p.then(() => 'answered', () => 'rejected'));
    assert.deepEqual(await Promise.all(failing), ['rejected', 'rejected']);
    assert.equal(await get(3), 'v3');
  });
});

describe('batched: a load that hangs', () => {
  it('stops holding its place after stallMs: the calls after it are loaded, its own still wait for it', async () => {
    const r = recorder<number>();
    const get = batched(r.load, 1, 50);
    const stuck = get(1);
    await turn();
    const next = get(2);
    await turn();
    assert.deepEqual(r.loads, [[1]], 'within stallMs the next call waits');
    await new Promise((resolve) => setTimeout(resolve, 80));
    await turn();
    assert.deepEqual(r.loads, [[1], [2]], 'past stallMs the next call is loaded');
    r.ends[1]!();
    assert.equal(await next, 'v2');
    let settled = false;
    void stuck.then(() => (settled = true));
    await turn();
    assert.equal(settled, false, 'the hung load\'s own call still waits for it');
    r.ends[0]!();
    assert.equal(await stuck, 'v1');
    // Its late end does not free a place twice: one load at a time still.
    const more = [get(3), get(4)];
    await turn();
    const after = get(5);
    await turn();
    assert.deepEqual(r.loads.slice(2), [[3, 4]]);
    r.ends[2]!();
    await turn();
    assert.deepEqual(r.loads.slice(2), [[3, 4], [5]]);
    r.ends[3]!();
    assert.deepEqual(await Promise.all([...more, after]), ['v3', 'v4', 'v5']);
  });
});
