// A summary of a V8 CPU profile (node --cpu-prof): the functions with the most self time, where
// the time went by area (the service's own files, each package, Node's internals, GC), and the
// service's own functions by inclusive time, optionally only for the samples inside a window of
// the monotonic clock (the capacity bench passes its steady state's).
//
//   node --import tsx bench/capacity/profile.ts <file.cpuprofile> [--top 25] [--from µs --to µs]
//
// The service runs compiled (server/dist/...js, tsc keeps one file per source, without source
// maps): a frame of server/dist/inbox/stream.js line 80 is named after the line of
// server/src/inbox/stream.ts that starts as that JS line does (tsc keeps statements' text, types
// aside), or else by the dist file and line.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Milliseconds sampled in the window, idle excluded. */
  busyMs: number;
  idleMs: number;
  windowMs: number;
  topSelf: { name: string; where: string; ms: number; share: number }[];
  byArea: { area: string; ms: number; share: number }[];
  ownInclusive: { name: string; where: string; ms: number; share: number }[];
  /**
   * The longest stretches of samples without an idle one between them: how long the event loop was
   * held at once (several callbacks run back to back count as one), each with the service's own
   * functions that took most of it (inclusive).
   */
  longestTasks: { startMs: number; ms: number; own: { name: string; where: string; ms: number }[] }[];
}

/** Longest tasks a summary lists, and the service's functions named for each. */
const LONGEST_TASKS = 25;
const FUNCTIONS_PER_TASK = 4;

const ROOT = resolve(import.meta.dirname, '../..');

const linesOf = new Map<string, string[]>();
function fileLines(path: string): string[] {
  let lines = linesOf.get(path);
  if (!lines) linesOf.set(path, (lines = existsSync(path) ? readFileSync(path, 'utf8').split('\n') : []));
  return lines;
}

/** How many leading characters of a compiled line must match its source's. */
const MATCHED_PREFIX = 30;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The source line of compiled line `line` (1-based) of server/dist/<name>.js: one that starts as it
 * does, or else where function `functionName` is defined (a declaration, a `const ... =`, a method).
 */
function sourceLine(name: string, line: number, functionName: string): number | undefined {
  const compiled = fileLines(join(ROOT, 'server/dist', `${name}.js`))[line - 1]?.trim();
  const source = fileLines(join(ROOT, 'server/src', `${name}.ts`));
  if (compiled) {
    const prefix = compiled.slice(0, MATCHED_PREFIX);
    const index = source.findIndex((text) => text.trim().startsWith(prefix));
    if (index >= 0) return index + 1;
  }
  if (!functionName) return undefined;
  const fn = escapeRegExp(functionName);
  for (const definition of [new RegExp(`\\bfunction\\*?\\s+${fn}\\b`), new RegExp(`\\b(const|let)\\s+${fn}\\s*=`), new RegExp(`^\\s*(static\\s+)?(async\\s+)?#?${fn}\\s*[(<]`)]) {
    const index = source.findIndex((text) => definition.test(text));
    if (index >= 0) return index + 1;
  }
  return undefined;
}

/** A frame's place, readable: the service's sources by their src path and line, packages by name, Node's internals as node:... */
function whereOf(url: string, line: number, functionName: string): string {
  if (!url) return '';
  const path = url.replace(/^file:\/\//, '');
  const own = /\/server\/dist\/(.+)\.js$/.exec(path);
  if (own) {
    const found = sourceLine(own[1]!, line, functionName);
    return found ? `server/src/${own[1]}.ts:${found}` : `server/dist/${own[1]}.js:${line}`;
  }
  const packageMatch = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(path);
  if (packageMatch) return `${packageMatch[1]} (${packageMatch[2]}:${line})`;
  return `${path.startsWith(ROOT) ? path.slice(ROOT.length + 1) : path}:${line}`;
}

/** The area a frame's time counts to: a file of the service's, a package, Node's internals, or V8's own bins. */
function areaOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'V8/native (program)';
    return `native: ${functionName || '(anonymous)'}`;
  }
  const own = /\/server\/dist\/(.+)\.js$/.exec(url);
  if (own) return `server/src/${own[1]}.ts`;
  const packageMatch = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (packageMatch) return packageMatch[1]!;
  if (url.startsWith('node:')) return 'node internals';
  return url;
}

