import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { NotifClient } from '../../src/api/client.ts';
import { KEYS, startServer, type TestServer } from '../server/helpers.ts';
import { launchChromium } from './browser.ts';

// The elements under a strict Content-Security-Policy: a page served with
// `default-src 'self'; style-src 'self'; script-src 'self'` (and connect-src for the service) uses
// every state (badge, popover, feed, CTA, message controls, dark, right-to-left, German) while listening for
// `securitypolicyviolation`. Lit's adopted stylesheets are allowed by style-src 'self'; an inline
// style="" attribute, a <style> element, eval or an inline script would each be reported.

const ROOT = resolve(import.meta.dirname, '../..');

let service: TestServer;
let page: Page;
let browser: Browser;
let site: Server;
let siteUrl: string;
const subscriberId = 'csp-subscriber';

/** Watches for violations before anything else runs (a classic script: it blocks parsing). */
const WATCH = `window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample, source: e.sourceFile + ':' + e.lineNumber });
});`;

const PAGE = (baseUrl: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>notif-inbox under a strict CSP</title>
  <script src="/watch.js"></script>
  <script type="module" src="/register-de.js"></script>
  <link rel="stylesheet" href="/page.css">
</head>
<body>
  <header><notif-bell id="bell" base-url="${baseUrl}" subscriber-id="${subscriberId}" api-key="${KEYS.a}"></notif-bell></header>
  <main><notif-feed id="feed" base-url="${baseUrl}" subscriber-id="${subscriberId}" api-key="${KEYS.a}"></notif-feed></main>
</body>
</html>`;

before(async () => {
  service = await startServer();
  const client = new NotifClient({ baseUrl: service.url, apiKey: KEYS.a });
  await client.createSubscriber({ subscriberId, firstName: 'Ada' });
  await client.createWorkflow({
    workflowId: 'csp-invite',
    name: 'Invitation',
    steps: [
      {
        name: 'in-app',
        type: 'in_app',
        controlValues: {
          subject: '{{payload.title}}',
          body: '{{payload.body}}',
          primaryAction: { label: 'Accept', resultContent: 'Joined' },
          secondaryAction: { label: 'Decline' },
          redirect: { url: '/projects/apollo' },
        },
      },
    ],
  } as never);
  for (const title of ['Ada invited you to Apollo', 'Grace replied', 'Invoice paid']) {
    await client.trigger({ name: 'csp-invite', to: subscriberId, payload: { title, body: `${title}: details` } });
  }

  // The elements as a script-tag user gets them: one module with Lit inside, production build.
  const bundle = await build({
    entryPoints: [resolve(ROOT, 'src/index.ts')],
    bundle: true,
    format: 'esm',
    minify: true,
    write: false,
    conditions: ['production'],
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
  });
  const germanBundle = await build({
    stdin: {
      contents: `import { registerTranslation } from './src/index.ts'; import de from './src/i18n/de.ts'; registerTranslation(de);`,
      resolveDir: ROOT,
      loader: 'ts',
    },
    bundle: true,
    format: 'esm',
    write: false,
    conditions: ['production'],
    external: ['./src/index.ts'],
    logLevel: 'silent',
  });
  const csp = `default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self' ${service.url}`;
  const files: Record<string, [string, string]> = {
    '/': ['text/html', PAGE(service.url)],
    '/watch.js': ['text/javascript', WATCH],
    '/notif-inbox.js': ['text/javascript', bundle.outputFiles[0]!.text],
    '/register-de.js': ['text/javascript', germanBundle.outputFiles[0]!.text.replace('./src/index.ts', '/notif-inbox.js')],
    '/page.css': ['text/css', 'body { font-family: sans-serif; margin: 2rem; } header { display: flex; justify-content: flex-end; }'],
  };
  site = createServer((req, res) => {
    const file = files[new URL(req.url ?? '/', 'http://x').pathname];
    if (!file) {
      res.writeHead(404, { 'content-security-policy': csp }).end();
      return;
    }
    res.writeHead(200, { 'content-type': file[0], 'content-security-policy': csp, 'cache-control': 'no-store' }).end(file[1]);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;

  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
});

after(async () => {
  await browser?.close();
  await new Promise((r) => site?.close(r));
  await service?.dispose();
});

const violations = () => page.evaluate(() => (window as unknown as { __violations: unknown[] }).__violations);

test('the elements raise no CSP violation in any state under style-src and script-src self', { timeout: 90_000 }, async () => {
  const logs: string[] = [];
  const errors: string[] = [];
  page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => errors.push(e.message));
  const response = await page.goto(siteUrl);
  assert.match(response!.headers()['content-security-policy']!, /style-src 'self'; script-src 'self'/);

  const bell = page.locator('#bell');
  const badge = bell.locator('[part~="badge"]');
  await badge.waitFor();
  assert.equal(await badge.textContent(), '3');
  const feedSubjects = page.locator('#feed notif-message [part~="subject"]');
  await feedSubjects.first().waitFor();
  assert.equal(await feedSubjects.count(), 3);

  // Open the popover, run a CTA, mark a message read with its control, switch tabs, close.
  await bell.locator('button[aria-haspopup="dialog"]').click();
  const popoverMessages = bell.locator('notif-feed notif-message');
  await popoverMessages.first().waitFor();
  await popoverMessages.first().locator('[part~="button-primary"]').click();
  await popoverMessages.first().locator('[part~="action-result"]').waitFor();
  await popoverMessages.nth(1).hover();
  await popoverMessages.nth(1).locator('[part~="read-button"]').click();
  await popoverMessages.nth(1).locator('[part~="read-button"][aria-label="Mark as unread"]').waitFor();
  await bell.locator('notif-feed [role="tab"]').nth(1).click();
  await page.keyboard.press('Escape');

  // Dark, right-to-left, German: attribute changes re-render with the same adopted stylesheets.
  await page.evaluate(() => {
    for (const el of document.querySelectorAll('notif-bell, notif-feed')) el.setAttribute('theme', 'dark');
    document.documentElement.dir = 'rtl';
    document.querySelector('#feed')!.setAttribute('locale', 'de');
  });
  await page.locator('#feed [role="tab"]', { hasText: 'Alle' }).waitFor();
  await bell.locator('button[aria-haspopup="dialog"]').click();
  await bell.locator('notif-feed notif-message').first().waitFor();
  const surface = await page.evaluate(() => getComputedStyle(document.querySelector('#feed')!).getPropertyValue('--_surface').trim());
  assert.equal(surface, '#16181d', 'the dark palette applies under the policy');

  assert.deepEqual(await violations(), [], 'no CSP violation');
  assert.deepEqual(errors, []);
  assert.equal(logs.filter((l) => /dev mode|Content Security Policy|Refused/i.test(l)).length, 0, logs.join('\n'));
  // The stylesheets came through adoptedStyleSheets: no <style> element and no style attribute anywhere.
  // (A string: tsx would wrap a named function in a helper the page lacks.)
  const inline = await page.evaluate(`(() => {
    let found = 0;
    const roots = [document];
    for (const root of roots) {
      found += root.querySelectorAll('style, [style]').length;
      for (const el of root.querySelectorAll('*')) if (el.shadowRoot) roots.push(el.shadowRoot);
    }
    return found;
  })()`);
  assert.equal(inline, 0);

  // The watcher is not blind: an inline style attribute is reported.
  await page.evaluate(() => document.body.setAttribute('style', 'color: red'));
  await page.waitForFunction(() => (window as unknown as { __violations: unknown[] }).__violations.length > 0);
  const [reported] = (await violations()) as { directive: string }[];
  assert.match(reported!.directive, /^style-src/);
});
