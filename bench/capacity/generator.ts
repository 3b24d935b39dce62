// The capacity bench's load generator: a Node process of its own (the bench starts it with an IPC
// channel and sends it a GeneratorConfig), never the service's. It plays N users as the elements
// behave (src/store/store.ts, the bell's popover): each holds one stream, hears its events, opens
// the feed on some arrivals, marks read, clicks a CTA, reconnects with Last-Event-ID; and a backend
// that triggers messages at DESIGN.md's rates (load-model.ts). Requests go over a keep-alive pool
// of node:http connections; each stream over a connection of its own.
//
// Phases: ramp (every user counts and opens its stream, a few at a time; the generator says
// `ramped` when done), then as the bench says: warmup (the load runs, nothing is recorded), steady
// (recorded), drain (no more triggers; deliveries still awaited), done (the result is sent).
// Past ~15,000 users the bench starts several generators (a process's open files are bounded),
// each playing its share of the users and sending their share of the triggers.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { BROWSER_HEADERS, LOAD_MODEL, RECONNECT_DELAY_MS, feedPath, inboxPath, type RequestKind } from './load-model.ts';
import { distinctIndexes, exponentialMs, seededRandom } from './random.ts';
import { Tally } from './stats.ts';

export interface GeneratorConfig {
  baseUrl: string;
  apiKey: string;
  workflowId: string;
  /** The users this generator plays: user-<firstUser> ... user-<firstUser + users - 1>. */
  firstUser: number;
  users: number;
  /** Every generator's users together: this one sends its share (users / allUsers) of the triggers to many. */
  allUsers: number;
  /** Users connecting at once during the ramp. */
  rampConcurrency: number;
  /** Loopback addresses the streams connect from, in turn (more than one past ~28,000 streams: each address has its own ephemeral ports). */
  sourceAddresses: string[];
  /** Keep-alive connections the requests share. */
  requestConnections: number;
  /** The model's trigger rates times this (1: the model; 0: streams and reconnects alone, what holding users costs). */
  arrivalScale: number;
  seed: number;
}

export type Phase = 'ramp' | 'warmup' | 'steady' | 'drain' | 'done';

export type TriggerKind = 'trigger (1)' | 'trigger (100)';

export interface GeneratorResult {
  users: number;
  rampSeconds: number;
  steadySeconds: number;
  /** Every steady-state request's latency (ms), and its answers' statuses, by kind. */
  requests: Record<string, { latencies: number[]; statuses: Record<string, number> }>;
  /** Trigger to stream (ms) of every delivery of a steady-state trigger, by the trigger's kind. */
  deliveries: Record<TriggerKind, number[]>;
  /** Deliveries of steady-state triggers that never reached their recipient's stream (by the end of the drain). */
  undelivered: number;
  duplicates: number;
  /** Errors by phase, then by kind: `<request kind>: <status or error code>`. */
  errors: Record<Phase, Record<string, number>>;
  streams: { openAtSteadyEnd: number; plannedReconnects: number; drops: number };
  actions: Record<string, number>;
  generator: { cpuSeconds: number; cpuShare: number; eventLoopP99Ms: number; eventLoopMaxMs: number };
}

/** Messages this process sends its parent. */
export type GeneratorMessage = { type: 'ramped'; seconds: number } | { type: 'result'; result: GeneratorResult } | { type: 'progress'; line: string };
/** Messages its parent sends: first the config, then the phases after the ramp. */
export type GeneratorCommand = { type: 'config'; config: GeneratorConfig } | { type: 'phase'; phase: Exclude<Phase, 'ramp'> };

const REQUEST_TIMEOUT_MS = 15_000;
/** Waited before asking again for a stream the service refused without a Retry-After. */
const REFUSED_STREAM_RETRY_MS = 2_000;
const PROGRESS_EVERY_MS = 10_000;
const EVENT_LOOP_RESOLUTION_MS = 10;

interface User {
  index: number;
  subscriberId: string;
  stream?: http.ClientRequest;
  /** True while this side closes the stream on purpose (its end is then no error). */
  closing: boolean;
  lastEventId?: string;
  /** The unseen count the stream last told (the badge). */
  count: number;
  newestMessageId?: string;
  newestRead: boolean;
  openPending: boolean;
  feedOpen: boolean;
  refreshing: boolean;
  refreshAgain: boolean;
  /** The browser's HTTP cache: the ETag of each feed URL it holds. */
  etags: Map<string, string>;
  reconnectTimer?: NodeJS.Timeout;
}

