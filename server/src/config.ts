// One schema for every setting of the service: each command-line flag and each environment
// variable, with its type, unit, default and what it does. The command line (main.ts) reads the
// arguments and the environment once, through readConfig, and hands the values down; no other
// module reads process.env. The `--help` text (usage) and the reference in docs/settings.md
// (settingsReference, `npm run settings`) are generated from it, so they cannot drift apart.
//
// A value that is set must be valid: readConfig refuses anything else with a UsageError naming the
// flag or variable (main.ts prints it with the usage and exits 2), rather than taking a negative
// number as is or a misspelt one as the default without a word. A variable set empty counts as unset.

import { parseArgs } from 'node:util';
import { DEFAULT_LISTEN_HEARTBEAT_MS } from './db/changes.ts';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_POOL_SIZE, DEFAULT_QUERY_TIMEOUT_MS } from './db/index.ts';
import { DEFAULT_MAX_TRIGGER_BYTES, DEFAULT_RUN_LEASE_MS, DEFAULT_SNOOZE_MIN_MS } from './engine/settings.ts';
import { DEFAULT_PAYLOAD_SWEEP_MS, DEFAULT_SCHEDULER_POLL_MS } from './engine/scheduler.ts';
import { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from './plugins/connections.ts';
import {
  DEFAULT_BYTES_PER_ORGANIZATION,
  DEFAULT_BYTES_PER_SUBSCRIBER,
  DEFAULT_IN_FLIGHT_MS,
  DEFAULT_KEYS_PER_ORGANIZATION,
  DEFAULT_KEYS_PER_SUBSCRIBER,
} from './plugins/idempotency.ts';
import { DEFAULT_MAX_EVENT_LOOP_DELAY_MS } from './plugins/pressure.ts';
import type { RateLimitConfig, RateLimitScope } from './plugins/rate-limit.ts';
import { DEFAULT_STREAM_CATCH_UP_BYTES, DEFAULT_STREAM_HEARTBEAT_MS } from './inbox/stream.ts';
import { DEFAULT_STREAM_EVENT_BYTES } from './inbox/stream-preview.ts';
import { DEFAULT_MAX_STREAMS, DEFAULT_STREAMS_PER_SUBSCRIBER } from './inbox/stream-slots.ts';

/** A setting's value that cannot be used, or a command line that makes no sense: exit 2 with the usage. */
export class UsageError extends Error {}

/** Where the service keeps its data when neither --db nor DATABASE_URL says. */
export const DEFAULT_DATABASE = '.notif-data/notif.db';
/** The port and address `serve` listens on when nothing else is set. */
export const DEFAULT_PORT = 3030;
export const DEFAULT_HOST = '127.0.0.1';
/** How long SIGTERM waits for requests and steps in flight, when nothing else is set. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
/** The log level `--log` turns on. */
export const DEFAULT_LOG_LEVEL = 'info';
/** Below this many characters a metrics token is short enough to be guessed: main.ts warns. */
export const MIN_METRICS_TOKEN_LENGTH = 32;

const HIGHEST_PORT = 65_535;

// --- Types of values ---------------------------------------------------------------------------

/** How a value is written and read: its name in the reference, what --help shows for it, its parser. */
interface ValueType<T> {
  /** The type (and unit) as the reference names it: "milliseconds", "whole number". */
  label: string;
  /** What --help writes after a flag that takes a value: MS, N, PATH. */
  placeholder: string;
  /** The value of `text`; throws a UsageError naming `source` (the flag or variable) when it cannot be one. */
  parse(text: string, source: string): T;
  /** How the reference writes a value (a default); String() when absent. */
  format?(value: T): string;
}

/**
 * A number: positive (`whole`: an integer too), or 0 when `zero` says what 0 means. `noun` names
 * it in errors ("must be a positive number of milliseconds").
 */
function numberType(label: string, placeholder: string, noun: string, options: { whole?: boolean; zero?: string } = {}): ValueType<number> {
  return {
    label: options.zero ? `${label} (0: ${options.zero})` : label,
    placeholder,
    format: (value) => value.toLocaleString('en-US'),
    parse(text, source) {
      const value = Number(text);
      const allowed = Number.isFinite(value) && (options.zero ? value >= 0 : value > 0) && (!options.whole || Number.isInteger(value));
      if (allowed) return value;
      const rule = options.zero ? `a ${noun} (0: ${options.zero})` : `a positive ${noun}`;
      throw new UsageError(`${source} must be ${rule}, not '${text}'`);
    },
  };
}

const milliseconds = numberType('milliseconds', 'MS', 'number of milliseconds');
const count = numberType('whole number', 'N', 'whole number', { whole: true });
const bytes = numberType('bytes', 'BYTES', 'number of bytes');

const port: ValueType<number> = {
  label: `port number, 0 to ${HIGHEST_PORT} (0: any free one)`,
  placeholder: 'N',
  parse(text, source) {
    const value = Number(text);
    if (Number.isInteger(value) && value >= 0 && value <= HIGHEST_PORT) return value;
    throw new UsageError(`${source} must be 0..${HIGHEST_PORT}, not '${text}'`);
  },
};

function text(placeholder: string, label = 'text'): ValueType<string> {
  return { label, placeholder, parse: (value) => value };
}

/** A secret: taken as it is, and never written into a message. */
const secret: ValueType<string> = { label: 'text (a secret)', placeholder: 'TEXT', parse: (value) => value };

/** On or off: a flag given, or a variable set to 1 or true (0 or false: off). */
const onOff: ValueType<boolean> = {
  label: 'on or off',
  placeholder: '',
  parse(value, source) {
    const word = value.trim().toLowerCase();
    if (word === '1' || word === 'true') return true;
    if (word === '0' || word === 'false') return false;
    throw new UsageError(`${source} must be 1 or 0 (true or false), not '${value}'`);
  },
};

function oneOf<const T extends string>(values: readonly T[], placeholder: string): ValueType<T> {
  return {
    label: `one of ${values.join(', ')}`,
    placeholder,
    parse(value, source) {
      if ((values as readonly string[]).includes(value)) return value as T;
      throw new UsageError(`${source} must be one of ${values.join(', ')}, not '${value}'`);
    },
  };
}

/** Comma-separated words. */
const list: ValueType<string[]> = {
  label: 'comma-separated list',
  placeholder: 'A,B',
  parse: (value) => value.split(',').map((item) => item.trim()).filter(Boolean),
};

const RATE_LIMIT_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * `N/window`: `100/60s`, `5/10s`, `1000/1m`, `10000/1h`, `100/500ms`, or `100/60` (seconds). The
 * scope comes from its own setting (rate-limit-scope).
 */
const rateLimit: ValueType<Omit<RateLimitConfig, 'scope'>> = {
  label: 'N/window (the window in ms, s, m or h; seconds when none)',
  placeholder: 'N/WINDOW',
  parse(value, source) {
    const match = /^\s*(\d+)\s*\/\s*(\d+)\s*(ms|s|m|h)?\s*$/i.exec(value);
    if (!match) throw new UsageError(`${source} '${value}' is not of the form N/window (for example 100/60s)`);
    const limit = Number(match[1]);
    const unit = (match[3] ?? 's').toLowerCase();
    const windowMs = Number(match[2]) * RATE_LIMIT_UNITS[unit]!;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new UsageError(`${source} '${value}': N must be at least 1`);
    if (!Number.isSafeInteger(windowMs) || windowMs < 1) throw new UsageError(`${source} '${value}': the window must be longer than 0`);
    return { limit, windowMs };
  },
};

/** One API key to register at start. */
export interface KeyEntry {
  key: string;
  org: string;
  env: string;
}

/** `key1=org/env,key2=org/env2`. An entry that is not of that form is named by its place, never quoted (it holds a key). */
const keyList: ValueType<KeyEntry[]> = {
  label: 'key=organization/environment, comma-separated',
  placeholder: 'KEY=ORG/ENV,...',
  parse(value, source) {
    const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean);
    return entries.map((entry, index) => {
      const match = /^([^=\s]+)=([^/\s]+)\/([^/\s]+)$/.exec(entry);
      if (!match) throw new UsageError(`${source}: entry ${index + 1} is not of the form key=org/env`);
      return { key: match[1]!, org: match[2]!, env: match[3]! };
    });
  },
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const RATE_LIMIT_SCOPES = ['key', 'environment'] as const satisfies readonly RateLimitScope[];

// --- The settings ------------------------------------------------------------------------------

interface Setting<T> {
  /** The command-line flag, without its dashes. */
  flag?: string;
  /** The environment variable. */
  variable?: string;
  type: ValueType<T>;
  /** The value when neither the flag nor the variable is given; absent: none. */
  default?: T;
  /** The default as the reference writes it, when it is not a value (another setting's, say). */
  defaultText?: string;
  description: string;
  /** Read by tests only. */
  testOnly?: boolean;
  /** The variable wins over the flag (DATABASE_URL over --db); otherwise the flag wins. */
  variableFirst?: boolean;
}

/** Every setting of the service, in the order --help and the reference list them. */
export const SETTINGS = {
  database: {
    flag: 'db',
    variable: 'DATABASE_URL',
    variableFirst: true,
    type: text('PATH', 'path or postgres:// URL'),
    default: DEFAULT_DATABASE,
    description: 'the database: a SQLite file (:memory: for none), or PostgreSQL with postgres://...; migrations run at start. DATABASE_URL wins over --db',
  },
  port: { flag: 'port', type: port, default: DEFAULT_PORT, description: 'serve: the port to listen on' },
  host: { flag: 'host', type: text('HOST', 'host name or address'), default: DEFAULT_HOST, description: 'serve: the address to listen on (0.0.0.0: every interface)' },
  noSeed: {
    flag: 'no-seed',
    type: onOff,
    default: false,
    description: 'serve: a new database stays empty (otherwise it gets the demo data and prints its key; a database seeded by an earlier version gets the demo workflows added since)',
  },
  apiKeys: {
    variable: 'NOTIF_API_KEYS',
    type: keyList,
    description: 'serve: API keys to register at start, each for an environment of an organization (both made as needed)',
  },
  organization: { flag: 'org', type: text('ORG', 'name'), description: 'keys create: the organization of the new key' },
  environment: { flag: 'env', type: text('ENV', 'name'), description: 'keys create: the environment of the new key' },
  encryptionKey: {
    variable: 'NOTIF_ENCRYPTION_KEY',
    type: secret,
    description: 'the passphrase integration secrets are sealed with at rest; otherwise a random key is generated and kept in the database',
  },
  rateLimit: {
    flag: 'rate-limit',
    variable: 'NOTIF_RATE_LIMIT',
    type: rateLimit,
    defaultText: 'off',
    description:
      'at most N requests per window per API key; requests with no key or an unknown one count against their client address, so a new random key per request gets no budget of its own',
  },
  rateLimitScope: {
    flag: 'rate-limit-scope',
    variable: 'NOTIF_RATE_LIMIT_SCOPE',
    type: oneOf(RATE_LIMIT_SCOPES, 'SCOPE'),
    default: 'key',
    description: 'what a rate limit counts: each API key, or each environment (all its keys together)',
  },
  noScheduler: {
    flag: 'no-scheduler',
    type: onOff,
    default: false,
    description: 'serve: run no delayed steps (delay, digest) in this process, nor resume the runs of a process that died; another process on the same database does',
  },
  schedulerPollMs: {
    variable: 'NOTIF_SCHEDULER_POLL_MS',
    type: milliseconds,
    default: DEFAULT_SCHEDULER_POLL_MS,
    description: "the scheduler's longest sleep between two looks at the due jobs",
  },
  runLeaseMs: {
    variable: 'NOTIF_RUN_LEASE_MS',
    type: milliseconds,
    default: DEFAULT_RUN_LEASE_MS,
    description: 'how long a process holds the runs it is executing before another may resume them',
  },
  maxTriggerBytes: {
    variable: 'NOTIF_MAX_TRIGGER_BYTES',
    type: bytes,
    default: DEFAULT_MAX_TRIGGER_BYTES,
    description:
      "one trigger's byte budget: the bytes of its payload and overrides (as JSON) x its recipients x its workflow's steps; past it the trigger is refused with 422 naming this setting, and nothing is written",
  },
  log: { flag: 'log', type: onOff, default: false, description: `JSON logs on stdout (level ${DEFAULT_LOG_LEVEL}), one line per request with its id; never a header, an API key or a body` },
  logLevel: { variable: 'NOTIF_LOG_LEVEL', type: oneOf(LOG_LEVELS, 'LEVEL'), defaultText: 'off (--log: info)', description: 'JSON logs on stdout at this level' },
  metricsToken: {
    flag: 'metrics-token',
    variable: 'NOTIF_METRICS_TOKEN',
    type: secret,
    defaultText: 'none: /metrics is not served',
    description: `serve GET /metrics (Prometheus text) to "Authorization: Bearer TOKEN". At least ${MIN_METRICS_TOKEN_LENGTH} random characters (a warning otherwise); prefer the variable, as an argument shows in the process list`,
  },
  allowPrivateWebhooks: {
    flag: 'allow-private-webhooks',
    variable: 'NOTIF_ALLOW_PRIVATE_WEBHOOKS',
    type: onOff,
    default: false,
    description: 'let chat webhooks reach loopback, private, link-local and metadata addresses, which are refused by default; development only',
  },
  headersTimeoutMs: {
    variable: 'NOTIF_HEADERS_TIMEOUT_MS',
    type: milliseconds,
    default: DEFAULT_HEADERS_TIMEOUT_MS,
    description: "how long a client may take to send a request's headers; then 408 and the connection closes",
  },
  requestTimeoutMs: {
    variable: 'NOTIF_REQUEST_TIMEOUT_MS',
    type: milliseconds,
    default: DEFAULT_REQUEST_TIMEOUT_MS,
    description: 'how long a client may take to send a whole request; then 408 and the connection closes. Answers are not timed; idle keep-alive connections close after 72 s',
  },
  maxEventLoopDelayMs: {
    variable: 'NOTIF_MAX_EVENT_LOOP_DELAY_MS',
    type: milliseconds,
    default: DEFAULT_MAX_EVENT_LOOP_DELAY_MS,
    description: 'overload: past this mean event loop delay, requests get 503 with Retry-After: 5 (GET /health and /metrics still answer)',
  },
  maxHeapBytes: { variable: 'NOTIF_MAX_HEAP_BYTES', type: bytes, defaultText: 'none', description: 'overload: past this much heap in use, requests get 503 with Retry-After: 5' },
  maxRssBytes: { variable: 'NOTIF_MAX_RSS_BYTES', type: bytes, defaultText: 'none', description: 'overload: past this resident set size, requests get 503 with Retry-After: 5' },
  shutdownTimeoutMs: {
    variable: 'NOTIF_SHUTDOWN_TIMEOUT_MS',
    type: milliseconds,
    default: DEFAULT_SHUTDOWN_TIMEOUT_MS,
    description: 'on SIGTERM, how long requests and steps in flight may take; then the process exits, and what did not finish is resumed by another process (or the next start)',
  },
  payloadSweepMs: {
    variable: 'NOTIF_PAYLOAD_SWEEP_MS',
    type: numberType('milliseconds', 'MS', 'number of milliseconds', { zero: 'never' }),
    default: DEFAULT_PAYLOAD_SWEEP_MS,
    description:
      "how often the scheduler looks at 1,000 more stored trigger payloads, beside its jobs, and deletes those more than a day old that no notification, job or message refers to (a trigger that reached nobody)",
  },
  maxStreams: {
    variable: 'NOTIF_MAX_STREAMS',
    type: count,
    default: DEFAULT_MAX_STREAMS,
    description:
      'open streams one process holds; past it a new stream gets 503 with Retry-After: 30, and a full process ends the oldest stream of the environment holding the most for one of an environment holding fewer. An idle stream costs about 11 KB of RSS',
  },
  streamsPerSubscriber: {
    variable: 'NOTIF_STREAMS_PER_SUBSCRIBER',
    type: count,
    default: DEFAULT_STREAMS_PER_SUBSCRIBER,
    description: 'open streams one subscriber holds; a new one ends the oldest',
  },
  streamsPerEnvironment: {
    variable: 'NOTIF_STREAMS_PER_ENVIRONMENT',
    type: count,
    defaultText: 'NOTIF_MAX_STREAMS',
    description:
      "open streams one environment holds in one process; past it that environment's new streams get 503 with Retry-After: 30. By default one environment can use the whole process, yet never keeps the others out (see NOTIF_MAX_STREAMS)",
  },
  streamHeartbeatMs: {
    variable: 'NOTIF_STREAM_HEARTBEAT_MS',
    type: milliseconds,
    default: DEFAULT_STREAM_HEARTBEAT_MS,
    description: 'how often an idle stream sends a comment line, so proxies and load balancers keep it open',
  },
  streamEventBytes: {
    variable: 'NOTIF_STREAM_EVENT_BYTES',
    type: bytes,
    default: DEFAULT_STREAM_EVENT_BYTES,
    description:
      'the most one stream event takes: a message\'s event is a preview (the fields the elements show, no embedded subscriber or template), its payload and texts left out or cut to fit, and then marked `"preview": true` (the client reads the message for the rest)',
  },
  streamCatchUpBytes: {
    variable: 'NOTIF_STREAM_CATCH_UP_BYTES',
    type: bytes,
    default: DEFAULT_STREAM_CATCH_UP_BYTES,
    description:
      'the most a stream tells at once of messages it has not told yet (a reconnect with Last-Event-ID, or many messages committed together); past it the stream tells `refetch` instead, and the client reads its first page (one message alone is always told)',
  },
  idempotencyKeysPerSubscriber: {
    variable: 'NOTIF_IDEMPOTENCY_KEYS_PER_SUBSCRIBER',
    type: count,
    default: DEFAULT_KEYS_PER_SUBSCRIBER,
    description:
      'idempotency answers kept for the requests that name one subscriber (the inbox routes, as the proxy sends them); past it the oldest are evicted, and a retry of an evicted key runs the request again',
  },
  idempotencyBytesPerSubscriber: {
    variable: 'NOTIF_IDEMPOTENCY_BYTES_PER_SUBSCRIBER',
    type: bytes,
    default: DEFAULT_BYTES_PER_SUBSCRIBER,
    description: 'bytes of idempotency answers (before sealing) kept for one subscriber; past it the oldest are evicted',
  },
  idempotencyKeysPerOrganization: {
    variable: 'NOTIF_IDEMPOTENCY_KEYS_PER_ORGANIZATION',
    type: count,
    default: DEFAULT_KEYS_PER_ORGANIZATION,
    description:
      'idempotency answers kept for one organization, all its environments and subscribers together; past it the oldest are evicted (each process checks after storing a hundredth of the cap)',
  },
  idempotencyBytesPerOrganization: {
    variable: 'NOTIF_IDEMPOTENCY_BYTES_PER_ORGANIZATION',
    type: bytes,
    default: DEFAULT_BYTES_PER_ORGANIZATION,
    description: 'bytes of idempotency answers (before sealing) kept for one organization; past it the oldest are evicted',
  },
  pgPoolSize: { variable: 'NOTIF_PG_POOL_SIZE', type: count, default: DEFAULT_POOL_SIZE, description: 'PostgreSQL: connections per process' },
  pgPrepared: {
    variable: 'NOTIF_PG_PREPARED',
    type: onOff,
    default: true,
    description:
      'PostgreSQL: run the hot reads as statements prepared once per connection; 0 runs them unnamed, for a pooler that cannot keep them (PgBouncer in transaction mode without max_prepared_statements)',
  },
  pgQueryTimeoutMs: {
    variable: 'NOTIF_PG_QUERY_TIMEOUT_MS',
    type: milliseconds,
    default: DEFAULT_QUERY_TIMEOUT_MS,
    description:
      'PostgreSQL: how long a query of the pool may go unanswered; then it is cancelled on the server (a backend waiting for a lock would go on without it), its connection closed (one gone silent never errors on its own), and the request answers 503 with Retry-After: 1. Migrations run on connections of their own, with no query timeout',
  },
  pgConnectTimeoutMs: {
    variable: 'NOTIF_PG_CONNECT_TIMEOUT_MS',
    type: milliseconds,
    default: DEFAULT_CONNECT_TIMEOUT_MS,
    description: 'PostgreSQL: how long a request may wait for a connection, new or freed in a full pool; then it answers 503 with Retry-After: 1',
  },
  listenHeartbeatMs: {
    variable: 'NOTIF_LISTEN_HEARTBEAT_MS',
    type: milliseconds,
    default: DEFAULT_LISTEN_HEARTBEAT_MS,
    description:
      "PostgreSQL: how often the LISTEN connection (other processes' changes, for the streams) is asked a trivial query, and how long that query, the connect and the LISTEN may take; one unanswered counts as the connection lost: another is opened a second later, and every stream of the process reads what it missed. Every PostgreSQL connection also has TCP keepalive (probes after 10 s idle)",
  },
  demo: { flag: 'demo', type: onOff, default: false, description: 'serve: the playground beside the service (npm start)' },
  help: { flag: 'help', type: onOff, default: false, description: 'print every flag and variable, and what it does' },
  faults: { flag: 'faults', type: onOff, default: false, testOnly: true, description: 'fault injection (POST /__faults) and the test-only routes; never on by default' },
  idempotencyInFlightMs: {
    variable: 'NOTIF_IDEMPOTENCY_IN_FLIGHT_MS',
    type: milliseconds,
    default: DEFAULT_IN_FLIGHT_MS,
    testOnly: true,
    description: 'how long a request may hold its idempotency key unanswered before it counts as abandoned',
  },
  crashAt: {
    variable: 'NOTIF_CRASH_AT',
    type: list,
    default: [],
    testOnly: true,
    description: 'crash points: the process kills itself at the first of these boundaries it reaches (after-commit, before-background, after-step-N, after-claim, after-wait, after-wake-claim, after-wake)',
  },
  snoozeMinMs: {
    variable: 'NOTIF_SNOOZE_MIN_MS',
    type: milliseconds,
    default: DEFAULT_SNOOZE_MIN_MS,
    testOnly: true,
    description: 'the least time ahead a snooze may end (snoozeUntil); a shorter one answers 422',
  },
} satisfies Record<string, Setting<unknown>>;

/**
 * Variables earlier versions read and this one does not: each with what became of it. A deployment
 * that still sets one starts as before (refusing it would stop a service over a setting that no
 * longer does anything); main.ts prints a warning naming it, and the reference lists them.
 */
export const RETIRED_SETTINGS: Record<string, string> = {
  NOTIF_FEED_CACHE_MB:
    "the feed's answer cache is gone: under the load model nearly every feed request follows a change of the inbox, so a kept answer was almost never served again. ETags and 304 stay (the tag is a hash of the answer). A value set is ignored, with a warning at start",
  NOTIF_CHANGE_SWEEP_MS:
    "the feed versions' change rows it folded (PostgreSQL) went with the answer cache; the scheduler's sweep now deletes unreferenced stored payloads (NOTIF_PAYLOAD_SWEEP_MS). A value set is ignored, with a warning at start",
};

/** A warning for each retired variable `env` sets (RETIRED_SETTINGS). */
export function retiredSettingWarnings(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(RETIRED_SETTINGS)
    .filter(([variable]) => env[variable] !== undefined && env[variable] !== '')
    .map(([variable, what]) => `warning: ${variable} is no longer read and is ignored: ${what}`);
}

type Settings = typeof SETTINGS;
type ValueOf<S> = S extends { type: ValueType<infer T>; default: unknown } ? T : S extends { type: ValueType<infer T> } ? T | undefined : never;

/** The value of every setting: its default when neither its flag nor its variable is given. */
export type Config = { -readonly [K in keyof Settings]: ValueOf<Settings[K]> } & {
  /** The command and its words (`keys create`); `serve` when none. */
  command: string[];
};

// --- Reading -----------------------------------------------------------------------------------

/**
 * The configuration of one run: the command-line arguments and the environment read once, every
 * value checked. Throws a UsageError on the first that cannot be used (or an argument unknown).
 */
export function readConfig(argv: string[], env: NodeJS.ProcessEnv): Config {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const setting of Object.values(SETTINGS) as Setting<unknown>[]) {
    if (setting.flag) options[setting.flag] = { type: setting.type === onOff ? 'boolean' : 'string' };
  }
  options.help!.short = 'h';
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const config: Record<string, unknown> = { command: parsed.positionals };
  for (const [name, setting] of Object.entries(SETTINGS) as [string, Setting<unknown>][]) {
    config[name] = readSetting(setting, parsed.values[setting.flag ?? ''], env);
  }
  return config as Config;
}

