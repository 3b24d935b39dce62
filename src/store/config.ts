// A store's configuration: its key, its numbers kept in range, and how it reaches the service.
import { inboxPath, request, type NotifClientOptions, type RequestInit2 } from '../api/request.ts';
import type { InboxConfig } from './types.ts';

const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;
const DEFAULT_POLL_INTERVAL = 15_000;
const MIN_POLL_INTERVAL = 1000;

/** Messages per page: 1..100; none, NaN, 0 or less: 20. (The one place it is kept in range, for attributes and an app's config alike.) */
export function pageSizeOf(config: InboxConfig): number {
  const size = Math.min(MAX_PAGE_SIZE, Math.round(config.pageSize ?? NaN));
  return size > 0 ? size : DEFAULT_PAGE_SIZE;
}

/** Milliseconds between polls: at least 1 s; none, 0 or less: 15 s. */
export function pollIntervalOf(config: InboxConfig): number {
  const interval = config.pollInterval! > 0 ? config.pollInterval! : DEFAULT_POLL_INTERVAL;
  return Math.max(MIN_POLL_INTERVAL, interval);
}

/** FNV-1a's offset basis and prime (32 bits). */
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** A short stable hash (FNV-1a), so channel and lock names carry no secret. */
export function hash(text: string): string {
  let value = FNV_OFFSET;
  for (const char of text) value = Math.imul(value ^ char.codePointAt(0)!, FNV_PRIME);
  return value.toString(36);
}

/** The key of a store: service, subscriber, feed, payload filter and authentication (not the fetch function). */
export const storeKey = (config: InboxConfig): string =>
  JSON.stringify([config.baseUrl, config.subscriberId, config.feedIdentifier, config.payload, config.apiKey, config.subscriberHash]);

/** The name of a store's lock and channel, shared by its copies in every tab of the browser. */
export const channelName = (config: InboxConfig): string => 'notif-inbox:' + hash(storeKey(config));

/** How a store reaches the service: the config's address, key and fetch (request() reads no other key), and the proxy's headers. */
export const apiOptions = (config: InboxConfig): NotifClientOptions => ({
  ...config,
  // The proxy (server/proxy.ts) checks the hash against the subscriber id, percent-decoded. A header's
  // value is bytes: encodeURI encodes what is outside ASCII (and '%', spaces, quotes, brackets), and
  // leaves an id of letters, digits and URL punctuation (an email address) as it is, as a proxy of an
  // earlier version reads it.
  headers: config.subscriberHash ? { 'x-subscriber-id': encodeURI(config.subscriberId), 'x-subscriber-hash': config.subscriberHash } : undefined,
});

/** Calls one of the inbox endpoints of `config`'s service: `rest` below `/v1/subscribers/<subscriberId>/`, or an absolute path. */
export function serviceCaller(config: InboxConfig) {
  const api = apiOptions(config);
  return <T>(rest: string, init: RequestInit2, method = 'GET'): Promise<T> => {
    const path = rest.startsWith('/') ? rest : inboxPath(config.subscriberId, rest);
    return request<T>(api, method, path, init);
  };
}
