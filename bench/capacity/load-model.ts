// What the capacity bench's load generator does, as data: DESIGN.md's load model ("The load
// model"), and what the elements send (src/store/store.ts, src/api/request.ts) to the letter.

/** DESIGN.md "The load model": every figure of it, named. */
export const LOAD_MODEL = {
  /** Each user's stream is reconnected (with Last-Event-ID) about this often: uniformly 0.5 to 1.5 times it. */
  reconnectEveryMs: 10 * 60_000,
  /** Each user receives a single-recipient trigger's message about this often (a Poisson process over all users). */
  arrivalEveryMs: 10 * 60_000,
  /** On top of those, triggers to many subscribers at once: this many a second ... */
  broadcastsPerSecond: 1,
  /** ... each to this many distinct users (the API's largest `to`). */
  broadcastRecipients: 100,
  /** The share of arrivals on which the user opens the feed ... */
  openShare: 0.3,
  /** ... at a uniformly drawn moment within this many ms of the arrival. */
  openWithinMs: 5_000,
  /** Of the opens, the share that marks one message read ... */
  readShare: 0.5,
  /** ... the share that clicks a CTA ... */
  ctaShare: 0.05,
  /** ... and the share that switches to the Unread tab or loads a page further (half each). */
  moreShare: 0.01,
  /** How long after opening the user acts on a message (uniformly within it). */
  actWithinMs: 3_000,
  /** How long the feed stays open (arrivals meanwhile refresh it, as the elements do). */
  feedOpenMs: 15_000,
} as const;

/** The Message fields the elements ask for (src/store/store.ts FEED_FIELDS). */
export const FEED_FIELDS = '_id,subject,content,createdAt,read,seen,avatar,cta,templateIdentifier,transactionId,payload';
/** The elements' page size (src/store/store.ts: 20 unless configured). */
export const PAGE_SIZE = 20;

/** After a stream drops, the elements wait the service's `retry:` hint (1 s) times 0.5 to 1 (store.ts backoff) before reconnecting. */
export const RECONNECT_DELAY_MS = 1000;

/**
 * A feed page's path and query as the store builds them (store.ts #page through request.ts):
 * URLSearchParams in the order page, limit, read (only on the Unread tab), fields; commas
 * percent-encoded as URLSearchParams encodes them.
 */
export function feedPath(subscriberId: string, page: number, unreadOnly: boolean): string {
  const query = new URLSearchParams();
  query.append('page', String(page));
  query.append('limit', String(PAGE_SIZE));
  if (unreadOnly) query.append('read', 'false');
  query.append('fields', FEED_FIELDS);
  return `${inboxPath(subscriberId)}/notifications/feed?${query}`;
}

/** The base of the inbox endpoints (request.ts `inbox`). */
export const inboxPath = (subscriberId: string) => `/v1/subscribers/${encodeURIComponent(subscriberId)}`;

/**
 * The headers a browser's fetch adds to the elements' own (Chrome's, for a GET from a page):
 * compression accepted, so the service compresses a page as it would for a browser.
 */
export const BROWSER_HEADERS = {
  accept: '*/*',
  'accept-encoding': 'gzip, deflate, br, zstd',
  'accept-language': 'en-US,en;q=0.9',
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
} as const;

/** The kinds of request the generator times, in the order the report lists them. */
export const REQUEST_KINDS = [
  'unseen count',
  'stream open',
  'feed page 0',
  'feed page 0 (unread)',
  'feed page 1',
  'mark-all seen',
  'mark-as read',
  'CTA action',
  'trigger (1)',
  'trigger (100)',
] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

/** Budgets (DESIGN.md "Budgets", capacity). */
export const BUDGET = {
  requestP99Ms: 50,
  triggerToStreamP99Ms: 250,
  rssBytes: 1024 ** 3,
} as const;
