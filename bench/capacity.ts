/**
 * Capacity: how many connected users one box serves under DESIGN.md's load model ("The load
 * model"), within the capacity budget (every request kind's p99 <= 50 ms, trigger to stream p99
 * <= 250 ms, the service's RSS <= 1 GB, no errors).
 *
 *   npm run bench:capacity -- --users 10000                 SQLite, one service process
 *   npm run bench:capacity -- --users 10000 --database postgres://notif@127.0.0.1:5432/notif
 *                                                           PostgreSQL (a fresh database made on that
 *                                                           server, dropped after), two service
 *                                                           processes behind the bench's balancer
 *   npm run bench:capacity -- --search [--from 2000]        the largest N within the budget
 *   npm run bench:capacity -- --users 1000 --debug          about a minute of load (10 s warm-up, 40 s steady)
 *
 * Options: --warmup S (default 60), --steady S (default 180), --processes P (SQLite 1, PostgreSQL 2),
 * --profile (node --cpu-prof on every service process, summarised for the steady state),
 * --min-messages / --max-messages (each user's seeded history, default 50 and 100),
 * --ramp-concurrency C (users connecting at once before the load, default 32),
 * --request-connections C (each generator's keep-alive pool, default 64),
 * --reseed (seed again rather than copy the kept seed of the same N and history),
 * --trace-sql (every statement the services run, timed by its text over the steady state:
 * bench/capacity/sql-trace.cjs; it slows them a little),
 * --arrival-scale F (diagnostic, not the model: the trigger rates times F; 0 measures what holding
 * N users costs alone: streams, heartbeats, reconnects).
 *
 * Processes: the service (compiled, as in production: scripts/service.mjs serviceCommand), the
 * balancer (bench/capacity/balancer.ts, with several service processes) and the load generator
 * (bench/capacity/generator.ts) each run in processes of their own; this one seeds the database,
 * runs the phases' clock, samples every process's CPU time and RSS from /proc once a second,
 * scrapes each service's /metrics (event loop delay, time by route) at
 * the steady state's start and end, and reports; bench/out/capacity-<database>-<N>-<time>.json
 * keeps every figure of each run.
 *
 * Open files: a stream is a socket in a generator, in a service and two in the balancer. Each
 * process is started with its limit raised (`ulimit -n`; past the hard limit only with
 * CAP_SYS_RESOURCE); where it cannot be, the bench spreads the load: one generator per 15,000
 * users, one balancer worker per 8,000 connections. A service process holds its share of the
 * streams whatever the limit: a SQLite service needs a limit above N + ~1,000 (the report shows
 * each process's). Ephemeral ports: past 25,000 users the streams connect from several loopback
 * addresses (each has its own ~28,000 ports).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
// @ts-expect-error a plain .mjs module without declarations
import { serviceCommand } from '../scripts/service.mjs';
import { BENCH_KEY, BENCH_TENANT, WORKFLOW_ID, seedDatabase } from './capacity/seed.ts';
import type { GeneratorCommand, GeneratorConfig, GeneratorMessage, GeneratorResult } from './capacity/generator.ts';
import { openFilesLimit, sampleMachine, sampleProcess, startProcess, stopProcess, type Started } from './capacity/processes.ts';
import { formatProfileSummary, summarizeProfile } from './capacity/profile.ts';
import { formatRun, judge, mergeResults, type RunResult } from './capacity/results.ts';

const ROOT = resolve(import.meta.dirname, '..');
const OUT = join(ROOT, 'bench/out');
const METRICS_TOKEN = 'bench-capacity-metrics-token-of-32-characters';
const SAMPLE_EVERY_MS = 1000;
const USERS_PER_GENERATOR = 15_000;
const CONNECTIONS_PER_BALANCER_WORKER = 8_000;
/** Users past which the generators' streams connect from more than one loopback address. */
const USERS_PER_SOURCE_ADDRESS = 25_000;
/** Open files a process may need beyond its sockets (modules, the database, pipes, the request pool). */
const SPARE_FILES = 1024;
const SEARCH_LIMIT_USERS = 64_000;
/** The search stops once the largest passing N and the smallest failing one are this close (a share of the former). */
const SEARCH_RESOLUTION = 0.1;
const SEARCH_STEP_USERS = 100;
/** Where SQLite seeds are kept between runs; bump SEED_VERSION when seed.ts changes what it writes. */
const SEED_DIR = join(tmpdir(), 'notif-capacity-seeds');
const SEED_VERSION = 'v1';

