// The page registry: every element that names the same service, subscriber, feed, payload filter
// and authentication shares one InboxStore (one poller, one state).
import { InboxStore, storeKey } from './store.ts';
import type { InboxConfig } from './types.ts';

export { InboxStore, storeKey } from './store.ts';
export type * from './types.ts';

const registry = new Map<string, InboxStore>();
const fetchIds = new WeakMap<typeof fetch, number>();
let nextFetchId = 0;

/** The registry key: the store key plus the identity of an app-supplied fetch. */
const pageKey = (config: InboxConfig) => {
  let fetchId = 0;
  if (config.fetch) {
    fetchId = fetchIds.get(config.fetch) ?? ++nextFetchId;
    fetchIds.set(config.fetch, fetchId);
  }
  return `${storeKey(config)}#${fetchId}`;
};

/**
 * The page's store for `config` (created on first use). Elements `connect()` it while attached;
 * when the last one disconnects the store stops, and leaves the registry unless it is reconnected
 * in the same task (an element moved in the DOM).
 */
export function getInboxStore(config: InboxConfig): InboxStore {
  const key = pageKey(config);
  let store = registry.get(key);
  if (!store) {
    const created = (store = new InboxStore(config));
    registry.set(key, created);
    created.onDispose = () =>
      queueMicrotask(() => {
        if (!created.connected && registry.get(key) === created) registry.delete(key);
      });
    created.onConnect = () => {
      if (!registry.has(key)) registry.set(key, created);
    };
  }
  return store;
}