interface PendingTrigger {
  kind: TriggerKind;
  sentAt: number;
  measured: boolean;
  /** The trigger request failed (an error of its own): its deliveries, if it ran after all, are not timed. */
  failed: boolean;
  waiting: Set<number>;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
}

class LoadGenerator {
  readonly #config: GeneratorConfig;
  readonly #host: string;
  readonly #port: number;
  readonly #random;
  readonly #requestAgent: http.Agent;
  readonly #streamAgent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  readonly #users: User[];
  #phase: Phase = 'ramp';
  #timers = new Set<NodeJS.Timeout>();
  #arrivalTimer?: NodeJS.Timeout;
  #broadcastTimer?: NodeJS.Timeout;
  #nextSource = 0;
  #openStreams = 0;
  #triggerNumber = 0;
  readonly #pending = new Map<number, PendingTrigger>();

  // What steady state records.
  readonly #latency = new Map<string, number[]>();
  readonly #statuses = new Map<string, Tally>();
  readonly #delivery: Record<TriggerKind, number[]> = { 'trigger (1)': [], 'trigger (100)': [] };
  readonly #errors: Record<Phase, Tally> = { ramp: new Tally(), warmup: new Tally(), steady: new Tally(), drain: new Tally(), done: new Tally() };
  readonly #actions = new Tally();
  #undelivered = 0;
  #duplicates = 0;
  #plannedReconnects = 0;
  #drops = 0;
  #requestsSent = 0;
  readonly #eventLoop = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  #progressTimer?: NodeJS.Timeout;
  #rampSeconds = 0;
  #steadyStartedAt = 0;
  #steadySeconds = 0;
  #steadyCpu = process.cpuUsage();
  #steadyCpuUsed = process.cpuUsage();
  #openAtSteadyEnd = 0;