const { values: opts } = parseArgs({
  options: {
    users: { type: 'string' },
    search: { type: 'boolean', default: false },
    from: { type: 'string', default: '2000' },
    database: { type: 'string' },
    processes: { type: 'string' },
    warmup: { type: 'string' },
    steady: { type: 'string' },
    drain: { type: 'string', default: '5' },
    debug: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    'min-messages': { type: 'string', default: '50' },
    'max-messages': { type: 'string', default: '100' },
    'ramp-concurrency': { type: 'string', default: '32' },
    'request-connections': { type: 'string', default: '64' },
    reseed: { type: 'boolean', default: false },
    'trace-sql': { type: 'boolean', default: false },
    'arrival-scale': { type: 'string', default: '1' },
  },
});

const POSTGRES_URL = opts.database;
const DATABASE = POSTGRES_URL ? 'PostgreSQL' : 'SQLite';
const PROCESSES = Number(opts.processes ?? (POSTGRES_URL ? 2 : 1));
const WARMUP_SECONDS = Number(opts.warmup ?? (opts.debug ? 10 : 60));
const STEADY_SECONDS = Number(opts.steady ?? (opts.debug ? 40 : 180));
const DRAIN_SECONDS = Number(opts.drain);
const ARRIVAL_SCALE = Number(opts['arrival-scale']);
if (!POSTGRES_URL && PROCESSES !== 1) {
  console.error('SQLite is served by one process (--processes applies to PostgreSQL)');
  process.exit(2);
}

