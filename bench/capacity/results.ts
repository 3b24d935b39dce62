// The capacity bench's figures: the generators' results merged, judged against the budget, and
// written as Markdown.
import { BUDGET, REQUEST_KINDS } from './load-model.ts';
import type { GeneratorResult, Phase, TriggerKind } from './generator.ts';
import { Samples, type Summary } from './stats.ts';

/** A generator using more of a core than this, or lagging more, may have sent the load late: its figures are flagged. */
const GENERATOR_SATURATED = { cpuShare: 0.8, eventLoopP99Ms: 50 };

export interface LoadFigures {
  rampSeconds: number;
  steadySeconds: number;
  requests: Record<string, Summary & { perSecond: number; statuses: Record<string, number> }>;
  triggerToStream: Record<TriggerKind | 'all', Summary>;
  undelivered: number;
  duplicates: number;
  errors: Record<Phase, Record<string, number>>;
  streams: { openAtSteadyEnd: number; plannedReconnects: number; drops: number };
  actions: Record<string, number>;
  generators: GeneratorResult['generator'][];
}

export interface RunResult {
  users: number;
  database: string;
  processes: number;
  /** The trigger rates' factor (1: the model). */
  arrivalScale: number;
  warmupSeconds: number;
  when: string;
  node: string;
  seed: { messages: number; seconds: number };
  load: LoadFigures;
  /** CPU over the steady state, in cores (CPU seconds / wall seconds), by process or group. */
  cpu: Record<string, number>;
  machine: { busyShare: number; cores: number; othersCores: number };
  rss: { servicesMaxBytes: number; perServiceMaxBytes: number[]; generatorsMaxBytes: number; balancerMaxBytes?: number };
  openFiles: Record<string, number | undefined>;
  eventLoop: { p50Ms: number; p99Ms: number; maxMs: number }[];
  balancer?: unknown;
  /** The services' own time by route over the steady state (their request-duration metrics); busyShare: the durations' sum over the wall time. */
  routes: { route: string; perSecond: number; meanMs: number; busyShare: number }[];
  /** With --trace-sql: every statement by its text, over the steady state. */
  sql?: { sql: string; perSecond: number; meanMs: number; maxMs: number; slowCalls: number; busyShare: number }[];
  profiles: string[];
  verdict: { meets: boolean; over: string[]; generatorSaturated: boolean };
}

const addCounts = (into: Record<string, number>, more: Record<string, number>) => {
  for (const [name, n] of Object.entries(more)) into[name] = (into[name] ?? 0) + n;
};

/** One set of figures from every generator's. */
export function mergeResults(results: GeneratorResult[]): LoadFigures {
  const steadySeconds = Math.max(...results.map((r) => r.steadySeconds));
  const requests: LoadFigures['requests'] = {};
  for (const kind of REQUEST_KINDS) {
    const samples = new Samples();
    const statuses: Record<string, number> = {};
    for (const r of results) {
      const entry = r.requests[kind];
      if (!entry) continue;
      for (const latency of entry.latencies) samples.add(latency);
      addCounts(statuses, entry.statuses);
    }
    if (samples.count) requests[kind] = { ...samples.summary(), perSecond: samples.count / steadySeconds, statuses };
  }
  const delivery = (kinds: TriggerKind[]) => {
    const samples = new Samples();
    for (const r of results) for (const kind of kinds) for (const latency of r.deliveries[kind]) samples.add(latency);
    return samples.summary();
  };
  const errors = { ramp: {}, warmup: {}, steady: {}, drain: {}, done: {} } as LoadFigures['errors'];
  const actions: Record<string, number> = {};
  for (const r of results) {
    for (const phase of Object.keys(errors) as Phase[]) addCounts(errors[phase], r.errors[phase]);
    addCounts(actions, r.actions);
  }
  const sum = (pick: (r: GeneratorResult) => number) => results.reduce((total, r) => total + pick(r), 0);
  return {
    rampSeconds: Math.max(...results.map((r) => r.rampSeconds)),
    steadySeconds,
    requests,
    triggerToStream: { 'trigger (1)': delivery(['trigger (1)']), 'trigger (100)': delivery(['trigger (100)']), all: delivery(['trigger (1)', 'trigger (100)']) },
    undelivered: sum((r) => r.undelivered),
    duplicates: sum((r) => r.duplicates),
    errors,
    streams: {
      openAtSteadyEnd: sum((r) => r.streams.openAtSteadyEnd),
      plannedReconnects: sum((r) => r.streams.plannedReconnects),
      drops: sum((r) => r.streams.drops),
    },
    actions,
    generators: results.map((r) => r.generator),
  };
}