  constructor(config: GeneratorConfig) {
    this.#config = config;
    const url = new URL(config.baseUrl);
    this.#host = url.hostname;
    this.#port = Number(url.port);
    this.#random = seededRandom(config.seed);
    // fifo: requests take the pool's connections in turn, so behind the balancer they reach every service process.
    this.#requestAgent = new http.Agent({ keepAlive: true, maxSockets: config.requestConnections, scheduling: 'fifo' });
    this.#users = Array.from({ length: config.users }, (_, index) => ({
      index,
      subscriberId: `user-${config.firstUser + index}`,
      closing: false,
      count: 0,
      newestRead: true,
      openPending: false,
      feedOpen: false,
      refreshing: false,
      refreshAgain: false,
      etags: new Map(),
    }));
  }

  /** Every user connects; resolves with the ramp's duration in seconds. */
  async ramp(): Promise<number> {
    this.#progressTimer = setInterval(() => this.#progress(), PROGRESS_EVERY_MS);
    const started = performance.now();
    await this.#ramp();
    this.#rampSeconds = (performance.now() - started) / 1000;
    return this.#rampSeconds;
  }

  /** The bench's next phase. */
  enter(phase: Exclude<Phase, 'ramp'>): GeneratorResult | undefined {
    this.#phase = phase;
    if (phase === 'warmup') {
      this.#startArrivals();
      for (const user of this.#users) this.#scheduleReconnect(user, this.#random() * LOAD_MODEL.reconnectEveryMs);
    } else if (phase === 'steady') {
      this.#steadyStartedAt = performance.now();
      this.#steadyCpu = process.cpuUsage();
      this.#eventLoop.enable();
    } else if (phase === 'drain') {
      this.#eventLoop.disable();
      this.#steadySeconds = (performance.now() - this.#steadyStartedAt) / 1000;
      this.#steadyCpuUsed = process.cpuUsage(this.#steadyCpu);
      this.#openAtSteadyEnd = this.#openStreams;
      clearTimeout(this.#arrivalTimer);
      clearInterval(this.#broadcastTimer);
    } else {
      return this.#finish();
    }
    return undefined;
  }

  #finish(): GeneratorResult {
    for (const entry of this.#pending.values()) if (entry.measured && !entry.failed) this.#undelivered += entry.waiting.size;
    clearInterval(this.#progressTimer);
    for (const timer of this.#timers) clearTimeout(timer);
    for (const user of this.#users) {
      clearTimeout(user.reconnectTimer);
      user.closing = true;
      user.stream?.destroy();
    }
    this.#requestAgent.destroy();
    const cpu = this.#steadyCpuUsed;
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    return {
      users: this.#config.users,
      rampSeconds: this.#rampSeconds,
      steadySeconds: this.#steadySeconds,
      requests: Object.fromEntries(
        [...this.#latency.entries()].map(([kind, latencies]) => [kind, { latencies, statuses: this.#statuses.get(kind)?.counts ?? {} }]),
      ),
      deliveries: this.#delivery,
      undelivered: this.#undelivered,
      duplicates: this.#duplicates,
      errors: Object.fromEntries(Object.entries(this.#errors).map(([phase, tally]) => [phase, tally.counts])) as GeneratorResult['errors'],
      streams: { openAtSteadyEnd: this.#openAtSteadyEnd, plannedReconnects: this.#plannedReconnects, drops: this.#drops },
      actions: this.#actions.counts,
      generator: {
        cpuSeconds,
        cpuShare: cpuSeconds / this.#steadySeconds,
        eventLoopP99Ms: this.#eventLoop.percentile(99) / 1e6,
        eventLoopMaxMs: this.#eventLoop.max / 1e6,
      },
    };
  }

  #progress() {
    const errors = this.#errors[this.#phase].total;
    send({ type: 'progress', line: `${this.#phase}: ${this.#openStreams} streams open, ${this.#requestsSent} requests sent, ${errors} errors in this phase` });
  }

  /** A timer the end of the run clears. */
  #later(ms: number, work: () => void) {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      work();
    }, ms);
    this.#timers.add(timer);
  }

  // ---- the ramp ----

  /** Every user connects as a page with the bell does: the unseen count, then the stream (no Last-Event-ID). */
  async #ramp() {
    let next = 0;
    const worker = async () => {
      while (next < this.#users.length) {
        const user = this.#users[next++]!;
        await this.#call('unseen count', 'GET', `${inboxPath(user.subscriberId)}/notifications/unseen`, this.#browserHeaders());
        await this.#openStream(user);
      }
    };
    await Promise.all(Array.from({ length: this.#config.rampConcurrency }, worker));
  }

  // ---- HTTP ----

  #browserHeaders(extra: Record<string, string> = {}): Record<string, string> {
    return { ...BROWSER_HEADERS, authorization: `ApiKey ${this.#config.apiKey}`, ...extra };
  }

  /** A mutation as the elements send it: JSON body, a new idempotency key. */
  #mutationHeaders(): Record<string, string> {
    return this.#browserHeaders({ 'content-type': 'application/json', 'idempotency-key': randomUUID() });
  }

  #error(kind: string, reason: string) {
    this.#errors[this.#phase].add(`${kind}: ${reason}`);
  }

  /** One request, timed from its start to the end of its answer; undefined when it got no answer. */
  #call(kind: RequestKind, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer | undefined> {
    const measured = this.#phase === 'steady';
    const started = performance.now();
    this.#requestsSent++;
    return new Promise((resolve) => {
      let settled = false;
      const fail = (reason: string) => {
        if (settled) return;
        settled = true;
        this.#error(kind, reason);
        resolve(undefined);
      };
      const request = http.request({ host: this.#host, port: this.#port, method, path, headers, agent: this.#requestAgent }, (response) => {
        response.on('data', () => {});
        response.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
        response.on('end', () => {
          if (settled) return;
          settled = true;
          const status = response.statusCode ?? 0;
          if (measured) {
            this.#samples(kind).push(performance.now() - started);
            this.#statusTally(kind).add(String(status));
          }
          if (status >= 400) this.#error(kind, `status ${status}`);
          resolve({ status, headers: response.headers });
        });
      });
      request.setTimeout(REQUEST_TIMEOUT_MS, () => request.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })));
      request.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
      request.end(body);
    });
  }

  #samples(kind: string): number[] {
    let samples = this.#latency.get(kind);
    if (!samples) this.#latency.set(kind, (samples = []));
    return samples;
  }

  #statusTally(kind: string): Tally {
    let tally = this.#statuses.get(kind);
    if (!tally) this.#statuses.set(kind, (tally = new Tally()));
    return tally;
  }

  // ---- the stream ----

  /** Opens the user's stream (with Last-Event-ID once it has heard an event); resolves when it is answered or failed. */
  #openStream(user: User): Promise<void> {
    const measured = this.#phase === 'steady';
    const started = performance.now();
    const sources = this.#config.sourceAddresses;
    const localAddress = sources.length ? sources[this.#nextSource++ % sources.length] : undefined;
    const headers = this.#browserHeaders(user.lastEventId ? { 'last-event-id': user.lastEventId } : {});
    user.closing = false;
    this.#requestsSent++;
    return new Promise((resolve) => {
      let answered = false;
      const request = http.request(
        { host: this.#host, port: this.#port, path: `${inboxPath(user.subscriberId)}/notifications/stream`, headers, agent: this.#streamAgent, localAddress },
        (response) => {
          answered = true;
          const status = response.statusCode ?? 0;
          if (status !== 200) {
            this.#error('stream open', `status ${status}`);
            user.stream = undefined;
            response.resume();
            const retryAfter = Number(response.headers['retry-after']);
            this.#later(retryAfter > 0 ? retryAfter * 1000 : REFUSED_STREAM_RETRY_MS, () => void this.#reconnect(user));
            return resolve();
          }
          if (measured) {
            this.#samples('stream open').push(performance.now() - started);
            this.#statusTally('stream open').add(String(status));
          }
          this.#openStreams++;
          resolve();
          let buffer = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            const lines = (buffer += chunk).split(/\r\n|\r|\n/);
            buffer = lines.pop()!;
            this.#hear(user, lines);
          });
          response.on('error', () => {});
          response.on('close', () => {
            this.#openStreams--;
            if (user.stream === request) user.stream = undefined;
            if (!user.closing && this.#phase !== 'done') this.#dropped(user, 'ended by the service');
          });
        },
      );
      user.stream = request;
      request.on('error', (err: NodeJS.ErrnoException) => {
        if (user.closing || this.#phase === 'done') return resolve();
        if (!answered) {
          user.stream = undefined;
          this.#error('stream open', err.code ?? err.message);
          this.#later(REFUSED_STREAM_RETRY_MS, () => void this.#reconnect(user));
        }
        resolve();
      });
      request.end();
    });
  }

  /** The stream ended without this side closing it: an error, then what the elements do after a drop. */
  #dropped(user: User, reason: string) {
    this.#drops++;
    this.#error('stream', reason);
    void this.#reconnect(user);
  }

  /**
   * What the store does when its stream has closed: the unseen count at once, then the stream again
   * after the service's retry hint (1 s) times 0.5 to 1, with Last-Event-ID.
   */
  async #reconnect(user: User) {
    if (this.#phase === 'done') return;
    await this.#call('unseen count', 'GET', `${inboxPath(user.subscriberId)}/notifications/unseen`, this.#browserHeaders());
    this.#later(RECONNECT_DELAY_MS * (0.5 + this.#random() / 2), () => void this.#openStream(user));
  }

  /** The next planned reconnect of the user's stream: 0.5 to 1.5 times the model's interval from now (or `firstMs`). */
  #scheduleReconnect(user: User, firstMs?: number) {
    const delay = firstMs ?? LOAD_MODEL.reconnectEveryMs * (0.5 + this.#random());
    user.reconnectTimer = setTimeout(() => {
      // (A user whose stream is down is reconnecting already.)
      if (user.stream) {
        this.#plannedReconnects++;
        user.closing = true;
        user.stream.destroy();
        user.stream = undefined;
        void this.#reconnect(user);
      }
      this.#scheduleReconnect(user);
    }, delay);
  }

  /** The lines of one read of the stream: events applied, then what they ask for done once (as the store coalesces within a turn). */
  #hear(user: User, lines: string[]) {
    let refresh = false;
    for (const line of lines) {
      if (!line.startsWith('data:')) continue;
      let data: { id?: string; count?: number; message?: { _id: string; payload?: { benchTrigger?: number } }; refetch?: boolean };
      try {
        data = JSON.parse(line.slice(line.startsWith('data: ') ? 6 : 5));
      } catch {
        this.#error('stream', 'unreadable event');
        continue;
      }
      if (data.id) user.lastEventId = data.id;
      if (data.count !== undefined) {
        if (data.count !== user.count && user.feedOpen) refresh = true;
        user.count = data.count;
      } else if (data.message) {
        this.#arrived(user, data.message);
        if (user.feedOpen) refresh = true;
      } else if (user.feedOpen) refresh = true;
    }
    if (refresh) void this.#refreshOpenFeed(user);
  }

  /** A new message on the user's stream: its delivery timed, and maybe the feed opened. */
  #arrived(user: User, message: { _id: string; payload?: { benchTrigger?: number } }) {
    const number = message.payload?.benchTrigger;
    if (typeof number === 'number') this.#delivered(number, user.index);
    user.newestMessageId = message._id;
    user.newestRead = false;
    if (this.#phase === 'ramp' || this.#phase === 'done') return;
    this.#actions.add('arrivals');
    if (user.feedOpen || user.openPending) return;
    if (this.#random() < LOAD_MODEL.openShare) {
      user.openPending = true;
      this.#later(this.#random() * LOAD_MODEL.openWithinMs, () => void this.#openFeed(user));
    }
  }

  #delivered(number: number, userIndex: number) {
    const entry = this.#pending.get(number);
    if (!entry || !entry.waiting.delete(userIndex)) {
      this.#duplicates++;
      return;
    }
    if (entry.measured && !entry.failed) this.#delivery[entry.kind].push(performance.now() - entry.sentAt);
    if (entry.waiting.size === 0) this.#pending.delete(number);
  }

  // ---- the feed ----

  /** A feed page as the store asks for it, with the browser's cached ETag (a 304 when unchanged). */
  async #page(kind: RequestKind, user: User, page: number, unreadOnly: boolean) {
    const path = feedPath(user.subscriberId, page, unreadOnly);
    const cached = user.etags.get(path);
    const answer = await this.#call(kind, 'GET', path, this.#browserHeaders(cached ? { 'if-none-match': cached } : {}));
    const etag = answer?.status === 200 ? answer.headers.etag : undefined;
    if (etag) user.etags.set(path, etag);
  }

  #markAllSeen(user: User) {
    user.count = 0;
    return this.#call('mark-all seen', 'POST', `${inboxPath(user.subscriberId)}/messages/mark-all`, this.#mutationHeaders(), JSON.stringify({ markAs: 'seen' }));
  }

  async #markNewestRead(user: User) {
    if (!user.newestMessageId || user.newestRead) return;
    user.newestRead = true;
    const body = JSON.stringify({ messageId: user.newestMessageId, markAs: 'read' });
    await this.#call('mark-as read', 'POST', `${inboxPath(user.subscriberId)}/messages/mark-as`, this.#mutationHeaders(), body);
  }

  /**
   * The bell opens its popover: the feed asks for its first page, and the bell marks everything seen
   * at once; the page, read while that mark was in flight, gets the mark applied in the browser
   * (src/store/mutations.ts replayFromNow), not asked again. Then, a moment later, the user may act.
   */
  async #openFeed(user: User) {
    user.openPending = false;
    if (this.#phase === 'done') return;
    user.feedOpen = true;
    user.refreshing = true;
    this.#actions.add('feed opens');
    try {
      const firstPage = this.#page('feed page 0', user, 0, false);
      if (user.count > 0) await Promise.all([firstPage, this.#markAllSeen(user)]);
      else await firstPage;
    } finally {
      user.refreshing = false;
    }
    if (user.refreshAgain) void this.#refreshOpenFeed(user);
    const act = () => this.#later(this.#random() * LOAD_MODEL.actWithinMs, () => void this.#act(user));
    act();
    this.#later(LOAD_MODEL.feedOpenMs, () => (user.feedOpen = false));
  }

  /** What a user does with an open feed: read the newest message, click its CTA, or look further. */
  async #act(user: User) {
    if (this.#phase === 'done') return;
    const reads = this.#random() < LOAD_MODEL.readShare;
    const clicks = this.#random() < LOAD_MODEL.ctaShare;
    const looksFurther = this.#random() < LOAD_MODEL.moreShare;
    const work: Promise<unknown>[] = [];
    if (reads) {
      this.#actions.add('reads');
      work.push(this.#markNewestRead(user));
    }
    if (clicks && user.newestMessageId) {
      this.#actions.add('CTA clicks');
      // store.ts action(): the action, then mark-as read when the message was unread.
      const messageId = user.newestMessageId;
      const path = `${inboxPath(user.subscriberId)}/messages/${encodeURIComponent(messageId)}/actions/primary`;
      work.push(this.#call('CTA action', 'POST', path, this.#mutationHeaders(), JSON.stringify({ status: 'done' })).then(() => this.#markNewestRead(user)));
    }
    if (looksFurther) {
      const unread = this.#random() < 0.5;
      this.#actions.add(unread ? 'Unread tab' : 'next page');
      work.push(unread ? this.#page('feed page 0 (unread)', user, 0, true) : this.#page('feed page 1', user, 1, false));
    }
    await Promise.all(work);
  }

  /**
   * An event heard while the feed is open: its first page again, and the bell marks seen the unseen
   * message the page brings (one refresh at a time; one asked meanwhile runs after it).
   */
  async #refreshOpenFeed(user: User) {
    if (user.refreshing) {
      user.refreshAgain = true;
      return;
    }
    user.refreshing = true;
    try {
      do {
        user.refreshAgain = false;
        await this.#page('feed page 0', user, 0, false);
        if (user.count > 0) await this.#markAllSeen(user);
      } while (user.refreshAgain && this.#phase !== 'done');
    } finally {
      user.refreshing = false;
    }
  }

  // ---- the backend's triggers ----

  #startArrivals() {
    const users = this.#config.users;
    const scale = this.#config.arrivalScale;
    if (scale <= 0) return;
    // Single-recipient triggers: one per user every arrivalEveryMs on average, as one Poisson process.
    const meanGapMs = LOAD_MODEL.arrivalEveryMs / users / scale;
    const next = () => {
      this.#arrivalTimer = setTimeout(() => {
        void this.#trigger([Math.floor(this.#random() * users)]);
        next();
      }, exponentialMs(this.#random, meanGapMs));
    };
    next();
    // Triggers to many: this generator's share of the model's rate, each to users of its own.
    const recipients = Math.min(LOAD_MODEL.broadcastRecipients, users);
    const everyMs = 1000 / LOAD_MODEL.broadcastsPerSecond / (users / this.#config.allUsers) / scale;
    this.#broadcastTimer = setInterval(() => void this.#trigger(distinctIndexes(this.#random, users, recipients)), everyMs);
  }

  async #trigger(recipients: number[]) {
    const number = ++this.#triggerNumber;
    const kind = recipients.length === 1 ? 'trigger (1)' : 'trigger (100)';
    const pending: PendingTrigger = { kind, sentAt: performance.now(), measured: this.#phase === 'steady', failed: false, waiting: new Set(recipients) };
    this.#pending.set(number, pending);
    const ids = recipients.map((index) => this.#users[index]!.subscriberId);
    const body = JSON.stringify({
      name: this.#config.workflowId,
      to: ids.length === 1 ? ids[0] : ids,
      payload: { author: `Author ${number % 37}`, comment: `Comment ${number}: a reply of some length, about sixty characters.`, documentId: number, benchTrigger: number },
    });
    // A backend's call: its key and JSON, no browser headers.
    const headers = { authorization: `ApiKey ${this.#config.apiKey}`, 'content-type': 'application/json' };
    const answer = await this.#call(kind, 'POST', '/v1/events/trigger', headers, body);
    if (!answer || answer.status >= 300) pending.failed = true;
  }
}

function send(message: GeneratorMessage, sent?: () => void) {
  process.send?.(message, undefined, {}, sent);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!process.send) {
    console.error('generator.ts runs as the capacity bench\'s child (an IPC channel); run npm run bench:capacity');
    process.exit(2);
  }
  console.log('generator ready');
  let generator: LoadGenerator | undefined;
  process.on('message', async (command: GeneratorCommand) => {
    if (command.type === 'config') {
      generator = new LoadGenerator(command.config);
      send({ type: 'ramped', seconds: await generator.ramp() });
      return;
    }
    const result = generator!.enter(command.phase);
    if (result) {
      // Disconnect only once the result is written: a full steady state's result is megabytes,
      // and a disconnect right after send() closed the channel with the message still queued.
      send({ type: 'result', result }, () => process.disconnect());
    }
  });
}
