#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { buildApp } from './app.ts';
import { generateKey, parseKeyList, registerKey } from './auth.ts';
import { openDatabase, type Db } from './db/index.ts';
import { addMissingDemoWorkflows, seedDemo, isFresh } from './seed.ts';
import { startPlayground } from './demo.ts';
import { parseRateLimit, type RateLimitConfig } from './ratelimit.ts';
import { Scheduler } from './engine/scheduler.ts';
import { allowPrivateWebhooks } from './engine/webhook.ts';

const USAGE = `notif-inbox service (in its repository, \`npm run server --\` runs it with the same arguments)

  notif-inbox-server [serve] [--port N] [--host H] [--db PATH] [--no-seed] [--log]
      start the service (default port 3030, database .notif-data/notif.db; --db :memory: for none;
      DATABASE_URL=postgres://... for PostgreSQL). A new database gets demo data unless --no-seed;
      one seeded by an earlier version gets the demo workflows added since.
  notif-inbox-server keys create --org ORG --env ENV [--db PATH]
      print a new API key for environment ENV of organization ORG (both made as needed)
  notif-inbox-server seed [--db PATH]
      make the demo data (what serve gives a new database) in a new database, and print its key

  --rate-limit N/WINDOW (or NOTIF_RATE_LIMIT), e.g. 100/60s: at most N requests per window per API key
      (--rate-limit-scope environment, or NOTIF_RATE_LIMIT_SCOPE: per environment); off when not given.
      Requests with no key or an unknown one count per client address.

  --no-scheduler: do not run delayed steps (delay, digest) in this process, nor resume the runs of a
      process that died; another process on the same database does. NOTIF_SCHEDULER_POLL_MS sets the
      scheduler's longest sleep (default 250).

  --log [or NOTIF_LOG_LEVEL=info|debug|warn...]: JSON logs on stdout, one line per request with its id.
  --metrics-token TOKEN (or NOTIF_METRICS_TOKEN): serve GET /metrics (Prometheus text) to
      "Authorization: Bearer TOKEN"; not served without one. At least 32 random characters (a warning
      otherwise); prefer the variable, as an argument shows in the process list.
  NOTIF_MAX_EVENT_LOOP_DELAY_MS (default 1000), NOTIF_MAX_HEAP_BYTES, NOTIF_MAX_RSS_BYTES: past these,
      requests get 503 with Retry-After (GET /health and /metrics still answer).
  NOTIF_SHUTDOWN_TIMEOUT_MS (default 10000): on SIGTERM, how long in-flight requests and steps may take.

  GET /health: alive. GET /ready: the database answers and its migrations are applied (503 otherwise).

  PostgreSQL: NOTIF_PG_POOL_SIZE (default 10) connections per process. NOTIF_PG_PREPARED=0: the hot
      reads run unnamed, not as statements prepared once per connection (for a pooler that cannot keep
      them: PgBouncer in transaction mode without max_prepared_statements, as before 1.21 or with it 0).
      NOTIF_LISTEN_HEARTBEAT_MS (default 15000): how often the LISTEN connection (other processes'
      changes, for the streams) is asked a trivial query; unanswered that long, it is opened anew.

  NOTIF_FEED_CACHE_MB (default 32; 0 turns it off): megabytes of finished feed answers kept in memory
      and served again while the subscriber's inbox is unchanged (its version is read from the database).
      Shared between environments: when it is full, one holding more than its share (the bound divided
      by the environments holding answers) evicts its own answers first.
      On PostgreSQL the scheduler folds the versions' change rows of 1,000 more subscribers every
      NOTIF_CHANGE_SWEEP_MS (default 60000; 0 never).

  NOTIF_MAX_STREAMS (default 10000), NOTIF_STREAMS_PER_SUBSCRIBER (default 10; a new one ends the oldest),
      NOTIF_STREAMS_PER_ENVIRONMENT (default NOTIF_MAX_STREAMS): open streams one process holds, past
      which a new one gets 503 with Retry-After; a full process ends the oldest stream of the
      environment holding the most for one of an environment holding fewer.

  NOTIF_HEADERS_TIMEOUT_MS (default 10000) and NOTIF_REQUEST_TIMEOUT_MS (default 15000): how long a client
      may take to send a request's headers, and the whole request; then 408 and the connection closes.

  --allow-private-webhooks (or NOTIF_ALLOW_PRIVATE_WEBHOOKS=1): let chat webhooks reach loopback, private,
      link-local and metadata addresses, which are refused by default. For development only.

Environment: NOTIF_API_KEYS="key1=org/env,key2=org/env2" registers keys at start.`;