const errorTotal = (errors: Record<string, number>) => Object.values(errors).reduce((a, b) => a + b, 0);

/** DESIGN.md's capacity budget: every request kind's p99, trigger to stream p99, the services' RSS, no errors while measured. */
export function judge(run: Omit<RunResult, 'verdict'>): RunResult['verdict'] {
  const over: string[] = [];
  const load = run.load;
  for (const [kind, s] of Object.entries(load.requests)) if (s.p99 > BUDGET.requestP99Ms) over.push(`${kind} p99 ${s.p99.toFixed(1)} ms`);
  if (!(load.triggerToStream.all.p99 <= BUDGET.triggerToStreamP99Ms)) over.push(`trigger to stream p99 ${load.triggerToStream.all.p99.toFixed(0)} ms`);
  if (run.rss.servicesMaxBytes > BUDGET.rssBytes) over.push(`service RSS ${mb(run.rss.servicesMaxBytes)}`);
  const measuredErrors = errorTotal(load.errors.steady) + errorTotal(load.errors.drain);
  if (measuredErrors > 0) over.push(`${measuredErrors} errors`);
  if (load.undelivered > 0) over.push(`${load.undelivered} messages never reached their stream`);
  const generatorSaturated = load.generators.some((g) => g.cpuShare > GENERATOR_SATURATED.cpuShare || g.eventLoopP99Ms > GENERATOR_SATURATED.eventLoopP99Ms);
  if (run.arrivalScale !== 1) over.push(`not the load model (--arrival-scale ${run.arrivalScale})`);
  return { meets: over.length === 0, over, generatorSaturated };
}

/** Statements the report lists (the JSON keeps all), and how much of each one's text. */
const SQL_ROWS = 20;
const SQL_TEXT = 160;

/** A statement's row of the --trace-sql tables. */
function sqlRow(q: NonNullable<RunResult['sql']>[number]): string {
  const text = q.sql.length > SQL_TEXT ? `${q.sql.slice(0, SQL_TEXT)}…` : q.sql;
  return `| \`${text}\` | ${q.perSecond.toFixed(1)} | ${q.meanMs.toFixed(2)} | ${q.maxMs.toFixed(1)} | ${q.slowCalls} | ${(q.busyShare * 100).toFixed(1)} % |`;
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '-');
const percent = (share: number) => `${(share * 100).toFixed(0)} %`;
const cores = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(2));

