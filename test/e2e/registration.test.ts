import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import type { ExampleService } from './examples.ts';
import { launchChromium } from './browser.ts';
// @ts-expect-error a plain .mjs module without declarations
import { startExampleService } from '../../scripts/examples.mjs';

// Guarded registration: a page that loads the script-tag build twice (two URLs, so two module
// instances) and the npm ES build beside it (its bare `lit` imports mapped with an import map, as
// an app's bundle would bring its own Lit) must neither throw nor break the elements. A different
// version registered first wins, with one console warning per tag.

const ROOT = resolve(import.meta.dirname, '../..');
const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.html': 'text/html; charset=utf-8', '.map': 'application/json' };

const IMPORT_MAP = JSON.stringify({
  imports: {
    lit: '/node_modules/lit/index.js',
    'lit/': '/node_modules/lit/',
    'lit-html': '/node_modules/lit-html/lit-html.js',
    'lit-html/': '/node_modules/lit-html/',
    'lit-element/': '/node_modules/lit-element/',
    '@lit/reactive-element': '/node_modules/@lit/reactive-element/reactive-element.js',
    '@lit/reactive-element/': '/node_modules/@lit/reactive-element/',
    '@lit/context': '/node_modules/@lit/context/index.js',
    '@lit/task': '/node_modules/@lit/task/index.js',
  },
});

const page = (config: object, head: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="importmap">${IMPORT_MAP}</script>
<script>window.errors = []; addEventListener('error', (e) => errors.push(String(e.message)));</script>
${head}
</head><body>
<notif-bell id="bell" base-url="${(config as { baseUrl: string }).baseUrl}" subscriber-id="${(config as { subscriberId: string }).subscriberId}" api-key="${(config as { apiKey: string }).apiKey}"></notif-bell>
</body></html>`;

const BOTH = `
<script type="module" src="/dist/notif-inbox.min.js"></script>
<script type="module" src="/dist/notif-inbox.min.js?copy=2"></script>
<script type="module">import '/dist/notif-inbox.js';</script>
<script type="module" src="/dist/notif-inbox.min.js?copy=3"></script>`;

const OLDER_FIRST = `
<script>
  // Another copy of the package, of another version, registered <notif-message> first.
  customElements.define('notif-message', class extends HTMLElement { static version = '0.0.1'; });
</script>
<script type="module" src="/dist/notif-inbox.min.js"></script>
<script type="module" src="/dist/notif-inbox.min.js?copy=2"></script>`;

let service: ExampleService;
let server: Server;
let origin: string;
let browser: Browser;

before(async () => {
  assert.ok(existsSync(join(ROOT, 'dist/notif-inbox.min.js')), 'dist/ is built (npm run test:e2e builds it)');
  service = await startExampleService();
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/both.html' || url.pathname === '/older-first.html') {
      res.writeHead(200, { 'content-type': TYPES['.html']! });
      return res.end(page(service, url.pathname === '/both.html' ? BOTH : OLDER_FIRST));
    }
    const file = join(ROOT, decodeURIComponent(url.pathname));
    const allowed = [join(ROOT, 'dist') + sep, join(ROOT, 'node_modules') + sep].some((dir) => file.startsWith(dir));
    if (!allowed || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
  await service?.stop();
});

async function open(path: string): Promise<{ page: Page; warnings: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const warnings: string[] = [];
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'warning') warnings.push(m.text());
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${origin}${path}`);
  return { page, warnings, errors };
}

test('the script-tag build loaded twice beside the npm build: no error, one definition, the bell works', { timeout: 60_000 }, async () => {
  const { page, warnings, errors } = await open('/both.html');
  // Every copy ran (the npm build's module too: its chunks define the same tags, guarded).
  await page.waitForFunction(() => performance.getEntriesByType('resource').filter((r) => /notif-inbox(\.min)?\.js/.test(r.name)).length === 4);
  await page.locator('notif-bell [part~="badge"]', { hasText: '3' }).waitFor({ timeout: 15_000 });
  await page.locator('notif-bell button[aria-haspopup="dialog"]').click();
  await page.locator('notif-bell [part~="popover"] notif-message').nth(2).waitFor();
  assert.equal(await page.evaluate(() => (window as unknown as { errors: string[] }).errors.length), 0);
  assert.deepEqual(errors, []);
  assert.deepEqual(warnings.filter((w) => w.includes('notif-inbox')), [], 'same version: nothing to warn about');
  const ctors = await page.evaluate(() => ['notif-bell', 'notif-feed', 'notif-message'].map((t) => (customElements.get(t) as unknown as { version?: string })?.version));
  assert.deepEqual(ctors, ['0.1.0', '0.1.0', '0.1.0']);
  await page.close();
});

test('another version registered first keeps its tag, with one warning, and nothing throws', { timeout: 60_000 }, async () => {
  const { page, warnings, errors } = await open('/older-first.html');
  // This package's bell and feed still work around the other version's <notif-message>.
  await page.locator('notif-bell button[aria-haspopup="dialog"]').click({ timeout: 15_000 });
  await page.locator('notif-bell [part~="popover"] notif-message').nth(2).waitFor({ state: 'attached' });
  assert.deepEqual(errors, []);
  const notes = warnings.filter((w) => w.includes('<notif-message> is already registered by version 0.0.1'));
  assert.equal(notes.length, 1, `one warning for two copies: ${JSON.stringify(warnings)}`);
  assert.equal(await page.evaluate(() => (customElements.get('notif-message') as unknown as { version: string }).version), '0.0.1');
  assert.equal(await page.evaluate(() => (customElements.get('notif-bell') as unknown as { version: string }).version), '0.1.0');
  await page.close();
});
