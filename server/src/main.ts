#!/usr/bin/env node
import { buildApp } from './app.ts';
import { generateKey, registerKey } from './db/keys.ts';
import { MIN_METRICS_TOKEN_LENGTH, readConfig, retiredSettingWarnings, usage, UsageError, type Config, type KeyEntry } from './config.ts';
import { openDatabase, type Db } from './db/index.ts';
import { addMissingDemoWorkflows, seedDemo, isFresh } from './seed.ts';
import { startPlayground } from './demo.ts';
import { Scheduler } from './engine/scheduler.ts';
import { configureEngine } from './engine/settings.ts';

/** Exit codes: a usage error (a bad argument or setting), and any other failure. */
const EXIT_USAGE = 2;
const EXIT_FAILURE = 1;

/** Makes the demo data in a new database and prints its development key. */
async function seedFresh(db: Db): Promise<void> {
  const { key } = await seedDemo(db);
  // Kept so `npm start` can hand the playground (localhost only) its development key on later runs.
  await db.kysely.insertInto('settings').values({ name: 'demo_api_key', value: key }).execute();
  console.log(`seeded demo data; development API key (organization demo, environment development): ${key}`);
}

/** Opens the database the configuration names, with its settings. */
function openConfiguredDatabase(config: Config): Promise<Db> {
  return openDatabase({
    location: config.database,
    encryptionKey: config.encryptionKey,
    postgres: {
      poolSize: config.pgPoolSize,
      preparedStatements: config.pgPrepared,
      queryTimeoutMs: config.pgQueryTimeoutMs,
      connectTimeoutMs: config.pgConnectTimeoutMs,
      listenHeartbeatMs: config.listenHeartbeatMs,
    },
  });
}

async function main(argv: string[]) {
  const config = readConfig(argv, process.env);
  if (config.help) {
    console.log(usage());
    return;
  }
  for (const warning of retiredSettingWarnings(process.env)) console.error(warning);
  const [command = 'serve', subcommand] = config.command;
  // Every command may run the engine (seed triggers workflows): its settings first.
  configureEngine({
    runLeaseMs: config.runLeaseMs,
    crashPoints: config.crashAt,
    allowPrivateWebhooks: config.allowPrivateWebhooks,
    maxTriggerBytes: config.maxTriggerBytes,
    snoozeMinMs: config.snoozeMinMs,
  });

  if (command === 'keys') return createKey(config, subcommand);
  if (command === 'seed') return seed(config);
  if (command !== 'serve') throw new UsageError(`unknown command '${command}'`);
  return serve(config);
}

async function createKey(config: Config, subcommand: string | undefined) {
  const { organization, environment } = config;
  if (subcommand !== 'create' || !organization || !environment) throw new UsageError('usage: keys create --org ORG --env ENV');
  const db = await openConfiguredDatabase(config);
  const key = generateKey();
  await db.exclusive(() => registerKey(db, key, organization, environment));
  await db.close();
  console.log(key);
}

async function seed(config: Config) {
  const db = await openConfiguredDatabase(config);
  try {
    const seeded = await db.exclusive(async () => {
      if (!(await isFresh(db))) return false;
      await seedFresh(db);
      return true;
    });
    if (!seeded) throw new UsageError('the database already holds data; seed makes the demo data in a new one only');
  } finally {
    await db.close();
  }
}

async function serve(config: Config) {
  const db = await openConfiguredDatabase(config);
  // One process at a time: servers starting together on one PostgreSQL database would otherwise
  // both find it fresh, or both create the organization of a key.
  await db.exclusive(async () => {
    const fresh = await isFresh(db);
    await registerKeys(db, config.apiKeys ?? []);
    if (config.noSeed) return;
    if (fresh) {
      await seedFresh(db);
      return;
    }
    // A database seeded by an earlier version gets the demo workflows added since (none is changed).
    const added = await addMissingDemoWorkflows(db);
    if (added.length > 0) console.log(`added demo workflows to the demo environment: ${added.join(', ')}`);
    // Its development key again, as on the first start: the README's first commands need it.
    const demoKey = await db.kysely.selectFrom('settings').select('value').where('name', '=', 'demo_api_key').executeTakeFirst();
    if (demoKey) console.log(`demo data; development API key (organization demo, environment development): ${demoKey.value}`);
  });

  const metricsToken = config.metricsToken;
  // /metrics is reachable by anyone who can reach the service: a short token could be guessed.
  if (metricsToken && metricsToken.length < MIN_METRICS_TOKEN_LENGTH) {
    console.error(`warning: the metrics token has fewer than ${MIN_METRICS_TOKEN_LENGTH} characters; use a random one (openssl rand -hex 32)`);
  }
  const app = await buildApp({
    db,
    logger: config.logLevel ?? config.log,
    faults: config.faults,
    rateLimit: config.rateLimit && { ...config.rateLimit, scope: config.rateLimitScope },
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    metricsToken,
    pressure: {
      maxEventLoopDelayMs: config.maxEventLoopDelayMs,
      maxHeapUsedBytes: config.maxHeapBytes,
      maxRssBytes: config.maxRssBytes,
    },
    streams: {
      max: config.maxStreams,
      perSubscriber: config.streamsPerSubscriber,
      perEnvironment: config.streamsPerEnvironment,
      heartbeatMs: config.streamHeartbeatMs,
      eventBytes: config.streamEventBytes,
      catchUpBytes: config.streamCatchUpBytes,
    },
    idempotencyInFlightMs: config.idempotencyInFlightMs,
    idempotencyCaps: {
      keysPerSubscriber: config.idempotencyKeysPerSubscriber,
      bytesPerSubscriber: config.idempotencyBytesPerSubscriber,
      keysPerOrganization: config.idempotencyKeysPerOrganization,
      bytesPerOrganization: config.idempotencyBytesPerOrganization,
    },
  });
  const address = await app.listen({ port: config.port, host: config.host });
  console.log(`listening on ${address.replace('[::1]', 'localhost')}`);
  const playground = config.demo ? await startPlayground({ apiUrl: address, db }) : null;
  if (playground) console.log(`playground on ${playground.url}`);
  // Runs the steps that waited (delay, digest) when they are due, overdue ones first at start.
  const scheduler = config.noScheduler ? null : new Scheduler(db, { pollMs: config.schedulerPollMs, sweepMs: config.payloadSweepMs });
  scheduler?.start();

  // Graceful shutdown: stop taking connections (new requests on kept-alive ones get 503), let the
  // requests in flight and the scheduler's steps in hand finish, then close the database. Past
  // the shutdown timeout it exits anyway: what did not finish is resumed by another process (or
  // this one's next start) once its lease ends.
  let closing = false;
  const close = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: draining requests and scheduled steps');
    const timeoutMs = config.shutdownTimeoutMs;
    setTimeout(() => {
      console.error(`shutdown took over ${timeoutMs} ms; exiting`);
      process.exit(EXIT_FAILURE);
    }, timeoutMs).unref();
    try {
      await Promise.all([app.close(), scheduler?.stop(), playground?.close()]);
      await db.close();
    } catch (err) {
      console.error('shutdown:', err);
      process.exit(EXIT_FAILURE);
    }
    console.log('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => close('SIGINT'));
  process.on('SIGTERM', () => close('SIGTERM'));
}

async function registerKeys(db: Db, keys: KeyEntry[]) {
  for (const { key, org, env } of keys) await registerKey(db, key, org, env);
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof UsageError) {
    console.error(`${err.message}\n\n${usage()}`);
    process.exit(EXIT_USAGE);
  }
  console.error(err);
  process.exit(EXIT_FAILURE);
});
