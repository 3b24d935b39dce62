// The framework examples (demo/react, demo/vue, demo/plain.html) against a real service.
//
//   npm run example -- react      (or vue, plain): starts the service on a fresh database with one
//                                 subscriber and three messages, serves the example, prints its URL
//
// The e2e tests (test/e2e/{react,vue,plain}.test.ts) use the same functions. Each page reads
// /example-config.json ({ baseUrl, apiKey, subscriberId }): a development setup on localhost; the
// docs/security.md shows the production path.
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync, realpathSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { startService } from './service.mjs';

const ROOT = resolve(import.meta.dirname, '..');
export const EXAMPLE_KEY = 'example_development_key';

async function call(baseUrl, method, path, body) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `ApiKey ${EXAMPLE_KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/**
 * Starts the service (`server/src/main.ts serve`) on a free port and a temporary database, with the
 * example key, subscriber `example-ada`, and three unseen messages: two invitations with Accept /
 * Decline buttons that redirect to /projects/<id>, and one note.
 */
export async function startExampleService() {
  const { url: baseUrl, stop } = await startService({ key: EXAMPLE_KEY, tenant: 'examples/development', name: 'notif-example-' });

  const subscriberId = 'example-ada';
  await call(baseUrl, 'POST', '/v2/subscribers', { subscriberId, firstName: 'Ada', lastName: 'Lovelace' });
  await call(baseUrl, 'POST', '/v2/workflows', {
    workflowId: 'example-invite',
    name: 'Project invitation',
    steps: [
      {
        name: 'inbox',
        type: 'in_app',
        controlValues: {
          subject: '{{payload.actor}} invited you to {{payload.project}}',
          body: 'Join {{payload.project}} as editor.',
          redirect: { url: '/projects/{{payload.projectId}}' },
          primaryAction: { label: 'Accept', resultContent: 'You joined {{payload.project}}' },
          secondaryAction: { label: 'Decline', resultContent: 'Invitation declined' },
        },
      },
    ],
  });
  await call(baseUrl, 'POST', '/v2/workflows', {
    workflowId: 'example-note',
    name: 'Note',
    steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: '{{payload.title}}', body: '{{payload.body}}', redirect: { url: '/notes/{{payload.noteId}}' } } }],
  });
  await call(baseUrl, 'POST', '/v1/events/trigger', { name: 'example-note', to: subscriberId, payload: { title: 'Welcome aboard', body: 'Your inbox works.', noteId: 1 } });
  await call(baseUrl, 'POST', '/v1/events/trigger', { name: 'example-invite', to: subscriberId, payload: { actor: 'Grace', project: 'Analytical Engine', projectId: 42 } });
  await call(baseUrl, 'POST', '/v1/events/trigger', { name: 'example-invite', to: subscriberId, payload: { actor: 'Alan', project: 'Bombe', projectId: 7 } });

  return { baseUrl, apiKey: EXAMPLE_KEY, subscriberId, stop };
}

/** Serves /example-config.json to a Vite dev server (connect middleware). */
function configPlugin(config) {
  return {
    name: 'notif-example-config',
    configureServer(server) {
      server.middlewares.use('/example-config.json', (_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(config));
      });
    },
  };
}

/**
 * Serves an example: `react` and `vue` through Vite's dev server with the example's own
 * vite.config.ts; `plain` through a static file server (no build step: the page loads
 * dist/notif-inbox.min.js, which `npm run build` makes). Returns the page's URL and close().
 */
export async function serveExample(name, service) {
  const config = { baseUrl: service.baseUrl, apiKey: service.apiKey, subscriberId: service.subscriberId };
  if (name === 'plain') return serveStatic(config);
  if (name !== 'react' && name !== 'vue') throw new Error(`unknown example '${name}' (react, vue, plain)`);
  const { createServer: createVite } = await import('vite');
  const server = await createVite({
    configFile: join(ROOT, 'demo', name, 'vite.config.ts'),
    root: join(ROOT, 'demo', name),
    clearScreen: false,
    logLevel: 'warn',
    plugins: [configPlugin(config)],
    // node_modules may be a link to elsewhere (pnpm-like installs): its real folder is served too.
    server: { host: '127.0.0.1', port: 0, strictPort: false, fs: { allow: [ROOT, realpathSync(join(ROOT, 'node_modules'))] } },
  });
  await server.listen();
  const address = server.httpServer.address();
  return { url: `http://127.0.0.1:${address.port}/`, close: () => server.close() };
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.map': 'application/json', '.css': 'text/css', '.json': 'application/json' };

/** demo/plain.html at /, the repository's dist/ at /dist/, and /example-config.json. */
async function serveStatic(config) {
  if (!existsSync(join(ROOT, 'dist/notif-inbox.min.js'))) throw new Error('dist/notif-inbox.min.js is missing: run npm run build');
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (path === '/example-config.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(config));
    }
    // Any other path is the page itself (the example routes with history.pushState).
    const file = path.startsWith('/dist/') ? join(ROOT, path) : join(ROOT, 'demo/plain.html');
    if (!file.startsWith(join(ROOT, 'dist') + sep) && file !== join(ROOT, 'demo/plain.html')) {
      res.writeHead(404);
      return res.end();
    }
    if (!existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(r)) };
}

async function main() {
  const name = process.argv[2];
  if (!['react', 'vue', 'plain'].includes(name)) {
    console.error('usage: npm run example -- react|vue|plain');
    process.exit(2);
  }
  // The script-tag page needs dist/ (a fresh clone has none): built first, before anything runs.
  if (name === 'plain' && !existsSync(join(ROOT, 'dist/notif-inbox.min.js'))) {
    console.log('building dist/ for the plain example (npm run build)…');
    if (spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' }).status) process.exit(1);
  }
  const service = await startExampleService();
  let page;
  // Whatever ends this process, the service and its temporary database go with it.
  const shutdown = async (code = 0) => {
    await page?.close();
    await service.stop();
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(signal, () => void shutdown());
  try {
    page = await serveExample(name, service);
  } catch (e) {
    console.error(String(e?.message ?? e));
    await shutdown(1);
  }
  console.log(`service on ${service.baseUrl} (subscriber ${service.subscriberId}, API key ${EXAMPLE_KEY})\n${name} example on ${page.url}`);
  // A message to try live arrival with, from another terminal.
  console.log(
    `a new message: curl -X POST ${service.baseUrl}/v1/events/trigger -H 'Authorization: ApiKey ${EXAMPLE_KEY}' -H 'Content-Type: application/json' ` +
      `-d '{"name":"example-note","to":"${service.subscriberId}","payload":{"title":"Hello","body":"From the terminal.","noteId":2}}'`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) await main();
