// Browser tests (Chromium) of src/api, src/store and the elements, against the real service: the run
// starts `server/src/main.ts serve` on a free port with a fresh database and fault injection on, and
// hands its URL and test keys to the pages as /__notif-test.json (see test/components/server.ts).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { esbuildPlugin } from '@web/dev-server-esbuild';
import { chromeLauncher } from '@web/test-runner-chrome';
import { tsImport } from 'tsx/esm/api';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './scripts/chromium.mjs';
import { hasExited } from './scripts/service.mjs';

// The service's overload guard sheds requests past a 1 s event loop delay; on a test machine shared
// with browsers, loops are late because the machine is busy, so the test services use a high limit
// (the guard is tested in test/server/operations.test.ts).
const BUSY_MACHINE_EVENT_LOOP_LIMIT_MS = '60000';

const root = fileURLToPath(new URL('.', import.meta.url));
const KEYS = { apiKey: 'wtr_key', otherKey: 'wtr_key_b' };
/** Key of the subscriber hashes the proxy below checks (a host app's server secret). */
const PROXY_HMAC_KEY = 'wtr-proxy-secret';

/** Starts the service and stops it with the run (and with this process, however it ends). */
function notifServer() {
  let child;
  let dir;
  let info;
  let proxy;
  const stop = () => {
    if (child && !hasExited(child)) child.kill('SIGKILL');
    child = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  };
  process.once('exit', stop);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      stop();
      process.exit(130);
    });
  }

  return {
    name: 'notif-test-server',
    async serverStart() {
      dir = mkdtempSync(join(tmpdir(), 'notif-wtr-'));
      child = spawn(
        process.execPath,
        ['--import', 'tsx', 'server/src/main.ts', 'serve', '--port', '0', '--db', join(dir, 'notif.db'), '--no-seed', '--faults'],
        {
          cwd: root,
          env: { ...process.env, NOTIF_MAX_EVENT_LOOP_DELAY_MS: BUSY_MACHINE_EVENT_LOOP_LIMIT_MS, NOTIF_API_KEYS: `${KEYS.apiKey}=wtr/test,${KEYS.otherKey}=wtr/other` },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      const baseUrl = await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`notif server did not start in 30 s:\n${output}`)), 30_000);
        child.stdout.setEncoding('utf8').on('data', (chunk) => {
          output += chunk;
          const m = /listening on (http:\/\/\S+)/.exec(output);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
        child.stderr.setEncoding('utf8').on('data', (chunk) => {
          output += chunk;
          if (process.env.NOTIF_SERVER_LOG) process.stderr.write(chunk);
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`notif server exited with ${code} before listening:\n${output}`));
        });
      });
      info = JSON.stringify({ baseUrl, ...KEYS, proxyPath: '/notif', proxyHmacKey: PROXY_HMAC_KEY });
      // The browser-safe gateway (server/src/proxy.ts) on the test pages' own origin, as a host app
      // would mount it: pages reach the service through /notif with a subscriber hash and no key.
      const { createInboxProxy } = await tsImport('./server/src/proxy.ts', import.meta.url);
      proxy = createInboxProxy({ serviceUrl: baseUrl, apiKey: KEYS.apiKey, hmacKey: PROXY_HMAC_KEY, basePath: '/notif' });
    },
    serverStop: stop,
    serve(context) {
      if (context.path === '/__notif-test.json') return { body: info, type: 'json' };
    },
    /** Koa middleware: /notif/* through the proxy. */
    async proxyMiddleware(ctx, next) {
      if (!proxy || !ctx.path.startsWith('/notif/')) return next();
      const chunks = [];
      for await (const chunk of ctx.req) chunks.push(chunk);
      const body = ctx.method === 'GET' || ctx.method === 'HEAD' || !chunks.length ? undefined : Buffer.concat(chunks);
      // A page that goes away ends the request to the service too (the stream).
      const gone = new AbortController();
      ctx.res.on('close', () => gone.abort());
      const response = await proxy(new Request(`http://${ctx.host}${ctx.url}`, { method: ctx.method, headers: ctx.headers, body, signal: gone.signal }));
      ctx.status = response.status;
      for (const [name, value] of response.headers) ctx.set(name, value);
      // Passed on as it comes (the stream is never buffered).
      ctx.body = response.body ? Readable.fromWeb(response.body).on('error', () => {}) : null;
    },
  };
}

const server = notifServer();

/**
 * A second service that a test may stop and start again on the same database and port (the live
 * tests' restart): `executeServerCommand('notif-restartable', { action: 'start' | 'stop' })`.
 */
function restartableServer() {
  let child;
  let dir;
  let port = 0;
  const stop = async () => {
    if (!child || hasExited(child)) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  };
  process.once('exit', () => {
    child?.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const start = async () => {
    dir ??= mkdtempSync(join(tmpdir(), 'notif-wtr-restart-'));
    child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts', 'serve', '--port', String(port), '--db', join(dir, 'notif.db'), '--no-seed', '--faults'], {
      cwd: root,
      env: { ...process.env, NOTIF_MAX_EVENT_LOOP_DELAY_MS: BUSY_MACHINE_EVENT_LOOP_LIMIT_MS, NOTIF_API_KEYS: `${KEYS.apiKey}=wtr/test` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const url = await new Promise((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk) => {
        const m = /listening on (http:\/\/\S+)/.exec((output += chunk));
        if (m) resolve(m[1]);
      });
      child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
      child.once('exit', (code) => reject(new Error(`restartable service exited with ${code}:\n${output}`)));
    });
    port = Number(new URL(url).port);
    return url;
  };
  return {
    name: 'notif-restartable',
    async executeCommand({ command, payload }) {
      if (command !== 'notif-restartable') return undefined;
      if (payload.action === 'stop') return (await stop(), true);
      return start();
    },
    serverStop: stop,
  };
}

export default {
  rootDir: root,
  files: ['test/{api,store,components}/**/*.test.ts'],
  nodeResolve: true,
  concurrency: 2,
  concurrentBrowsers: 1,
  browserStartTimeout: 60_000,
  testsStartTimeout: 60_000,
  testsFinishTimeout: 180_000,
  testFramework: { config: { timeout: 30_000 } },
  browsers: [
    chromeLauncher({
      // Each page in its own browser context (its own window): two test files run side by side and
      // both stay visible, as the store stops polling in a hidden page.
      createPage: async ({ browser }) => (await browser.createBrowserContext()).newPage(),
      launchOptions: {
        executablePath: CHROMIUM_PATH,
        headless: true,
        args: [
          ...CHROMIUM_ARGS,
          // Two windows side by side: keep both rendering frames (IntersectionObserver, animations).
          '--disable-backgrounding-occluded-windows',
          '--disable-renderer-backgrounding',
          '--disable-background-timer-throttling',
        ],
      },
    }),
  ],
  middleware: [(ctx, next) => server.proxyMiddleware(ctx, next)],
  plugins: [
    server,
    restartableServer(),
    // TypeScript with the project's tsconfig (useDefineForClassFields: false, so class fields never
    // shadow Lit's reactive accessors).
    esbuildPlugin({ ts: true, target: 'es2022', tsconfig: fileURLToPath(new URL('./tsconfig.json', import.meta.url)) }),
  ],
};
