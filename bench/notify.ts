/**
 * PostgreSQL's NOTIFY as the change bus (server/src/db/changes.ts) uses it: how many notifications a
 * second one database carries, how late they arrive, what a listening process pays for each, and
 * which limit binds first. Every service process LISTENs on one connection and hears every change
 * of every process (nothing is filtered in the database), so a process's cost grows with the whole
 * deployment's rate of changes, not with its own users.
 *
 *   npm run bench:notify                                    against postgres://notif@127.0.0.1:5432/notif
 *   npm run bench:notify -- --database postgres://... --seconds 5
 *
 * Listeners run in processes of their own (bench/notify.ts --listener), each on one connection as
 * a service process listens; senders are connections of this process. Cases:
 *  1. throughput, closed loop: payload sizes (one change as the bus writes it, 1 KB, 7,000 bytes:
 *     the bus's largest batch), 1 and 4 sending connections, 1 and 4 listening processes, one
 *     NOTIFY per transaction (as a trigger to one subscriber commits one change);
 *  2. batched: 100 changes in one statement and one transaction (as a trigger to 100 subscribers);
 *  3. latency at fixed rates (send to receive, p50 / p99, one clock: CLOCK_MONOTONIC);
 *  4. the queue: a listener that stops reading holds the queue's tail; how fast it fills;
 *  5. the payload's limit.
 * One run a case, on whatever else the machine runs: the report prints the load average.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { sampleProcess } from './capacity/processes.ts';
import { Samples } from './capacity/stats.ts';

const { values: opts } = parseArgs({
  options: {
    database: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://notif@127.0.0.1:5432/notif' },
    seconds: { type: 'string', default: '5' },
    listener: { type: 'boolean', default: false },
  },
});
const DATABASE_URL = opts.database!;
const SECONDS = Number(opts.seconds);
const CHANNEL = `notif_bench_${process.pid}`;
/** One change as the bus sends it: a JSON array of `{s, m}` (subscriber and message ids, 24 hex digits each). */
const ONE_CHANGE = JSON.stringify([{ s: '65f1c0de0a1b2c3d4e5f6a7b', m: '65f1c0de0a1b2c3d4e5f6a7c' }]);
/** NOTIFY's payload limit (bytes, exclusive): 8000 in a default build. */
const PAYLOAD_LIMIT = 8000;
const MAX_LISTENERS = 4;
/** After the senders stop, how long nothing more may arrive before the wait for the rest ends. */
const SETTLE_MS = 5000;
const BATCH = 100;

// ---- a listening process ----

interface ListenerReport {
  received: number;
  latenciesMs: number[];
  cpuSeconds: number;
  /** CPU seconds of the listening connection's backend (PostgreSQL's side of the delivery). */
  backendCpuSeconds: number;
}

let payloadNumber = 0;
/**
 * A payload of `size` bytes carrying its send time (µs of the monotonic clock, which every process
 * on this host shares) and a number of its own: PostgreSQL delivers identical payloads sent in one
 * transaction once.
 */
function payload(size: number): string {
  const stamp = `{"t":${process.hrtime.bigint() / 1000n},"n":${++payloadNumber},"p":"`;
  const pad = Math.max(0, size - stamp.length - 2);
  return `${stamp}${'x'.repeat(pad)}"}`;
}

async function runListener() {
  const client = new pg.Client({ connectionString: DATABASE_URL, application_name: 'notif bench notify listener' });
  await client.connect();
  const backendPid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const backendCpu = () => sampleProcess(backendPid)?.cpuSeconds ?? 0;
  let received = 0;
  let latencies: number[] = [];
  let cpuAtReset = process.cpuUsage();
  let backendCpuAtReset = backendCpu();
  client.on('notification', (n) => {
    const now = Number(process.hrtime.bigint() / 1000n);
    // Parsed whole, as the change bus parses each payload.
    const data = JSON.parse(n.payload ?? '{}') as { t?: number } | { t?: number }[];
    const sent = Array.isArray(data) ? data[0]?.t : data.t;
    const count = Array.isArray(data) ? data.length : 1;
    received += count;
    if (sent !== undefined) latencies.push((now - sent) / 1000);
  });
  process.on('message', async (message: { type: 'listen'; channel: string } | { type: 'report' } | { type: 'stall' } | { type: 'resume' } | { type: 'end' }) => {
    if (message.type === 'listen') {
      await client.query('unlisten *');
      await client.query(`listen ${message.channel}`);
      received = 0;
      latencies = [];
      cpuAtReset = process.cpuUsage();
      backendCpuAtReset = backendCpu();
      process.send!({ type: 'listening' });
    } else if (message.type === 'report') {
      const cpu = process.cpuUsage(cpuAtReset);
      const report: ListenerReport = {
        received,
        latenciesMs: latencies,
        cpuSeconds: (cpu.user + cpu.system) / 1e6,
        backendCpuSeconds: backendCpu() - backendCpuAtReset,
      };
      process.send!({ type: 'report', report });
    } else if (message.type === 'stall') {
      // A listening session inside a transaction is told nothing until it ends, and its place in the
      // queue holds the queue's tail (as a service's LISTEN connection would if it hung mid-transaction).
      await client.query('begin');
      process.send!({ type: 'stalled' });
    } else if (message.type === 'resume') {
      await client.query('commit');
      process.send!({ type: 'resumed' });
    } else {
      await client.end();
      process.exit(0);
    }
  });
  process.send!({ type: 'ready' });
}

