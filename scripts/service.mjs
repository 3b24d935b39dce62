// The service as a child process for scripts and benchmarks (the tests have their own in
// test/server/helpers.ts): `server/main.ts serve` on a free port and a fresh SQLite database in a
// temporary folder, with one API key, resolved once it prints `listening on <url>`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/**
 * Starts the service with `key` for `organization/environment` (NOTIF_API_KEYS), never on a
 * DATABASE_URL the caller's environment may hold. `stop()` ends it (SIGTERM, then SIGKILL after 5 s)
 * and removes its database.
 * @param {{ key: string, tenant: string, name?: string }} options
 * @returns {Promise<{ url: string, stop(): Promise<void> }>}
 */
export async function startService({ key, tenant, name = 'notif-service-' }) {
  const dir = mkdtempSync(join(tmpdir(), name));
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', 'serve', '--port', '0', '--db', join(dir, 'notif.db'), '--no-seed'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: '', NOTIF_API_KEYS: `${key}=${tenant}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  let output = '';
  const url = await new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start in 60 s:\n${output}`)), 60_000);
    const onData = (chunk) => {
      output += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(output);
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
  return { url, stop };
}