export function formatRun(run: RunResult): string {
  const load = run.load;
  const lines: string[] = [];
  const processes = `${run.processes} service process${run.processes > 1 ? 'es' : ''}`;
  lines.push(
    `### ${run.database}, ${processes}, ${run.users} users: ${run.verdict.meets ? 'within the budget' : 'OVER the budget'}`,
    '',
    `${run.when}, ${run.machine.cores} cores, Node ${run.node}; ${load.steadySeconds.toFixed(0)} s steady after ${run.warmupSeconds} s of warm-up ` +
      `(ramp ${load.rampSeconds.toFixed(0)} s); history ${run.seed.messages} messages. ` +
      `${run.arrivalScale === 1 ? '' : `NOT THE MODEL: triggers at ${run.arrivalScale} times its rates. `}` +
      `Machine busy ${percent(run.machine.busyShare)} of its cores during the steady state, ${run.machine.othersCores.toFixed(2)} cores of it by other processes than these.`,
    '',
    '| request | count | per s | p50 ms | p99 ms | max ms | answers |',
    '|---|---:|---:|---:|---:|---:|---|',
  );
  for (const kind of REQUEST_KINDS) {
    const s = load.requests[kind];
    if (!s) continue;
    const statuses = Object.entries(s.statuses).map(([status, n]) => `${status}: ${n}`).join(', ');
    lines.push(`| ${kind} | ${s.count} | ${s.perSecond.toFixed(1)} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.max)} | ${statuses} |`);
  }
  lines.push('', '| trigger to stream | deliveries | p50 ms | p99 ms | max ms |', '|---|---:|---:|---:|---:|');
  for (const [kind, s] of Object.entries(load.triggerToStream)) lines.push(`| ${kind} | ${s.count} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.max)} |`);

  lines.push('', '| process | CPU (cores) | RSS max | open files limit |', '|---|---:|---:|---:|');
  run.rss.perServiceMaxBytes.forEach((rss, i) => {
    const role = `service ${i + 1}`;
    lines.push(`| ${role} | ${cores(run.cpu[role])} | ${mb(rss)} | ${run.openFiles[role] ?? '?'} |`);
  });
  if (run.processes > 1) lines.push(`| services together | ${cores(run.cpu.services)} | ${mb(run.rss.servicesMaxBytes)} | |`);
  for (const role of Object.keys(run.cpu).filter((r) => r.startsWith('PostgreSQL'))) lines.push(`| ${role} | ${cores(run.cpu[role])} | | |`);
  if (run.cpu.balancer !== undefined) lines.push(`| balancer | ${cores(run.cpu.balancer)} | ${mb(run.rss.balancerMaxBytes ?? 0)} | ${run.openFiles.balancer ?? '?'} |`);
  lines.push(`| load generator${load.generators.length > 1 ? `s (${load.generators.length})` : ''} | ${cores(run.cpu.generators)} | ${mb(run.rss.generatorsMaxBytes)} | ${run.openFiles.generator ?? '?'} |`);
  lines.push(`| this bench (seeding done; sampling) | ${cores(run.cpu.bench)} | | |`, '');

  run.eventLoop.forEach((e, i) => {
    lines.push(`- Service ${i + 1}: event loop delay p50 ${ms(e.p50Ms)} ms, p99 ${ms(e.p99Ms)} ms, max ${ms(e.maxMs)} ms.`);
  });
  load.generators.forEach((g, i) =>
    lines.push(`- Generator ${i + 1}: ${g.cpuShare.toFixed(2)} cores, event loop delay p99 ${ms(g.eventLoopP99Ms)} ms (max ${ms(g.eventLoopMaxMs)} ms).`),
  );
  if (run.verdict.generatorSaturated) {
    lines.push('- A generator was busy or lagging (over 0.8 cores, or its event loop delay p99 over 50 ms): the load may have been sent late, and its timings include its own delay.');
  }
  lines.push(
    `- Streams open at the steady state's end: ${load.streams.openAtSteadyEnd} of ${run.users}; planned reconnects ${load.streams.plannedReconnects}, ` +
      `drops ${load.streams.drops}; messages undelivered ${load.undelivered}, told twice ${load.duplicates}.`,
    `- Actions (warm-up to drain): ${Object.entries(load.actions).map(([name, n]) => `${name} ${n}`).join(', ')}.`,
  );
  for (const [phase, errors] of Object.entries(load.errors)) {
    const list = Object.entries(errors);
    if (list.length) lines.push(`- Errors (${phase}): ${list.map(([kind, n]) => `${kind} × ${n}`).join(', ')}.`);
  }
  if (run.balancer) lines.push(`- Balancer: ${JSON.stringify(run.balancer)}.`);
  if (!run.verdict.meets) lines.push(`- Over the budget: ${run.verdict.over.join('; ')}.`);
  lines.push(
    '',
    "| route (the services' own time, from the request read to the answer sent) | per s | mean ms | in progress at once (mean) |",
    '|---|---:|---:|---:|',
    ...run.routes.map((r) => `| ${r.route} | ${r.perSecond.toFixed(1)} | ${r.meanMs.toFixed(2)} | ${r.busyShare.toFixed(2)} |`),
  );
  if (run.sql) {
    const shown = run.sql.slice(0, SQL_ROWS);
    lines.push(
      '',
      run.database === 'SQLite'
        ? '| statement (--trace-sql: the time each blocked the event loop) | per s | mean ms | max ms | calls of 20 ms or more | share of the event loop |'
        : '| statement (--trace-sql: from the call to the answer, the pool\'s wait included) | per s | mean ms | max ms | calls of 20 ms or more | in progress at once (mean) |',
      '|---|---:|---:|---:|---:|---:|',
      ...shown.map((q) => sqlRow(q)),
    );
    const slowest = run.sql.filter((q) => q.slowCalls > 0 && !shown.includes(q));
    if (slowest.length > 0) {
      lines.push('', '| further statements with calls of 20 ms or more | per s | mean ms | max ms | calls of 20 ms or more | share |', '|---|---:|---:|---:|---:|---:|', ...slowest.map((q) => sqlRow(q)));
    }
  }
  for (const profile of run.profiles) lines.push('', profile);
  return lines.join('\n');
}