export function summarizeProfile(profile: CpuProfile, options: { top?: number; fromMicroseconds?: number; toMicroseconds?: number } = {}): ProfileSummary {
  const top = options.top ?? 25;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  const selfByNode = new Map<number, number>();
  let time = profile.startTime;
  let windowStart = Infinity;
  let windowEnd = -Infinity;
  profile.samples.forEach((nodeId, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    time += delta;
    if (options.fromMicroseconds !== undefined && time < options.fromMicroseconds) return;
    if (options.toMicroseconds !== undefined && time > options.toMicroseconds) return;
    windowStart = Math.min(windowStart, time);
    windowEnd = Math.max(windowEnd, time);
    // A sample's weight is the time until the next one.
    const weight = (profile.timeDeltas[i + 1] ?? delta) / 1000;
    selfByNode.set(nodeId, (selfByNode.get(nodeId) ?? 0) + weight);
  });

  // The longest stretches of busy samples (see ProfileSummary.longestTasks).
  const isIdle = (nodeId: number) => byId.get(nodeId)!.callFrame.functionName === '(idle)';
  const tasks: { startMs: number; ms: number; samples: { nodeId: number; ms: number }[] }[] = [];
  let current: (typeof tasks)[number] | undefined;
  let clock = profile.startTime;
  profile.samples.forEach((nodeId, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    clock += delta;
    const inWindow =
      (options.fromMicroseconds === undefined || clock >= options.fromMicroseconds) && (options.toMicroseconds === undefined || clock <= options.toMicroseconds);
    if (!inWindow || isIdle(nodeId)) {
      current = undefined;
      return;
    }
    const weight = (profile.timeDeltas[i + 1] ?? delta) / 1000;
    if (!current) {
      current = { startMs: (clock - profile.startTime) / 1000, ms: 0, samples: [] };
      tasks.push(current);
    }
    current.ms += weight;
    current.samples.push({ nodeId, ms: weight });
  });

  const keyOf = (node: ProfileNode) => `${node.callFrame.functionName || '(anonymous)'}\u0000${whereOf(node.callFrame.url, node.callFrame.lineNumber + 1, node.callFrame.functionName)}`;
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let idleMs = 0;
  let busyMs = 0;
  for (const [nodeId, ms] of selfByNode) {
    const node = byId.get(nodeId)!;
    const area = areaOf(node.callFrame);
    if (area === 'idle') {
      idleMs += ms;
      continue;
    }
    busyMs += ms;
    self.set(keyOf(node), (self.get(keyOf(node)) ?? 0) + ms);
    areas.set(area, (areas.get(area) ?? 0) + ms);
    // Inclusive time of the service's own functions: each counted once per sample, however deep it recurs.
    const seen = new Set<string>();
    for (let id: number | undefined = nodeId; id !== undefined; id = parentOf.get(id)) {
      const ancestor = byId.get(id)!;
      if (!/\/server\/dist\//.test(ancestor.callFrame.url)) continue;
      const key = keyOf(ancestor);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + ms);
    }
  }
  const rows = (map: Map<string, number>, count: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([key, ms]) => {
        const [name, where] = key.split('\u0000') as [string, string];
        return { name, where, ms, share: ms / busyMs };
      });
  const longestTasks = tasks
    .sort((a, b) => b.ms - a.ms)
    .slice(0, LONGEST_TASKS)
    .map((task) => {
      const own = new Map<string, number>();
      for (const sample of task.samples) {
        const seen = new Set<string>();
        for (let id: number | undefined = sample.nodeId; id !== undefined; id = parentOf.get(id)) {
          const ancestor = byId.get(id)!;
          const mine = /\/server\/dist\//.test(ancestor.callFrame.url);
          const key = mine ? keyOf(ancestor) : undefined;
          if (!key || seen.has(key)) continue;
          seen.add(key);
          own.set(key, (own.get(key) ?? 0) + sample.ms);
        }
        // A sample outside the service's code (GC, a package) still counts, under its own name.
        if (seen.size === 0) {
          const key = keyOf(byId.get(sample.nodeId)!);
          own.set(key, (own.get(key) ?? 0) + sample.ms);
        }
      }
      const named = [...own.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, FUNCTIONS_PER_TASK)
        .map(([key, ms]) => {
          const [name, where] = key.split('\u0000') as [string, string];
          return { name, where, ms };
        });
      return { startMs: task.startMs, ms: task.ms, own: named };
    });
  return {
    longestTasks,
    busyMs,
    idleMs,
    windowMs: windowEnd > windowStart ? (windowEnd - windowStart) / 1000 : 0,
    topSelf: rows(self, top),
    byArea: [...areas.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([area, ms]) => ({ area, ms, share: ms / busyMs })),
    ownInclusive: rows(inclusive, top),
  };
}

/** The summary as Markdown tables. */
export function formatProfileSummary(summary: ProfileSummary, title: string): string {
  const percent = (share: number) => `${(share * 100).toFixed(1)} %`;
  const lines = [
    `#### ${title}`,
    '',
    `${(summary.windowMs / 1000).toFixed(1)} s sampled: ${(summary.busyMs / 1000).toFixed(1)} s busy (${percent(summary.busyMs / Math.max(1, summary.windowMs))} of one core), ${(summary.idleMs / 1000).toFixed(1)} s idle.`,
    '',
    '| self time | share of busy | function | where |',
    '|---:|---:|---|---|',
    ...summary.topSelf.map((row) => `| ${row.ms.toFixed(0)} ms | ${percent(row.share)} | ${row.name} | ${row.where} |`),
    '',
    '| area | self time | share of busy |',
    '|---|---:|---:|',
    ...summary.byArea.map((row) => `| ${row.area} | ${row.ms.toFixed(0)} ms | ${percent(row.share)} |`),
    '',
    '| the service\'s own functions, inclusive | time | share of busy |',
    '|---|---:|---:|',
    ...summary.ownInclusive.map((row) => `| ${row.name} (${row.where}) | ${row.ms.toFixed(0)} ms | ${percent(row.share)} |`),
    '',
    '| longest tasks (the event loop held at once) | at (s into the profile) | what took it (inclusive) |',
    '|---:|---:|---|',
    ...summary.longestTasks.map(
      (task) => `| ${task.ms.toFixed(1)} ms | ${(task.startMs / 1000).toFixed(1)} | ${task.own.map((row) => `${row.name} (${row.where}) ${row.ms.toFixed(1)} ms`).join('; ')} |`,
    ),
  ];
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, from: { type: 'string' }, to: { type: 'string' } },
  });
  if (positionals.length === 0) {
    console.error('usage: profile.ts <file.cpuprofile> [--top N] [--from µs --to µs]');
    process.exit(2);
  }
  for (const file of positionals) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const summary = summarizeProfile(profile, {
      top: Number(values.top),
      fromMicroseconds: values.from === undefined ? undefined : Number(values.from),
      toMicroseconds: values.to === undefined ? undefined : Number(values.to),
    });
    console.log(formatProfileSummary(summary, file));
    console.log();
  }
}
