import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { SERVICE_COMMAND, TestServer } from './helpers.ts';
import { SETTINGS } from '../../server/src/config.ts';
import { SETTINGS_DOC, withReference } from '../../scripts/settings.ts';

// `serve` refuses a numeric setting it cannot use (exit 2, the setting named) instead of taking a
// negative value as is or a misspelt one as the default without a word.

/**
 * How long a run that should end at once may take before it counts as hung: a usage error ends a
 * process within a second on a quiet machine, and took 21 to 32 s on one loaded by other suites.
 */
const HANG_GUARD_MS = 90_000;

/** Runs `serve` on an in-memory database with `env` added; what it printed and its exit code (it is ended after HANG_GUARD_MS). */
function serve(env: Record<string, string>) {
  const { DATABASE_URL: _, ...inherited } = process.env;
  const run = spawnSync(process.execPath, [...SERVICE_COMMAND, 'serve', '--port', '0', '--db', ':memory:', '--no-seed'], {
    env: { ...inherited, ...env },
    encoding: 'utf8',
    timeout: HANG_GUARD_MS,
  });
  return { code: run.status, out: run.stdout + run.stderr };
}

describe('numeric settings', () => {
  for (const [name, value, says] of [
    ['NOTIF_LISTEN_HEARTBEAT_MS', '-1', /NOTIF_LISTEN_HEARTBEAT_MS must be a positive number of milliseconds, not '-1'/],
    ['NOTIF_PG_POOL_SIZE', 'ten', /NOTIF_PG_POOL_SIZE must be a positive whole number, not 'ten'/],
    ['NOTIF_MAX_STREAMS', '2.5', /NOTIF_MAX_STREAMS must be a positive whole number, not '2.5'/],
    ['NOTIF_MAX_HEAP_BYTES', '0', /NOTIF_MAX_HEAP_BYTES must be a positive number of bytes, not '0'/],
    ['NOTIF_SHUTDOWN_TIMEOUT_MS', 'Infinity', /NOTIF_SHUTDOWN_TIMEOUT_MS must be a positive number of milliseconds/],
    ['NOTIF_PAYLOAD_SWEEP_MS', '-5', /NOTIF_PAYLOAD_SWEEP_MS must be a number of milliseconds \(0: never\), not '-5'/],
  ] as const) {
    it(`refuses ${name}=${value} with a usage error naming it`, () => {
      const { code, out } = serve({ [name]: value });
      assert.equal(code, 2, out);
      assert.match(out, says);
      assert.doesNotMatch(out, /listening on/);
    });
  }

  it('starts with 0 where 0 means never, and with a setting set empty (as unset)', async () => {
    const server = await new TestServer({ NOTIF_PAYLOAD_SWEEP_MS: '0', NOTIF_LISTEN_HEARTBEAT_MS: '', NOTIF_MAX_STREAMS: '20' }).start(['--no-seed']);
    try {
      assert.equal((await server.get('/health')).status, 200);
    } finally {
      await server.dispose();
    }
  });
});

describe('settings no longer read', () => {
  it('NOTIF_FEED_CACHE_MB and NOTIF_CHANGE_SWEEP_MS set (even to what was refused) start the service, with a warning naming each', async () => {
    const server = await new TestServer({ NOTIF_FEED_CACHE_MB: '-1', NOTIF_CHANGE_SWEEP_MS: '200' }).start(['--no-seed']);
    try {
      assert.equal((await server.get('/health')).status, 200);
      assert.match(server.output(), /warning: NOTIF_FEED_CACHE_MB is no longer read and is ignored/);
      assert.match(server.output(), /warning: NOTIF_CHANGE_SWEEP_MS is no longer read and is ignored/);
    } finally {
      await server.dispose();
    }
  });

  it('a service without them warns of neither', async () => {
    const server = await new TestServer({}).start(['--no-seed']);
    try {
      assert.equal((await server.get('/health')).status, 200);
      assert.doesNotMatch(server.output(), /no longer read/);
    } finally {
      await server.dispose();
    }
  });
});

describe('the settings reference', () => {
  it('docs/settings.md is generated from server/src/config.ts (npm run settings)', () => {
    const document = readFileSync(SETTINGS_DOC, 'utf8');
    assert.equal(document, withReference(document), 'docs/settings.md is out of date: run `npm run settings`');
  });

  it('--help names every flag and variable but the test-only ones, and exits 0', () => {
    const run = spawnSync(process.execPath, [...SERVICE_COMMAND, '--help'], { encoding: 'utf8', timeout: HANG_GUARD_MS });
    assert.equal(run.status, 0, run.stderr);
    for (const setting of Object.values(SETTINGS) as { flag?: string; variable?: string; testOnly?: boolean }[]) {
      for (const name of [setting.flag && `--${setting.flag}`, setting.variable]) {
        if (!name) continue;
        if (setting.testOnly) assert.doesNotMatch(run.stdout, new RegExp(`${name}\\b`), `${name} is for tests only`);
        else assert.match(run.stdout, new RegExp(`${name}\\b`), `--help names ${name}`);
      }
    }
  });
});

describe('reading the environment', () => {
  it('only main.ts reads process.env (and hands it to config.ts, which reads each setting once)', () => {
    const source = resolve(import.meta.dirname, '../../server/src');
    const readers: string[] = [];
    for (const entry of readdirSync(source, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const file = join(entry.parentPath, entry.name);
      // (Comments may show a host app's own use, as the proxy's example does.)
      const code = readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line));
      if (code.some((line) => line.includes('process.env'))) readers.push(relative(source, file));
    }
    assert.deepEqual(readers, ['main.ts']);
  });
});
