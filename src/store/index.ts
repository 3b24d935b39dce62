// The store's entry: the page registry (getInboxStore) and the store (InboxStore, a facade over its
// parts: feed-pages.ts, mutations.ts, freshness/, tabs/).
export { InboxStore } from './inbox-store.ts';
export { getInboxStore } from './registry.ts';
export { storeKey } from './config.ts';
export type * from './types.ts';