// ---- the bench ----

class Listener {
  readonly child: ChildProcess;
  constructor() {
    this.child = fork(import.meta.filename, ['--listener', '--database', DATABASE_URL], { execArgv: ['--import', 'tsx'] });
  }

  ask<T>(message: object, answer: string): Promise<T> {
    return new Promise((resolve) => {
      const onMessage = (m: { type: string }) => {
        if (m.type !== answer) return;
        this.child.off('message', onMessage);
        resolve(m as T);
      };
      this.child.on('message', onMessage);
      if (Object.keys(message).length) this.child.send(message);
    });
  }
}

interface Case {
  name: string;
  size: number;
  senders: number;
  listeners: number;
  /** Notifications per statement (and per transaction). */
  perStatement: number;
  /** Notifications a second in all; closed loop when absent. */
  rate?: number;
}

interface CaseResult extends Case {
  sent: number;
  sentPerSecond: number;
  /** Per listening process: notifications from the first sent to the last received, a second. */
  deliveredPerSecond: number;
  /** Seconds from the senders' stop until the last listener had every notification (or the wait ended). */
  catchUpSeconds: number;
  undelivered: number;
  p50Ms: number;
  p99Ms: number;
  listenerCpuMsPerThousand: number;
  listenerBackendCpuMsPerThousand: number;
  senderBackendCores: number;
}

async function sender(): Promise<{ client: pg.Client; pid: number }> {
  const client = new pg.Client({ connectionString: DATABASE_URL, application_name: 'notif bench notify sender' });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  return { client, pid: rows[0]!.pid };
}

