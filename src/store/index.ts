// The store's entry: the page registry (getInboxStore) and the store live in store.ts.
export { InboxStore, getInboxStore, storeKey } from './store.ts';
export type * from './types.ts';
