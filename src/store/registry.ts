// The page's stores: one per (service, subscriber, feed, payload filter, authentication, fetch),
// shared by every element that names them.
import { storeKey } from './config.ts';
import { InboxStore } from './inbox-store.ts';
import type { InboxConfig } from './types.ts';

/** The page's stores (getInboxStore) by registry key. */
const stores = new Map<string, InboxStore>();
/** A number for each app-supplied fetch function, part of its stores' keys. */
const fetchIds = new WeakMap<typeof fetch, number>();
let fetchCount = 0;

/**
 * The page's store for `config` (created on first use): every element that names the same service,
 * subscriber, feed, payload filter, authentication and app-supplied fetch shares one (one poller, one
 * state). Elements `connect()` it while attached; when the last one disconnects the store stops, and
 * leaves the registry unless it is reconnected in the same task (an element moved in the DOM).
 */
export function getInboxStore(config: InboxConfig): InboxStore {
  const { fetch } = config;
  if (fetch && !fetchIds.has(fetch)) {
    fetchCount++;
    fetchIds.set(fetch, fetchCount);
  }
  const key = storeKey(config) + (fetch ? fetchIds.get(fetch) : 0);
  const existing = stores.get(key);
  if (existing) return existing;
  const store: InboxStore = new InboxStore(config, {
    connected() {
      if (!stores.has(key)) stores.set(key, store);
    },
    released() {
      queueMicrotask(() => {
        if (!store.connected && stores.get(key) === store) stores.delete(key);
      });
    },
  });
  stores.set(key, store);
  return store;
}