function readSetting(setting: Setting<unknown>, flagValue: string | boolean | (string | boolean)[] | undefined, env: NodeJS.ProcessEnv): unknown {
  const fromFlag = () => {
    if (flagValue === undefined || flagValue === '') return undefined;
    // A switch given is on; a value is parsed (the last, when repeated).
    if (typeof flagValue === 'boolean') return flagValue;
    const text = Array.isArray(flagValue) ? String(flagValue.at(-1)) : flagValue;
    return setting.type.parse(text, `--${setting.flag}`);
  };
  const fromVariable = () => {
    const text = setting.variable ? env[setting.variable] : undefined;
    if (text === undefined || text === '') return undefined;
    return setting.type.parse(text, setting.variable!);
  };
  // Both are read (and so checked), whichever wins.
  const flag = fromFlag();
  const variable = fromVariable();
  const first = setting.variableFirst ? (variable ?? flag) : (flag ?? variable);
  return first ?? setting.default;
}

// --- Documentation -----------------------------------------------------------------------------

const USAGE_WIDTH = 100;
const DESCRIPTION_INDENT = 6;

/** The names a setting is given by: `--rate-limit N/WINDOW, NOTIF_RATE_LIMIT`. */
function names(setting: Setting<unknown>): string {
  const flag = setting.flag ? `--${setting.flag}${setting.type.placeholder ? ` ${setting.type.placeholder}` : ''}` : undefined;
  return [flag, setting.variable].filter(Boolean).join(', ');
}

