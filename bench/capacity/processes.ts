// The capacity bench's processes: started with a raised open-files limit, waited for until they
// listen, stopped; and measured from /proc (CPU time, RSS), as any process on Linux can be.
import { spawn, execFileSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
// @ts-expect-error a plain .mjs module without declarations
import { hasExited } from '../../scripts/service.mjs';

/** Clock ticks a second, the unit of /proc/<pid>/stat's CPU times. */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const STOP_GRACE_MS = 15_000;

export interface Started {
  child: ChildProcess;
  pid: number;
  /** The first match of the `ready` pattern in its output. */
  ready: string;
}

/**
 * Starts `command` with `args` through `sh`, raising its open-files limit to `openFiles` first
 * (root may raise the hard limit; others get what their hard limit allows, and the bench reports
 * the limit each process got): `exec` leaves the child's pid the command's own.
 */
export function startProcess(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; openFiles: number; ready: RegExp; ipc?: boolean; name: string },
): Promise<Started> {
  const wanted = Math.ceil(options.openFiles);
  // The hard limit raised when it is lower (never lowered), then the soft one to whatever the hard one is.
  const script = `hard=$(ulimit -Hn); if [ "$hard" != unlimited ] && [ "$hard" -lt ${wanted} ]; then ulimit -Hn ${wanted} 2>/dev/null; fi; ulimit -Sn "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"`;
  const stdio: StdioOptions = options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'];
  const child = spawn('/bin/sh', ['-c', script, command, ...args], { cwd: options.cwd, env: options.env, stdio });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${options.name} did not start in 120 s:\n${output}`)), 120_000);
    const onData = (chunk: string) => {
      output += chunk;
      if (output.length > 100_000) output = output.slice(-50_000);
      const match = options.ready.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, pid: child.pid!, ready: match[1] ?? match[0] });
      }
    };
    child.stdout!.setEncoding('utf8').on('data', onData);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      onData(chunk);
      // What a service says on stderr while the load runs (warnings, crashes) belongs in the bench's output.
      process.stderr.write(`[${options.name}] ${chunk}`);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${options.name} exited (${code ?? signal}):\n${output}`));
    });
  });
}

/** Ends a child with SIGTERM (SIGKILL after a grace period); resolves once it has exited. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

/** The open-files limit a process runs with (its soft limit), from /proc. */
export function openFilesLimit(pid: number): number | undefined {
  try {
    const match = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    return match ? (match[1] === 'unlimited' ? Infinity : Number(match[1])) : undefined;
  } catch {
    return undefined;
  }
}

export interface ProcessSample {
  /** CPU seconds (user + system) since the process started. */
  cpuSeconds: number;
  rssBytes: number;
}

/** One process's CPU time and RSS from /proc; undefined once it is gone. */
export function sampleProcess(pid: number): ProcessSample | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const userTicks = Number(fields[11]);
    const systemTicks = Number(fields[12]);
    const rssMatch = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { cpuSeconds: (userTicks + systemTicks) / TICKS_PER_SECOND, rssBytes: rssMatch ? Number(rssMatch[1]) * 1024 : 0 };
  } catch {
    return undefined;
  }
}

/** The machine's CPU seconds busy and in all, over every core, since boot (/proc/stat). */
export function sampleMachine(): { busySeconds: number; totalSeconds: number; cores: number } {
  const text = readFileSync('/proc/stat', 'utf8');
  const [user, nice, system, idle, iowait, irq, softirq, steal] = text.split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  const cores = text.split('\n').filter((line) => /^cpu\d+ /.test(line)).length;
  return { busySeconds: busy / TICKS_PER_SECOND, totalSeconds: (busy + idle! + iowait!) / TICKS_PER_SECOND, cores };
}
