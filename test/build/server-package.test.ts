import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error a plain .mjs module without declarations
import { hasExited } from '../../scripts/service.mjs';

// notif-inbox-server as a team installs it: `npm pack` of server/ (its prepack compiles dist/),
// installed into an empty folder with --omit=dev, its bin run (`keys create`, then `serve`) on
// SQLite, and on PostgreSQL when TEST_DATABASE_URL is set, with a trigger-to-feed round trip over
// HTTP; and `notif-inbox-server/proxy` imported as a host app does.
//
// Cost: better-sqlite3's native module takes about 5 minutes to compile on a 2-core machine (its
// prebuilt binaries need the network). The install runs no scripts and takes the module the
// repository's own install compiled for this very Node (the same better-sqlite3 version, checked);
// NOTIF_PACK_NATIVE_BUILD=1 compiles it in the install instead, as a team's install would.

const ROOT = resolve(import.meta.dirname, '../..');
const SERVER = join(ROOT, 'server');
const NATIVE_BUILD = process.env.NOTIF_PACK_NATIVE_BUILD === '1';
const PG_ADMIN = /^postgres(ql)?:\/\//.test(process.env.TEST_DATABASE_URL ?? '') ? process.env.TEST_DATABASE_URL! : undefined;

let folder: string;
let bin: string;
const started: number = Date.now();

before(() => {
  folder = mkdtempSync(join(tmpdir(), 'notif-server-install-'));
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', folder], { cwd: SERVER, encoding: 'utf8' }).trim().split('\n').at(-1)!;
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'install-check', private: true, allowScripts: { 'better-sqlite3': true } }));
  execFileSync(
    'npm',
    ['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--no-package-lock', ...(NATIVE_BUILD ? [] : ['--ignore-scripts']), join(folder, tarball)],
    { cwd: folder, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (!NATIVE_BUILD) {
    const version = (dir: string) => JSON.parse(readFileSync(join(dir, 'node_modules/better-sqlite3/package.json'), 'utf8')).version;
    assert.equal(version(folder), version(ROOT), 'the installed better-sqlite3 is the version the repository compiled');
    const release = join(folder, 'node_modules/better-sqlite3/build/Release');
    mkdirSync(release, { recursive: true });
    copyFileSync(join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'), join(release, 'better_sqlite3.node'));
  }
  bin = join(folder, 'node_modules/.bin/notif-inbox-server');
  console.log(`packed and installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

after(() => {
  if (folder) rmSync(folder, { recursive: true, force: true });
});

it('the tarball holds the compiled service and its declarations, no sources, no dev dependencies', () => {
  const pkg = join(folder, 'node_modules/notif-inbox-server');
  assert.ok(existsSync(join(pkg, 'dist/main.js')));
  assert.ok(existsSync(join(pkg, 'dist/proxy.d.ts')));
  assert.match(readFileSync(join(pkg, 'README.md'), 'utf8'), /notif-inbox-server seed/, 'its README');
  assert.match(readFileSync(join(pkg, 'dist/main.js'), 'utf8'), /^#!\/usr\/bin\/env node/);
  const files = execFileSync('find', ['.', '-type', 'f'], { cwd: pkg, encoding: 'utf8' }).split('\n').filter(Boolean);
  assert.deepEqual(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), [], 'no TypeScript sources');
  for (const dev of ['typescript', 'tsx', 'vite', 'lit']) assert.ok(!existsSync(join(folder, 'node_modules', dev)), `${dev} not installed`);
});

it('imports notif-inbox-server/proxy and the main entry as a host app does', () => {
  const out = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const proxy = await import('notif-inbox-server/proxy');
       const main = await import('notif-inbox-server');
       const handler = proxy.createInboxProxy({ serviceUrl: 'http://127.0.0.1:9', apiKey: 'k', authenticate: async () => 'someone' });
       console.log(typeof proxy.createInboxProxy, typeof proxy.subscriberHash, typeof handler, typeof main.buildApp, typeof main.openDatabase);`,
    ],
    { cwd: folder, encoding: 'utf8' },
  );
  assert.equal(out.trim(), 'function function function function function');
});

/** Runs the installed bin's `serve` until it prints where it listens. */
async function serve(env: Record<string, string>, args: string[]) {
  const child = spawn(bin, ['serve', '--port', '0', '--no-seed', ...args], { cwd: folder, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start in 30 s:\n${output}`)), 30_000);
    const onData = (chunk: string) => {
      output += chunk;
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]!);
      }
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
  const stop = async () => {
    if (hasExited(child)) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  return { url, stop, child };
}

async function roundTrip(url: string, key: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(new URL(path, url), {
      method,
      headers: { authorization: `ApiKey ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  const wf = await call('POST', '/v2/workflows', {
    workflowId: 'welcome',
    name: 'Welcome',
    steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'Hi', body: 'Welcome, {{payload.name}}' } }],
  });
  assert.ok(wf.status === 201 || wf.status === 200, JSON.stringify(wf.body));
  const t = await call('POST', '/v1/events/trigger', { name: 'welcome', to: 'ada', payload: { name: 'Ada' } });
  assert.equal(t.status, 201, JSON.stringify(t.body));
  const feed = await call('GET', '/v1/subscribers/ada/notifications/feed');
  assert.equal(feed.status, 200);
  assert.equal(feed.body.data.length, 1);
  assert.match(JSON.stringify(feed.body.data[0].content), /Welcome, Ada/);
  const health = await fetch(new URL('/ready', url));
  assert.equal(health.status, 200);
}

async function pgAdmin(statement: string) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: PG_ADMIN });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

describe('the installed bin', () => {
  for (const database of ['SQLite', 'PostgreSQL'] as const) {
    it(`keys create, then serve, then a trigger-to-feed round trip, on ${database}`, { skip: database === 'PostgreSQL' && !PG_ADMIN && 'TEST_DATABASE_URL is not set' }, async () => {
      let location = join(folder, 'data', 'notif.db');
      let dropDatabase: (() => Promise<void>) | undefined;
      if (database === 'PostgreSQL') {
        const name = `notif_pack_${randomBytes(6).toString('hex')}`;
        await pgAdmin(`CREATE DATABASE "${name}"`);
        dropDatabase = () => pgAdmin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        const url = new URL(PG_ADMIN!);
        url.pathname = `/${name}`;
        location = url.toString();
      }
      const env = { DATABASE_URL: database === 'PostgreSQL' ? location : '' };
      try {
        const key = execFileSync(bin, ['keys', 'create', '--org', 'acme', '--env', 'production', '--db', location], { cwd: folder, env: { ...process.env, ...env }, encoding: 'utf8' }).trim();
        assert.match(key, /^\S{20,}$/);
        const server = await serve(env, ['--db', location]);
        try {
          await roundTrip(server.url, key);
        } finally {
          await server.stop();
        }
        assert.equal(server.child.exitCode, 0, 'a graceful stop');
      } finally {
        await dropDatabase?.();
      }
    });
  }
});