/** The type as the reference names it; a switch says how each of its names turns it on. */
function typeOf(setting: Setting<unknown>): string {
  if (setting.type !== onOff) return setting.type.label;
  if (!setting.variable) return 'switch';
  return setting.flag ? 'switch; the variable 1 or 0' : '1 or 0';
}

function defaultOf(setting: Setting<unknown>): string {
  if (setting.defaultText !== undefined) return setting.defaultText;
  const value = setting.default;
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return 'none';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  return setting.type.format ? setting.type.format(value) : String(value);
}

/** `text` in lines of at most `width` characters (a longer word keeps its own line), each indented. */
function wrap(text: string, indent: number, width = USAGE_WIDTH): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines.map((each) => ' '.repeat(indent) + each).join('\n');
}

const COMMANDS = `  notif-inbox-server [serve] [--port N] [--host H] [--db PATH] [--no-seed] [--log] ...
      start the service. A new database gets demo data unless --no-seed; one seeded by an earlier
      version gets the demo workflows added since.
  notif-inbox-server keys create --org ORG --env ENV [--db PATH]
      print a new API key for environment ENV of organization ORG (both made as needed)
  notif-inbox-server seed [--db PATH]
      make the demo data (what serve gives a new database) in a new database, and print its key`;

/** The --help text. */
export function usage(): string {
  const entries = (Object.values(SETTINGS) as Setting<unknown>[]).filter((setting) => !setting.testOnly);
  const described = entries.map((setting) => {
    const detail = `${setting.description}. Type: ${typeOf(setting)}. Default: ${defaultOf(setting)}.`;
    return `  ${names(setting)}\n${wrap(detail, DESCRIPTION_INDENT)}`;
  });
  return `notif-inbox service (in its repository, \`npm run server --\` runs it with the same arguments)

${COMMANDS}

Settings: a flag, or an environment variable (a flag wins over its variable, but DATABASE_URL over
--db). A value that is set must be valid (a number positive, or 0 where 0 is said to mean something):
anything else is refused, naming it. docs/settings.md has them all, test-only ones included.

${described.join('\n')}

  GET /health: alive. GET /ready: the database answers and its migrations are applied (503 otherwise).`;
}

/** A Markdown table cell: pipes escaped, no line breaks. */
const cell = (value: string) => value.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function referenceTable(entries: Setting<unknown>[]): string {
  const rows = entries.map((setting) => {
    const flag = setting.flag ? `\`--${setting.flag}\`` : '';
    const variable = setting.variable ? `\`${setting.variable}\`` : '';
    return `| ${flag} | ${variable} | ${cell(typeOf(setting))} | ${cell(defaultOf(setting))} | ${cell(setting.description)} |`;
  });
  return ['| flag | variable | type | default | what it does |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** The reference of every setting, as docs/settings.md holds it between its markers. */
export function settingsReference(): string {
  const all = Object.values(SETTINGS) as Setting<unknown>[];
  const retired = Object.entries(RETIRED_SETTINGS).map(([variable, what]) => `| \`${variable}\` | ${cell(what)} |`);
  return `${referenceTable(all.filter((setting) => !setting.testOnly))}

For tests only:

${referenceTable(all.filter((setting) => setting.testOnly))}

No longer read (a value set is ignored, and the service warns at start, naming it):

${['| variable | what became of it |', '|---|---|', ...retired].join('\n')}`;
}