/** Makes the demo data in a new database and prints its development key. */
async function seedFresh(db: Db): Promise<void> {
  const { key } = await seedDemo(db);
  // Kept so `npm start` can hand the playground (localhost only) its development key on later runs.
  await db.kysely.insertInto('settings').values({ name: 'demo_api_key', value: key }).execute();
  console.log(`seeded demo data; development API key (organization demo, environment development): ${key}`);
}

async function main(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      db: { type: 'string' },
      'no-seed': { type: 'boolean' },
      'no-scheduler': { type: 'boolean' },
      'allow-private-webhooks': { type: 'boolean' },
      demo: { type: 'boolean' },
      faults: { type: 'boolean' },
      'rate-limit': { type: 'string' },
      'rate-limit-scope': { type: 'string' },
      log: { type: 'boolean' },
      'metrics-token': { type: 'string' },
      org: { type: 'string' },
      env: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return console.log(USAGE);
  const location = process.env.DATABASE_URL || values.db || '.notif-data/notif.db';
  const [command = 'serve', sub] = positionals;

  if (command === 'keys') {
    if (sub !== 'create' || !values.org || !values.env) throw new UsageError('usage: keys create --org ORG --env ENV');
    const db = await openDatabase({ location });
    const key = generateKey();
    await db.exclusive(() => registerKey(db, key, values.org!, values.env!));
    await db.close();
    console.log(key);
    return;
  }
  if (command === 'seed') {
    const db = await openDatabase({ location });
    try {
      const fresh = await db.exclusive(async () => (await isFresh(db)) && (await seedFresh(db), true));
      if (!fresh) throw new UsageError('the database already holds data; seed makes the demo data in a new one only');
    } finally {
      await db.close();
    }
    return;
  }
  if (command !== 'serve') throw new UsageError(`unknown command '${command}'`);

  const port = values.port === undefined ? 3030 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0..65535, not '${values.port}'`);
  const host = values.host ?? '127.0.0.1';
  checkNumberSettings();
  const rateLimit = rateLimitConfig(values['rate-limit'] ?? process.env.NOTIF_RATE_LIMIT, values['rate-limit-scope'] ?? process.env.NOTIF_RATE_LIMIT_SCOPE);

  if (values['allow-private-webhooks']) allowPrivateWebhooks(true);
  const db = await openDatabase({ location });
  // One process at a time: servers starting together on one PostgreSQL database would otherwise
  // both find it fresh, or both create the organization of a key.
  await db.exclusive(async () => {
    const fresh = await isFresh(db);
    await registerEnvKeys(db);
    if (!values['no-seed'] && fresh) await seedFresh(db);
    else if (!values['no-seed']) {
      // A database seeded by an earlier version gets the demo workflows added since (none is changed).
      const added = await addMissingDemoWorkflows(db);
      if (added.length > 0) console.log(`added demo workflows to the demo environment: ${added.join(', ')}`);
    }
  });

  const metricsToken = values['metrics-token'] || process.env.NOTIF_METRICS_TOKEN || undefined;
  // /metrics is reachable by anyone who can reach the service: a short token could be guessed.
  if (metricsToken && metricsToken.length < 32) console.error('warning: the metrics token has fewer than 32 characters; use a random one (openssl rand -hex 32)');
  const app = await buildApp({
    db,
    logger: process.env.NOTIF_LOG_LEVEL || (values.log ?? false),
    faults: values.faults ?? false,
    rateLimit,
    headersTimeoutMs: Number(process.env.NOTIF_HEADERS_TIMEOUT_MS) || undefined,
    requestTimeoutMs: Number(process.env.NOTIF_REQUEST_TIMEOUT_MS) || undefined,
    feedCacheBytes: feedCacheBytes(process.env.NOTIF_FEED_CACHE_MB),
    metricsToken,
    pressure: {
      maxEventLoopDelayMs: Number(process.env.NOTIF_MAX_EVENT_LOOP_DELAY_MS) || 1000,
      maxHeapUsedBytes: Number(process.env.NOTIF_MAX_HEAP_BYTES) || undefined,
      maxRssBytes: Number(process.env.NOTIF_MAX_RSS_BYTES) || undefined,
    },
  });
  const address = await app.listen({ port, host });
  console.log(`listening on ${address.replace('[::1]', 'localhost')}`);
  const playground = values.demo ? await startPlayground({ apiUrl: address, db }) : null;
  if (playground) console.log(`playground on ${playground.url}`);
  // Runs the steps that waited (delay, digest) when they are due, overdue ones first at start.
  const scheduler = values['no-scheduler'] ? null : new Scheduler(db, { pollMs: Number(process.env.NOTIF_SCHEDULER_POLL_MS) || undefined });
  scheduler?.start();

  // Graceful shutdown: stop taking connections (new requests on kept-alive ones get 503), let the
  // requests in flight and the scheduler's steps in hand finish, then close the database. Past
  // NOTIF_SHUTDOWN_TIMEOUT_MS it exits anyway: what did not finish is resumed by another process
  // (or this one's next start) once its lease ends.
  let closing = false;
  const close = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: draining requests and scheduled steps');
    const timeoutMs = Number(process.env.NOTIF_SHUTDOWN_TIMEOUT_MS) || 10_000;
    setTimeout(() => {
      console.error(`shutdown took over ${timeoutMs} ms; exiting`);
      process.exit(1);
    }, timeoutMs).unref();
    try {
      await Promise.all([app.close(), scheduler?.stop(), playground?.close()]);
      await db.close();
    } catch (err) {
      console.error('shutdown:', err);
      process.exit(1);
    }
    console.log('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void close('SIGINT'));
  process.on('SIGTERM', () => void close('SIGTERM'));
}

async function registerEnvKeys(db: Db) {
  const list = process.env.NOTIF_API_KEYS;
  if (!list) return;
  for (const { key, org, env } of parseKeyList(list)) await registerKey(db, key, org, env);
}

/**
 * The numeric settings, each read where it is used (`Number(value) || default`): a value that is
 * set must be a positive number (a whole one for counts), or 0 where 0 says "never" or "none". A
 * negative or misspelt one would otherwise be taken as is or silently replaced by the default
 * (NOTIF_LISTEN_HEARTBEAT_MS=-1 asked the database every millisecond).
 */
const NUMBER_SETTINGS: Record<string, 'ms' | 'count' | 'bytes'> = {
  NOTIF_HEADERS_TIMEOUT_MS: 'ms',
  NOTIF_REQUEST_TIMEOUT_MS: 'ms',
  NOTIF_SHUTDOWN_TIMEOUT_MS: 'ms',
  NOTIF_MAX_EVENT_LOOP_DELAY_MS: 'ms',
  NOTIF_IDEMPOTENCY_IN_FLIGHT_MS: 'ms',
  NOTIF_LISTEN_HEARTBEAT_MS: 'ms',
  NOTIF_STREAM_HEARTBEAT_MS: 'ms',
  NOTIF_SCHEDULER_POLL_MS: 'ms',
  NOTIF_RUN_LEASE_MS: 'ms',
  NOTIF_MAX_HEAP_BYTES: 'bytes',
  NOTIF_MAX_RSS_BYTES: 'bytes',
  NOTIF_PG_POOL_SIZE: 'count',
  NOTIF_PG_QUERY_TIMEOUT_MS: 'ms',
  NOTIF_PG_CONNECT_TIMEOUT_MS: 'ms',
  NOTIF_MAX_STREAMS: 'count',
  NOTIF_STREAMS_PER_SUBSCRIBER: 'count',
  NOTIF_STREAMS_PER_ENVIRONMENT: 'count',
};

function checkNumberSettings() {
  for (const [name, kind] of Object.entries(NUMBER_SETTINGS)) {
    const value = process.env[name];
    if (value === undefined || value === '') continue;
    const n = Number(value);
    if (!(n > 0) || !Number.isFinite(n) || (kind == 'count' && !Number.isInteger(n)))
      throw new UsageError(`${name} must be a positive ${kind == 'count' ? 'whole number' : kind == 'ms' ? 'number of milliseconds' : 'number of bytes'}, not '${value}'`);
  }
  const sweep = process.env.NOTIF_CHANGE_SWEEP_MS;
  if (sweep !== undefined && sweep !== '' && !(Number(sweep) >= 0 && Number.isFinite(Number(sweep))))
    throw new UsageError(`NOTIF_CHANGE_SWEEP_MS must be a number of milliseconds (0: never), not '${sweep}'`);
}

function feedCacheBytes(megabytes: string | undefined): number | undefined {
  if (megabytes === undefined || megabytes === '') return undefined;
  const n = Number(megabytes);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`NOTIF_FEED_CACHE_MB must be a number of megabytes (0 for none), not '${megabytes}'`);
  return Math.round(n * 1024 * 1024);
}

function rateLimitConfig(limit: string | undefined, scope: string | undefined): RateLimitConfig | undefined {
  if (!limit) return undefined;
  try {
    return parseRateLimit(limit, scope || 'key');
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

class UsageError extends Error {}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`${err.message}\n\n${USAGE}`);
    process.exit(2);
  }
  console.error(err);
  process.exit(1);
});
