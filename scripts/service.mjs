// The service as a child process for scripts, benchmarks and the e2e tests (the server tests have
// their own in test/server/helpers.ts): `server/src/main.ts serve` on a free port and a fresh SQLite
// database in a temporary folder, resolved once it prints the line it is waited for.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/**
 * Whether a child process has exited. One killed by a signal (SIGKILL, a crash test's kill -9) has a
 * `signalCode` and no `exitCode`: waiting for its 'exit' then waits for an event already past.
 * @param {import('node:child_process').ChildProcess} child
 */
export function hasExited(child) {
  return child.exitCode !== null || child.signalCode !== null;
}

let compiled = false;
/**
 * How to run the service: from its sources through tsx (tests, development), or `built`, as it runs
 * in production: compiled by tsc to server/dist/main.js (built once per process, from the sources
 * as they are). Benchmarks of the service run it built: tsx compiles with esbuild's keepNames, which
 * gives every closure a `name` property of its own (about 3 KB more for each open stream, and work
 * for every closure made).
 * @param {{ built?: boolean }} [options]
 * @returns {string[]} node's arguments up to `serve`'s
 */
export function serviceCommand({ built = false } = {}) {
  if (!built) return ['--import', 'tsx', 'server/src/main.ts'];
  if (!compiled) execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'server/tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  compiled = true;
  return ['server/dist/main.js'];
}

/**
 * Starts the service, never on a DATABASE_URL the caller's environment may hold: with `key` for
 * `tenant` ('organization/environment', as NOTIF_API_KEYS), with `args` after `serve` (default
 * --no-seed; `--demo` seeds and serves the playground too), resolving to the first URL `ready`
 * matches in its output (default: the service's own `listening on <url>`). `stop()` ends it
 * (SIGTERM, then SIGKILL after 5 s) and removes its database. `db`: a database of the caller's
 * (a postgres:// URL) instead of the temporary SQLite file; the caller removes it. `built`: run it
 * compiled, as in production (serviceCommand).
 * @param {{ key?: string, tenant?: string, name?: string, args?: string[], ready?: RegExp, db?: string, built?: boolean }} options
 * @returns {Promise<{ url: string, stop(): Promise<void>, pid: number | undefined }>}
 */
export async function startService({ key, tenant, name = 'notif-service-', args = ['--no-seed'], ready = /listening on (http:\/\/\S+)/, db, built = false }) {
  const dir = mkdtempSync(join(tmpdir(), name));
  const child = spawn(process.execPath, [...serviceCommand({ built }), 'serve', '--port', '0', '--db', db ?? join(dir, 'notif.db'), ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: '', ...(key && { NOTIF_API_KEYS: `${key}=${tenant}` }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = async () => {
    if (!hasExited(child)) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (!hasExited(child)) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  let output = '';
  const url = await new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in 60 s:\n${output}`)), 60_000);
    const onData = (chunk) => {
      output += chunk;
      const m = ready.exec(output);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${output}`));
    });
  }).catch(async (e) => {
    await stop();
    throw e;
  });
  return { url, stop, pid: child.pid };
}