const started = Date.now();
function log(line: string) {
  console.error(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds over a changing set of pids (PostgreSQL's backends): each pid's growth since it was first seen. */
class CpuMeter {
  #last = new Map<number, number>();
  total = 0;

  observe(pids: Iterable<number>) {
    for (const pid of pids) {
      const sample = sampleProcess(pid);
      if (!sample) continue;
      const last = this.#last.get(pid);
      if (last !== undefined) this.total += sample.cpuSeconds - last;
      this.#last.set(pid, sample.cpuSeconds);
    }
  }
}

/** The pids a process has started (node:cluster's workers), from /proc. */
function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * A service's /metrics: its unlabelled figures by name, and the request durations' sums and counts
 * (notif_http_request_duration_seconds) as `sum <method> <route>` and `count <method> <route>`.
 */
async function scrapeMetrics(url: string): Promise<Record<string, number>> {
  try {
    const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const figures: Record<string, number> = {};
    for (const line of (await response.text()).split('\n')) {
      const plain = /^([a-z0-9_]+) ([0-9.e+-]+|NaN)$/.exec(line);
      if (plain) figures[plain[1]!] = Number(plain[2]);
      const duration = /^notif_http_request_duration_seconds_(sum|count)\{method="([A-Z]+)",route="([^"]*)",status_code="\d+"\} ([0-9.e+-]+)$/.exec(line);
      if (duration) {
        const key = `${duration[1]} ${duration[2]} ${duration[3]}`;
        figures[key] = (figures[key] ?? 0) + Number(duration[4]);
      }
    }
    return figures;
  } catch {
    return {};
  }
}

/** The services' own time per request by route over the steady state: what the handler took, without the queue before it. */
function routeTimes(atStart: Record<string, number>[], atEnd: Record<string, number>[], seconds: number): RunResult['routes'] {
  const totals = new Map<string, { sum: number; count: number }>();
  atEnd.forEach((end, i) => {
    for (const [key, value] of Object.entries(end)) {
      const match = /^(sum|count) (.+)$/.exec(key);
      if (!match) continue;
      const delta = value - (atStart[i]![key] ?? 0);
      const entry = totals.get(match[2]!) ?? { sum: 0, count: 0 };
      if (match[1] === 'sum') entry.sum += delta;
      else entry.count += delta;
      totals.set(match[2]!, entry);
    }
  });
  return [...totals.entries()]
    .filter(([, t]) => t.count > 0)
    .map(([route, t]) => ({ route, perSecond: t.count / seconds, meanMs: (t.sum / t.count) * 1000, busyShare: t.sum / seconds }))
    .sort((a, b) => b.busyShare - a.busyShare);
}

/** The statements the services ran over the steady state (--trace-sql), merged by text, most time first. */
function readSqlTrace(prefix: string, dir: string, seconds: number): RunResult['sql'] {
  const merged = new Map<string, { calls: number; totalMs: number; maxMs: number; slowCalls: number }>();
  for (const file of readdirSync(dir).filter((f) => f.startsWith(prefix) && f.endsWith('.json'))) {
    const trace = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { statements: { sql: string; calls: number; totalMs: number; maxMs: number; slowCalls: number }[] };
    for (const s of trace.statements) {
      const entry = merged.get(s.sql) ?? { calls: 0, totalMs: 0, maxMs: 0, slowCalls: 0 };
      entry.calls += s.calls;
      entry.slowCalls += s.slowCalls;
      entry.totalMs += s.totalMs;
      entry.maxMs = Math.max(entry.maxMs, s.maxMs);
      merged.set(s.sql, entry);
    }
  }
  return [...merged.entries()]
    .map(([sql, e]) => ({ sql, perSecond: e.calls / seconds, meanMs: e.totalMs / e.calls, maxMs: e.maxMs, slowCalls: e.slowCalls, busyShare: e.totalMs / 1000 / seconds }))
    .sort((a, b) => b.busyShare - a.busyShare);
}

/** The URL of database `name` on the --database server. */
function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs `work` with a connection to the --database server's own database. */
async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A seeded database, made once for each (database kind, N, history) and kept (a SQLite file under
 * the temporary folder; a PostgreSQL database, the seed, copied as a template): seeding 10,000 users'
 * history takes minutes, copying it seconds. Made under a temporary name and renamed when
 * complete, so an interrupted seeding leaves nothing to reuse. --reseed makes it again.
 */
async function seededDatabase(users: number): Promise<{ location: string; seed: RunResult['seed'] }> {
  const minMessages = Number(opts['min-messages']);
  const maxMessages = Number(opts['max-messages']);
  const key = `${SEED_VERSION}_${users}_${minMessages}_${maxMessages}`;
  const describe = `${DATABASE}: the seed of ${users} users with ${minMessages} to ${maxMessages} messages each`;
  const seedInfo = (messages: number, seconds: number) => ({ messages, seconds });
  if (!POSTGRES_URL) {
    mkdirSync(SEED_DIR, { recursive: true });
    const file = join(SEED_DIR, `capacity-${key}.db`);
    const info = `${file}.json`;
    if (opts.reseed || !existsSync(info)) {
      log(`${describe}: seeding (kept in ${SEED_DIR} for the next runs)...`);
      const building = `${file}.building`;
      rmSync(building, { force: true });
      const made = await seedDatabase({ location: building, users, minMessages, maxMessages });
      renameSync(building, file);
      writeFileSync(info, JSON.stringify(made));
      log(`seeded ${made.messages} messages in ${made.seconds.toFixed(0)} s`);
    }
    const made = JSON.parse(readFileSync(info, 'utf8')) as { messages: number; seconds: number };
    return { location: file, seed: seedInfo(made.messages, made.seconds) };
  }
  const name = `notif_capacity_seed_${key}`;
  const existing = await withAdmin((c) => c.query<{ description: string | null }>('select shobj_description(oid, \'pg_database\') as description from pg_database where datname = $1', [name]));
  if (opts.reseed || existing.rowCount === 0) {
    log(`${describe}: seeding (kept as database ${name} for the next runs)...`);
    const building = `${name}_building`;
    await withAdmin(async (c) => {
      await c.query(`drop database if exists ${name} with (force)`);
      await c.query(`drop database if exists ${building} with (force)`);
      await c.query(`create database ${building}`);
    });
    const made = await seedDatabase({ location: databaseUrl(building), users, minMessages, maxMessages });
    await withAdmin(async (c) => {
      await c.query(`alter database ${building} rename to ${name}`);
      await c.query(`comment on database ${name} is '${JSON.stringify(made)}'`);
    });
    log(`seeded ${made.messages} messages in ${made.seconds.toFixed(0)} s`);
    return { location: databaseUrl(name), seed: seedInfo(made.messages, made.seconds) };
  }
  const made = JSON.parse(existing.rows[0]!.description ?? '{}') as { messages: number; seconds: number };
  return { location: databaseUrl(name), seed: seedInfo(made.messages, made.seconds) };
}

/** A fresh copy of the seed for one run: a SQLite file in `dir`, or a new database made from the seed as its template. */
async function makeDatabase(dir: string, users: number): Promise<{ location: string; name?: string; seed: RunResult['seed']; drop(): Promise<void> }> {
  const { location: seedLocation, seed } = await seededDatabase(users);
  if (!POSTGRES_URL) {
    const location = join(dir, 'capacity.db');
    copyFileSync(seedLocation, location);
    return { location, seed, drop: async () => {} };
  }
  const template = new URL(seedLocation).pathname.slice(1);
  const name = `notif_capacity_${process.pid}_${users}_${Date.now() % 1e6}`;
  await withAdmin((c) => c.query(`create database ${name} template ${template}`));
  return {
    location: databaseUrl(name),
    name,
    seed,
    drop: () => withAdmin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

/** Starts the service processes on `location`, each with room for its share of the streams. */
async function startServices(location: string, users: number, profileDir: string): Promise<Started[]> {
  const command: string[] = serviceCommand({ built: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NOTIF_API_KEYS: `${BENCH_KEY}=${BENCH_TENANT}`,
    // The stream limit is a setting of the deployment, sized here so it never ends a stream of the model's.
    NOTIF_MAX_STREAMS: String(users + SPARE_FILES),
  };
  delete env.DATABASE_URL;
  const nodeFlags = opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  if (opts['trace-sql']) {
    nodeFlags.push('--require', join(ROOT, 'bench/capacity/sql-trace.cjs'));
    env.NOTIF_BENCH_SQL_TRACE = join(profileDir, 'sql-trace');
    mkdirSync(profileDir, { recursive: true });
  }
  const services: Started[] = [];
  for (let i = 0; i < PROCESSES; i++) {
    const args = [...nodeFlags, ...command, 'serve', '--port', '0', '--db', location, '--no-seed', '--metrics-token', METRICS_TOKEN];
    const service = await startProcess(process.execPath, args, {
      cwd: ROOT,
      env,
      openFiles: Math.ceil(users / PROCESSES) + SPARE_FILES,
      ready: /listening on (http:\/\/\S+)/,
      name: `service ${i + 1}`,
    }).catch(async (err) => {
      for (const s of services) await stopProcess(s.child);
      throw err;
    });
    services.push(service);
  }
  return services;
}

/** Says which process may run out of open files for its share of `users` (its limit from /proc). */
function warnOfLimits(roles: [name: string, pid: number, needs: number][]) {
  for (const [name, pid, needs] of roles) {
    const limit = openFilesLimit(pid);
    if (limit !== undefined && limit < needs) log(`WARNING: ${name} may open ~${needs} files but its limit is ${limit} (ulimit -n): connections past it fail (EMFILE)`);
  }
}

/** One run of the load model with `users` users. */
async function runOnce(users: number): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'notif-capacity-'));
  const profileDir = join(dir, 'profiles');
  const children: Started[] = [];
  const database = await makeDatabase(dir, users);
  const seed = database.seed;
  let pgAdmin: pg.Client | undefined;
  let sampler: NodeJS.Timeout | undefined;
  try {
    const services = await startServices(database.location, users, profileDir);
    children.push(...services);
    let target = services[0]!.ready;
    let balancer: Started | undefined;
    if (services.length > 1) {
      const workers = Math.ceil((users + SPARE_FILES) / CONNECTIONS_PER_BALANCER_WORKER);
      balancer = await startProcess(
        process.execPath,
        ['--import', 'tsx', 'bench/capacity/balancer.ts', '--workers', String(workers), ...services.map((s) => new URL(s.ready).host)],
        { cwd: ROOT, env: process.env, openFiles: (users * 2) / workers + SPARE_FILES, ready: /listening on (http:\/\/\S+)/, ipc: true, name: 'balancer' },
      );
      children.push(balancer);
      target = balancer.ready;
    }

    const generatorCount = Math.ceil(users / USERS_PER_GENERATOR);
    const sources = Math.ceil(users / USERS_PER_SOURCE_ADDRESS);
    const generators: Started[] = [];
    const configs: GeneratorConfig[] = [];
    for (let i = 0; i < generatorCount; i++) {
      const firstUser = Math.floor((users * i) / generatorCount);
      const share = Math.floor((users * (i + 1)) / generatorCount) - firstUser;
      const generator = await startProcess(process.execPath, ['--import', 'tsx', 'bench/capacity/generator.ts'], {
        cwd: ROOT,
        env: process.env,
        openFiles: share + SPARE_FILES,
        ready: /generator ready/,
        ipc: true,
        name: `generator ${i + 1}`,
      });
      generators.push(generator);
      children.push(generator);
      configs.push({
        baseUrl: target,
        apiKey: BENCH_KEY,
        workflowId: WORKFLOW_ID,
        firstUser,
        users: share,
        allUsers: users,
        rampConcurrency: Math.max(1, Math.round(Number(opts['ramp-concurrency']) / generatorCount)),
        sourceAddresses: sources > 1 ? Array.from({ length: sources }, (_, a) => `127.0.0.${a + 1}`) : [],
        requestConnections: Number(opts['request-connections']),
        arrivalScale: ARRIVAL_SCALE,
        seed: users + i,
      });
    }
    warnOfLimits([
      ...services.map((s, i): [string, number, number] => [`service ${i + 1}`, s.pid, Math.ceil(users / PROCESSES) + SPARE_FILES]),
      ...generators.map((g, i): [string, number, number] => [`generator ${i + 1}`, g.pid, configs[i]!.users + SPARE_FILES]),
    ]);

    // Sampling: the services' and the generators' RSS once a second; PostgreSQL's backends of this database.
    if (POSTGRES_URL) {
      pgAdmin = new pg.Client({ connectionString: POSTGRES_URL, application_name: 'notif capacity sampler' });
      await pgAdmin.connect();
    }
    const postgresOurs = new CpuMeter();
    const postgresBackground = new CpuMeter();
    const rssMax = { services: 0, perService: services.map(() => 0), generators: 0, balancer: 0 };
    const balancerPids = () => (balancer ? [balancer.pid, ...childPids(balancer.pid)] : []);
    const rssOf = (pids: number[]) => pids.reduce((sum, pid) => sum + (sampleProcess(pid)?.rssBytes ?? 0), 0);
    let steady = false;
    const samplePostgres = async () => {
      if (!pgAdmin) return;
      const { rows } = await pgAdmin.query<{ pid: number; datname: string | null; backend_type: string }>(
        'select pid, datname, backend_type from pg_stat_activity where pid <> pg_backend_pid()',
      );
      postgresOurs.observe(rows.filter((r) => r.datname === database.name).map((r) => r.pid));
      postgresBackground.observe(rows.filter((r) => r.datname === null && r.backend_type !== 'client backend').map((r) => r.pid));
    };
    sampler = setInterval(() => {
      if (steady) {
        const perService = services.map((s) => rssOf([s.pid]));
        rssMax.services = Math.max(rssMax.services, perService.reduce((a, b) => a + b, 0));
        perService.forEach((rss, i) => (rssMax.perService[i] = Math.max(rssMax.perService[i]!, rss)));
        rssMax.generators = Math.max(rssMax.generators, rssOf(generators.map((g) => g.pid)));
        rssMax.balancer = Math.max(rssMax.balancer, rssOf(balancerPids()));
      }
      samplePostgres().catch(() => {});
    }, SAMPLE_EVERY_MS);

    /** Cumulative CPU seconds by process or group, the machine's, and the clock. */
    const snapshot = () => {
      const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + (sampleProcess(pid)?.cpuSeconds ?? 0), 0);
      const own = process.cpuUsage();
      const roles: Record<string, number> = {
        services: cpuOf(services.map((s) => s.pid)),
        ...Object.fromEntries(services.map((s, i) => [`service ${i + 1}`, cpuOf([s.pid])])),
        generators: cpuOf(generators.map((g) => g.pid)),
        bench: (own.user + own.system) / 1e6,
      };
      if (balancer) roles.balancer = cpuOf(balancerPids());
      if (pgAdmin) {
        roles["PostgreSQL: this database's backends"] = postgresOurs.total;
        roles['PostgreSQL: background processes (shared)'] = postgresBackground.total;
      }
      return { at: performance.now(), microseconds: Number(process.hrtime.bigint() / 1000n), machine: sampleMachine(), roles };
    };

    // The phases' clock: every generator ramps, then all enter each phase together.
    const command = (generator: Started, message: GeneratorCommand) => generator.child.send(message);
    const results = generators.map(
      (generator) =>
        new Promise<GeneratorResult>((resolveResult, reject) => {
          generator.child.on('message', (message: GeneratorMessage) => {
            if (message.type === 'progress') log(`  ${generators.length > 1 ? `generator ${generators.indexOf(generator) + 1}: ` : ''}${message.line}`);
            else if (message.type === 'result') resolveResult(message.result);
          });
          generator.child.once('exit', (code) => reject(new Error(`a generator exited (${code}) before its result`)));
        }),
    );
    results.forEach((r) => r.catch(() => {}));
    const ramped = generators.map(
      (generator) => new Promise<number>((resolveRamp) => generator.child.on('message', (m: GeneratorMessage) => m.type === 'ramped' && resolveRamp(m.seconds))),
    );
    log(`ramp: ${users} users connect (${opts['ramp-concurrency']} at a time)...`);
    generators.forEach((generator, i) => command(generator, { type: 'config', config: configs[i]! }));
    await Promise.race([Promise.all(ramped), Promise.all(results)]);
    log(`ramp done; warm-up ${WARMUP_SECONDS} s`);
    generators.forEach((generator) => command(generator, { type: 'phase', phase: 'warmup' }));
    await sleep(WARMUP_SECONDS * 1000);

    generators.forEach((generator) => command(generator, { type: 'phase', phase: 'steady' }));
    await samplePostgres().catch(() => {});
    const metricsAtStart = await Promise.all(services.map((s) => scrapeMetrics(s.ready)));
    const atStart = snapshot();
    if (opts['trace-sql']) for (const s of services) process.kill(s.pid, 'SIGUSR2');
    steady = true;
    log(`steady state: ${STEADY_SECONDS} s`);
    await sleep(STEADY_SECONDS * 1000);

    generators.forEach((generator) => command(generator, { type: 'phase', phase: 'drain' }));
    steady = false;
    await samplePostgres().catch(() => {});
    const atEnd = snapshot();
    if (opts['trace-sql']) for (const s of services) process.kill(s.pid, 'SIGUSR2');
    const metricsAtEnd = await Promise.all(services.map((s) => scrapeMetrics(s.ready)));
    let balancerStats: unknown;
    if (balancer) {
      balancer.child.send('stats');
      balancerStats = await new Promise((r) => balancer.child.once('message', (m: { stats: unknown }) => r(m.stats)));
    }
    await sleep(DRAIN_SECONDS * 1000);
    generators.forEach((generator) => command(generator, { type: 'phase', phase: 'done' }));
    const load = mergeResults(await Promise.all(results));
    clearInterval(sampler);

    const wall = (atEnd.at - atStart.at) / 1000;
    const cpu = Object.fromEntries(Object.keys(atEnd.roles).map((role) => [role, (atEnd.roles[role]! - (atStart.roles[role] ?? 0)) / wall]));
    const machineShare =
      (atEnd.machine.busySeconds - atStart.machine.busySeconds) / (atEnd.machine.totalSeconds - atStart.machine.totalSeconds);
    const ours = Object.entries(cpu)
      .filter(([role]) => !role.startsWith('service ') && !role.includes('(shared)'))
      .reduce((sum, [, c]) => sum + c, 0);
    const openFiles: Record<string, number | undefined> = {
      ...Object.fromEntries(services.map((s, i) => [`service ${i + 1}`, openFilesLimit(s.pid)])),
      generator: openFilesLimit(generators[0]!.pid),
      ...(balancer && { balancer: openFilesLimit(childPids(balancer.pid)[0] ?? balancer.pid) }),
    };

    // Stopped before the profiles are read: a profile is written as its process exits.
    for (const child of [...children].reverse()) await stopProcess(child.child);
    children.length = 0;
    const profiles: string[] = [];
    if (opts.profile) {
      mkdirSync(OUT, { recursive: true });
      for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
        const kept = join(OUT, `capacity-${DATABASE.toLowerCase()}-${users}-${file}`);
        const text = readFileSync(join(profileDir, file), 'utf8');
        writeFileSync(kept, text);
        const summary = summarizeProfile(JSON.parse(text), { fromMicroseconds: atStart.microseconds, toMicroseconds: atEnd.microseconds });
        profiles.push(formatProfileSummary(summary, `${file}, the steady state (the whole profile: ${kept.slice(ROOT.length + 1)})`));
      }
    }

    const run: Omit<RunResult, 'verdict'> = {
      users,
      database: DATABASE,
      processes: PROCESSES,
      arrivalScale: ARRIVAL_SCALE,
      warmupSeconds: WARMUP_SECONDS,
      when: new Date().toISOString(),
      node: process.version,
      seed,
      load,
      cpu,
      machine: { busyShare: machineShare, cores: atEnd.machine.cores, othersCores: Math.max(0, machineShare * atEnd.machine.cores - ours) },
      rss: {
        servicesMaxBytes: rssMax.services,
        perServiceMaxBytes: rssMax.perService,
        generatorsMaxBytes: rssMax.generators,
        balancerMaxBytes: balancer ? rssMax.balancer : undefined,
      },
      openFiles,
      eventLoop: metricsAtEnd.map((m) => ({
        p50Ms: (m.notif_nodejs_eventloop_lag_p50_seconds ?? NaN) * 1000,
        p99Ms: (m.notif_nodejs_eventloop_lag_p99_seconds ?? NaN) * 1000,
        maxMs: (m.notif_nodejs_eventloop_lag_max_seconds ?? NaN) * 1000,
      })),
      balancer: balancerStats,
      routes: routeTimes(metricsAtStart, metricsAtEnd, wall),
      sql: opts['trace-sql'] ? readSqlTrace('sql-trace', profileDir, wall) : undefined,
      profiles,
    };
    return { ...run, verdict: judge(run) };
  } finally {
    clearInterval(sampler);
    await pgAdmin?.end().catch(() => {});
    for (const child of [...children].reverse()) await stopProcess(child.child).catch(() => {});
    await database.drop().catch((err) => log(`could not drop ${database.name}: ${err}`));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(users: number): Promise<RunResult> {
  const run = await runOnce(users);
  console.log(`\n${formatRun(run)}\n`);
  mkdirSync(OUT, { recursive: true });
  const file = join(OUT, `capacity-${run.database.toLowerCase()}-${run.users}-${run.when.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(run, null, 2));
  log(`figures kept in ${file.slice(ROOT.length + 1)}`);
  return run;
}

/** Doubles N from --from while it meets the budget, then halves the gap until it is within SEARCH_RESOLUTION. */
async function search() {
  let passing: RunResult | undefined;
  let failing: number | undefined;
  let users = Number(opts.from);
  const probes: string[] = [];
  while (users <= SEARCH_LIMIT_USERS) {
    const run = await measure(users);
    probes.push(`| ${users} | ${run.verdict.meets ? 'within' : `over: ${run.verdict.over.join('; ')}`} |`);
    if (run.verdict.meets) passing = run;
    else failing = users;
    const low = passing?.users ?? 0;
    if (failing === undefined) users *= 2;
    else if (failing - low <= Math.max(SEARCH_STEP_USERS, low * SEARCH_RESOLUTION)) break;
    else users = Math.round((low + failing) / 2 / SEARCH_STEP_USERS) * SEARCH_STEP_USERS;
  }
  const processes = `${PROCESSES} service process${PROCESSES > 1 ? 'es' : ''}`;
  console.log(`\n### Search: ${DATABASE}, ${processes}\n\n| users | budget |\n|---:|---|\n${probes.join('\n')}\n`);
  console.log(passing ? `Largest N within the budget: ${passing.users}.` : 'No N tried met the budget.');
}

async function main() {
  if (opts.search) return search();
  if (!opts.users) {
    console.error('give --users N or --search (the comment at the top of bench/capacity.ts tells the options)');
    process.exit(2);
  }
  const run = await measure(Number(opts.users));
  if (!run.verdict.meets) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