async function runCase(spec: Case, listeners: Listener[]): Promise<CaseResult> {
  const channel = `${CHANNEL}_${Math.random().toString(36).slice(2, 8)}`;
  const active = listeners.slice(0, spec.listeners);
  await Promise.all(active.map((l) => l.ask({ type: 'listen', channel }, 'listening')));
  const senders = await Promise.all(Array.from({ length: spec.senders }, sender));
  const backendCpuBefore = senders.map((s) => sampleProcess(s.pid)?.cpuSeconds ?? 0);
  const started = performance.now();
  const endAt = started + SECONDS * 1000;
  const perSenderRate = spec.rate ? spec.rate / spec.senders : undefined;
  const counts = await Promise.all(
    senders.map(async ({ client }) => {
      let sent = 0;
      while (performance.now() < endAt) {
        if (perSenderRate) {
          const due = started + (sent / perSenderRate) * 1000;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        if (spec.perStatement === 1) await client.query('select pg_notify($1, $2)', [channel, payload(spec.size)]);
        else {
          const payloads = Array.from({ length: spec.perStatement }, () => payload(spec.size));
          await client.query('select pg_notify($1, p) from unnest($2::text[]) as p', [channel, payloads]);
        }
        sent += spec.perStatement;
      }
      return sent;
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const backendCpu = senders.reduce((sum, s, i) => sum + (sampleProcess(s.pid)?.cpuSeconds ?? 0) - backendCpuBefore[i]!, 0);
  const sent = counts.reduce((a, b) => a + b, 0);

  // Until every listener has all of them, or nothing more arrived for SETTLE_MS.
  let reports: ListenerReport[] = [];
  let lastProgress = performance.now();
  let lastReceived = -1;
  for (;;) {
    reports = (await Promise.all(active.map((l) => l.ask<{ report: ListenerReport }>({ type: 'report' }, 'report')))).map((m) => m.report);
    const received = reports.reduce((a, r) => a + r.received, 0);
    if (received > lastReceived) {
      lastReceived = received;
      lastProgress = performance.now();
    }
    if (reports.every((r) => r.received >= sent) || performance.now() - lastProgress > SETTLE_MS) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const lastArrival = (Math.min(performance.now(), lastProgress) - started) / 1000;
  await Promise.all(senders.map((s) => s.client.end()));
  const latencies = new Samples();
  for (const r of reports) for (const l of r.latenciesMs) latencies.add(l);
  const summary = latencies.summary();
  const received = reports.reduce((a, r) => a + r.received, 0);
  const cpu = reports.reduce((a, r) => a + r.cpuSeconds, 0);
  const backendCpuOfListeners = reports.reduce((a, r) => a + r.backendCpuSeconds, 0);
  return {
    ...spec,
    sent,
    sentPerSecond: sent / elapsed,
    deliveredPerSecond: received / active.length / lastArrival,
    catchUpSeconds: Math.max(0, lastArrival - elapsed),
    undelivered: sent * active.length - received,
    p50Ms: summary.p50,
    p99Ms: summary.p99,
    listenerCpuMsPerThousand: (cpu / Math.max(1, received)) * 1e6,
    listenerBackendCpuMsPerThousand: (backendCpuOfListeners / Math.max(1, received)) * 1e6,
    senderBackendCores: backendCpu / elapsed,
  };
}

/** A listener that stops reading holds the queue's tail: how much of the queue a volume of notifications takes. */
async function queueFill(listeners: Listener[]) {
  const channel = `${CHANNEL}_queue`;
  const [stalled] = listeners;
  await stalled!.ask({ type: 'listen', channel }, 'listening');
  await stalled!.ask({ type: 'stall' }, 'stalled');
  const { client } = await sender();
  const usage = async () => Number((await client.query<{ u: number }>('select pg_notification_queue_usage() as u')).rows[0]!.u);
  const before = await usage();
  const size = 7000;
  const statements = 100;
  for (let i = 0; i < statements; i++) {
    await client.query('select pg_notify($1, p) from unnest($2::text[]) as p', [channel, Array.from({ length: BATCH }, () => payload(size))]);
  }
  const after = await usage();
  const bytes = statements * BATCH * size;
  await stalled!.ask({ type: 'resume' }, 'resumed');
  await client.end();
  return { bytes, usageAdded: after - before };
}

async function payloadLimit() {
  const { client } = await sender();
  const outcome = async (size: number) => {
    try {
      await client.query('select pg_notify($1, $2)', [`${CHANNEL}_limit`, 'x'.repeat(size)]);
      return 'sent';
    } catch (err) {
      return `refused: ${(err as Error).message}`;
    }
  };
  const result = { [PAYLOAD_LIMIT - 1]: await outcome(PAYLOAD_LIMIT - 1), [PAYLOAD_LIMIT]: await outcome(PAYLOAD_LIMIT) };
  await client.end();
  return result;
}

async function main() {
  const listeners = Array.from({ length: MAX_LISTENERS }, () => new Listener());
  await Promise.all(listeners.map((l) => l.ask({}, 'ready')));
  const cases: Case[] = [];
  for (const size of [ONE_CHANGE.length, 1000, 7000])
    for (const senders of [1, 4]) for (const listenerCount of [1, 4]) cases.push({ name: 'closed loop', size, senders, listeners: listenerCount, perStatement: 1 });
  for (const listenerCount of [1, 4]) cases.push({ name: `batched, ${BATCH} a statement`, size: ONE_CHANGE.length, senders: 1, listeners: listenerCount, perStatement: BATCH });
  for (const listenerCount of [1, 4]) cases.push({ name: `batched, ${BATCH} a statement`, size: ONE_CHANGE.length, senders: 4, listeners: listenerCount, perStatement: BATCH });
  for (const rate of [100, 1000, 5000]) cases.push({ name: `fixed rate`, size: ONE_CHANGE.length, senders: 4, listeners: 2, perStatement: 1, rate });

  const load = loadavg();
  console.log(`\nPostgreSQL NOTIFY, ${SECONDS} s a case; load average at start ${load.map((l) => l.toFixed(1)).join(', ')} (others' work shares the machine)\n`);
  console.log(
    '| case | payload B | senders | listening processes | sent/s | delivered/s per listener | caught up after s | undelivered | p50 ms | p99 ms | ' +
      "listener's CPU ms per 1,000 (Node / its backend) | senders' backends, cores |",
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const spec of cases) {
    const r = await runCase(spec, listeners);
    const rate = r.rate ? ` ${r.rate}/s` : '';
    console.log(
      `| ${r.name}${rate} | ${r.size} | ${r.senders} | ${r.listeners} | ${r.sentPerSecond.toFixed(0)} | ${r.deliveredPerSecond.toFixed(0)} | ` +
        `${r.catchUpSeconds.toFixed(1)} | ${r.undelivered} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ` +
        `${r.listenerCpuMsPerThousand.toFixed(1)} / ${r.listenerBackendCpuMsPerThousand.toFixed(1)} | ${r.senderBackendCores.toFixed(2)} |`,
    );
  }
  const queue = await queueFill(listeners);
  const perGigabyte = queue.usageAdded / (queue.bytes / 1024 ** 3);
  console.log(
    `\nQueue: with one listener not reading, ${(queue.bytes / 1048576).toFixed(0)} MB of notifications took ${(queue.usageAdded * 100).toFixed(3)} % of the queue ` +
      `(pg_notification_queue_usage): ${(perGigabyte * 100).toFixed(1)} % a GB, so it is full after about ${(1 / perGigabyte).toFixed(1)} GB, when every NOTIFY fails until that listener reads.`,
  );
  const limit = await payloadLimit();
  console.log(`Payload limit: ${Object.entries(limit).map(([size, outcome]) => `${size} bytes ${outcome}`).join('; ')}.`);
  console.log(`(One change as the bus sends it is ${ONE_CHANGE.length} bytes; the bus packs changes into payloads of up to ~7,000 bytes, about ${Math.floor(7000 / ONE_CHANGE.length)} changes.)`);
  await Promise.all(listeners.map((l) => new Promise((resolve) => (l.child.once('exit', resolve), l.child.send({ type: 'end' })))));
}

if (opts.listener) await runListener();
else
  await main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
