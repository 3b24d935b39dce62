import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Db } from '../../server/src/db/index.ts';
import { KeyResolver, registerKey } from '../../server/src/db/keys.ts';
import { openTestDatabase, watchSelects } from './helpers.ts';

// A key registered in this process works at once, for every request that comes after
// registerKey returned: even one that comes while a lookup made before the key existed (which
// found nothing) is still on its way back, and would otherwise share that lookup's answer.

describe('KeyResolver: a lookup in flight while the key is registered', () => {
  let db: Db;
  let done: () => Promise<void>;
  /** When set, the next api_keys lookup's answer waits for it (the query itself runs at once). */
  let gate: Promise<void> | undefined;

  /** Wraps a query builder so that its executeTakeFirst answers only once `wait` settles. */
  const held = (builder: any, wait: Promise<void>): any =>
    new Proxy(builder, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (typeof value !== 'function') return value;
        if (name === 'executeTakeFirst') return async () => {
          const row = await value.call(target);
          await wait;
          return row;
        };
        return (...args: unknown[]) => {
          const out = value.apply(target, args);
          return out && typeof out === 'object' && typeof out.executeTakeFirst === 'function' ? held(out, wait) : out;
        };
      },
    });

  before(async () => {
    const opened = await openTestDatabase();
    const real = opened.db;
    done = opened.done;
    db = watchSelects(real, (from, builder) => {
      if (from !== 'api_keys' || !gate) return builder;
      const wait = gate;
      gate = undefined;
      return held(builder, wait);
    });
  });
  after(async () => done?.());

  it('a request made after registerKey returned gets the tenant, though an older lookup of the key is still in flight', async () => {
    const keys = new KeyResolver(db);
    let open!: () => void;
    gate = new Promise<void>((r) => (open = r));
    // Before the key exists: its lookup finds nothing, and its answer is held back.
    const early = keys.resolve('racing-key');
    await new Promise((r) => setTimeout(r, 50));
    const tenant = await registerKey(db, 'racing-key', 'acme', 'production');
    // The key exists now: this request comes after it was registered.
    const late = keys.resolve('racing-key');
    open();
    await early;
    assert.deepEqual(await late, tenant, 'a request after registerKey returned is not refused');
    assert.deepEqual(await keys.resolve('racing-key'), tenant);
  });
});
