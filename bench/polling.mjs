// What polling (live="poll", or a server without the stream) costs the service: requests per minute that reach it from <notif-bell> tabs with the
// feed closed, and from tabs that are all hidden, against the budgets of DESIGN.md.
//
//   npm run build && node bench/polling.mjs            15 s polling (the default), 60 s windows
//   node bench/polling.mjs --seconds 120               longer measured windows
//   node bench/polling.mjs --poll 3 --seconds 15       faster polling while developing (the budget
//                                                      is about 15 s: report figures from a default run)
//
// The real parts: the service (server/src/main.ts, its own temporary database, one subscriber with three
// unseen messages), dist/notif-inbox.min.js on a page served from another origin (as a script-tag
// user's page is), and Debian's Chromium. Between the page and the service sits a counting proxy
// (node:http), so every request that reaches the service is counted, CORS preflights (OPTIONS)
// included; Chromium's own view (Playwright's request events on the page) is shown beside it.
//
// Tabs are real tabs of one browser profile, so BroadcastChannel and navigator.locks are shared as
// they are between a user's tabs. Each tab is its own window, so all five are visible at once (the
// worst case for the cross-tab leadership: a tab behind another in the same window is hidden and
// does not poll anyway). "Every tab hidden" minimizes every window, which Chromium reports to the
// pages as visibilityState 'hidden' with a visibilitychange event; the script checks both in every
// page and says so plainly when it cannot hide them, instead of pretending.
//
// Why the browser is started here and joined over CDP (connectOverCDP with noDefaults, the option
// Playwright's own browser-extension relay uses) rather than with chromium.launch(): Playwright turns
// on focus emulation (Emulation.setFocusEmulationEnabled) in every page it creates, and a page under
// focus emulation stays 'visible' whatever happens to its window, so no page could ever be hidden.
//
// Exits 1 when a figure is over its budget, 2 when the hidden case could not be set up.
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../scripts/chromium.mjs';
import { startService } from '../scripts/service.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const SCRIPT = join(ROOT, 'dist/notif-inbox.min.js');
const KEY = 'bench_polling_key';
const SUBSCRIBER = 'bench-ada';
const UNSEEN = 3;

/** DESIGN.md "Budgets". */
export const BUDGETS = {
  /** "requests per minute per subscriber at 15 s polling, 5 tabs open, feed closed <= 4 (one poller)". */
  perMinuteAt15s: 4,
  /** "requests while every tab is hidden: 0". */
  hidden: 0,
};

const { values: opts } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    poll: { type: 'string' },
    settle: { type: 'string', default: '3' },
    tabs: { type: 'string', default: '5' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (opts.help) {
  console.log('node bench/polling.mjs [--seconds N (measured window, default 60)] [--poll N (poll interval in s, default the element\'s 15)] [--settle N (s, default 3)] [--tabs N (default 5)]');
  process.exit(0);
}
const SECONDS = Number(opts.seconds);
const POLL = opts.poll === undefined ? undefined : Number(opts.poll);
const SETTLE = Number(opts.settle);
const TABS = Number(opts.tabs);
for (const [name, v] of [['--seconds', SECONDS], ['--poll', POLL ?? 15], ['--settle', SETTLE], ['--tabs', TABS]]) {
  if (!Number.isFinite(v) || v < 0 || (name !== '--settle' && v === 0)) {
    console.error(`${name} must be a positive number`);
    process.exit(2);
  }
}
if (!existsSync(SCRIPT)) {
  console.error('dist/notif-inbox.min.js is missing: run npm run build first');
  process.exit(2);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const started = Date.now();
const log = (line) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}`);
const cleanup = [];

// ---- the service, with one subscriber and three unseen messages ----

async function startBenchService() {
  const { url, stop } = await startService({ key: KEY, tenant: 'bench/polling', name: 'notif-bench-polling-' });
  cleanup.push(stop);
  const call = async (method, path, body) => {
    const res = await fetch(url + path, { method, headers: { authorization: `ApiKey ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  await call('POST', '/v2/subscribers', { subscriberId: SUBSCRIBER, firstName: 'Ada' });
  await call('POST', '/v2/workflows', {
    workflowId: 'bench-note',
    name: 'Note',
    steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: '{{payload.title}}', body: 'Polling bench message.' } }],
  });
  for (let i = 1; i <= UNSEEN; i++) await call('POST', '/v1/events/trigger', { name: 'bench-note', to: SUBSCRIBER, payload: { title: `Note ${i}` } });
  return url;
}

// ---- the counting proxy: every request that reaches the service ----

/** Requests forwarded to the service: time, method and path. */
const atService = [];
/** The service's Access-Control-Max-Age on a preflight (how long Chromium may reuse one). */
let preflightMaxAge;

async function startProxy(target) {
  const to = new URL(target);
  const server = createServer((req, res) => {
    atService.push({ t: Date.now(), method: req.method, path: req.url });
    const upstream = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (reply) => {
      if (req.method === 'OPTIONS') preflightMaxAge = reply.headers['access-control-max-age'];
      res.writeHead(reply.statusCode, reply.headers);
      reply.pipe(res);
    });
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  return listen(server);
}

// ---- the page, on its own origin ----

function pageHtml(serviceUrl) {
  const attr = (s) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  const poll = POLL === undefined ? '' : ` poll-interval="${POLL * 1000}"`;
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>polling bench</title>
    <link rel="icon" href="data:," />
    <script>
      // What the bench reads back: every visibilitychange this page saw.
      window.visibilityLog = [document.visibilityState];
      document.addEventListener('visibilitychange', () => window.visibilityLog.push(document.visibilityState));
    </script>
    <script type="module" src="/dist/notif-inbox.min.js"></script>
  </head>
  <body>
    <notif-bell base-url="${attr(serviceUrl)}" subscriber-id="${SUBSCRIBER}" api-key="${KEY}" live="poll"${poll}></notif-bell>
  </body>
</html>
`;
}

async function startPageServer(serviceUrl) {
  const html = pageHtml(serviceUrl);
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(html);
    }
    // The script tag, its source map and the files it loads on demand (beside it).
    if (/^\/dist\/[\w-]+\.min\.js(\.map)?$/.test(path) && existsSync(join(ROOT, path))) {
      res.writeHead(200, { 'content-type': path.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'application/json' });
      return createReadStream(join(ROOT, path)).pipe(res);
    }
    res.writeHead(404);
    res.end();
  });
  return listen(server);
}

async function listen(server) {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise((r) => server.close(r)));
  server.closeAllConnections && cleanup.push(async () => server.closeAllConnections());
  return `http://127.0.0.1:${server.address().port}`;
}

// ---- the browser ----

async function startBrowser() {
  const dir = mkdtempSync(join(tmpdir(), 'notif-bench-chromium-'));
  const child = spawn(CHROMIUM_PATH, [...CHROMIUM_ARGS, '--remote-debugging-port=0', `--user-data-dir=${dir}`, 'about:blank'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  cleanup.push(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  });
  let output = '';
  const ws = await new Promise((resolveWs, reject) => {
    const timer = setTimeout(() => reject(new Error(`Chromium did not start in 30 s:\n${output}`)), 30_000);
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      output += chunk;
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolveWs(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Chromium exited with ${code}:\n${output}`));
    });
  });
  const browser = await chromium.connectOverCDP(ws, { noDefaults: true });
  const context = browser.contexts()[0];
  const cdp = await browser.newBrowserCDPSession();
  return { browser, context, cdp };
}

/** Opens `url` as a new tab in a new window of the browser's profile; waits until its bell shows the count. */
async function openTab({ context, cdp }, url, errors) {
  const next = context.waitForEvent('page');
  const { targetId } = await cdp.send('Target.createTarget', { url, newWindow: true });
  const page = await next;
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.locator('notif-bell [part~="badge"]').filter({ hasText: String(UNSEEN) }).waitFor({ timeout: 30_000 });
  const { windowId } = await cdp.send('Browser.getWindowForTarget', { targetId });
  return { page, targetId, windowId };
}

const visibility = (tabs) => Promise.all(tabs.map(({ page }) => page.evaluate(() => ({ state: document.visibilityState, log: window.visibilityLog }))));

/** Sets every browser window's state ('minimized' or 'normal'). */
async function setWindows(cdp, windowState) {
  const { targetInfos } = await cdp.send('Target.getTargets');
  const windows = new Set();
  for (const t of targetInfos.filter((t) => t.type === 'page')) windows.add((await cdp.send('Browser.getWindowForTarget', { targetId: t.targetId })).windowId);
  for (const windowId of windows) await cdp.send('Browser.setWindowBounds', { windowId, bounds: { windowState } });
}

// ---- counting ----

/** Requests seen by Chromium's network stack for the service's origin (Playwright's request events). */
const inBrowser = [];

function kindOf({ method, path }) {
  if (method === 'OPTIONS') return 'preflight';
  if (/\/notifications\/unseen(\?|$)/.test(path)) return 'unseen';
  if (/\/notifications\/feed(\?|$)/.test(path)) return 'feed';
  return 'other';
}

function count(list, t0, t1) {
  const c = { unseen: 0, feed: 0, other: 0, preflight: 0, total: 0 };
  for (const r of list) if (r.t >= t0 && r.t < t1) c[kindOf(r)]++, c.total++;
  return c;
}

async function measure(label, seconds) {
  log(`${label}: settling ${SETTLE} s, then counting for ${seconds} s`);
  await sleep(SETTLE * 1000);
  const t0 = Date.now();
  await sleep(seconds * 1000);
  const t1 = Date.now();
  return { label, seconds: (t1 - t0) / 1000, service: count(atService, t0, t1), browser: count(inBrowser, t0, t1) };
}

// ---- the run ----

async function main() {
  const serviceUrl = await startBenchService();
  const proxyUrl = await startProxy(serviceUrl);
  const pageUrl = (await startPageServer(proxyUrl)) + '/';
  log(`service ${serviceUrl}, counted through ${proxyUrl}, page ${pageUrl}`);
  const b = await startBrowser();
  const proxyOrigin = new URL(proxyUrl).origin;
  b.context.on('request', (req) => {
    const u = new URL(req.url());
    if (u.origin === proxyOrigin) inBrowser.push({ t: Date.now(), method: req.method(), path: u.pathname + u.search });
  });
  const errors = [];
  const results = [];
  let hiddenNote = '';
  let afterShow;

  // 1 tab, for comparison.
  const one = [await openTab(b, pageUrl, errors)];
  const v1 = await visibility(one);
  if (v1.some((v) => v.state !== 'visible')) throw new Error(`the tab is not visible: ${JSON.stringify(v1)}`);
  results.push({ ...(await measure('1 tab, visible, feed closed', SECONDS)), tabs: 1 });
  await one[0].page.close();

  // TABS tabs, each in its own window, all visible.
  const tabs = [];
  for (let i = 0; i < TABS; i++) tabs.push(await openTab(b, pageUrl, errors));
  const windows = new Set(tabs.map((t) => t.windowId)).size;
  const v5 = await visibility(tabs);
  if (v5.some((v) => v.state !== 'visible')) throw new Error(`not every tab is visible: ${JSON.stringify(v5)}`);
  const visibleRun = await measure(`${TABS} tabs (${windows} windows), all visible, feed closed`, SECONDS);
  const v5after = await visibility(tabs);
  if (v5after.some((v) => v.state !== 'visible')) throw new Error(`a tab stopped being visible during the window: ${JSON.stringify(v5after)}`);
  results.push({ ...visibleRun, tabs: TABS, budget: true });

  // Every tab hidden: minimize every window.
  const logged = v5after.map((v) => v.log.length);
  await setWindows(b.cdp, 'minimized');
  const deadline = Date.now() + 5000;
  let hidden;
  do {
    await sleep(100);
    hidden = await visibility(tabs);
  } while (Date.now() < deadline && !hidden.every((v, i) => v.state === 'hidden' && v.log.slice(logged[i]).includes('hidden')));
  if (hidden.every((v, i) => v.state === 'hidden' && v.log.slice(logged[i]).includes('hidden'))) {
    hiddenNote = `every window minimized: all ${TABS} tabs read visibilityState 'hidden' and saw visibilitychange`;
    log(hiddenNote);
    const hiddenRun = await measure(`${TABS} tabs, every tab hidden`, SECONDS);
    const vh = await visibility(tabs);
    if (vh.some((v) => v.state !== 'hidden')) throw new Error(`a tab became visible during the hidden window: ${JSON.stringify(vh)}`);
    results.push({ ...hiddenRun, tabs: TABS, hidden: true });

    // Back: a visible tab refreshes at once (DESIGN.md: "refresh at once on visibilitychange").
    const t0 = Date.now();
    await setWindows(b.cdp, 'normal');
    await sleep(3000);
    const shown = await visibility(tabs);
    afterShow = {
      visible: shown.filter((v) => v.state === 'visible').length,
      service: count(atService, t0, Date.now()),
      at: atService.filter((r) => r.t >= t0).map((r) => `${r.method} ${kindOf(r)} +${((r.t - t0) / 1000).toFixed(2)} s`),
    };
  } else {
    hiddenNote = `could not hide the tabs (minimizing every window left: ${JSON.stringify(hidden.map((v) => v.state))}); the hidden budget is NOT measured`;
    log(hiddenNote);
  }

  // ---- the table ----
  const poll = POLL ?? 15;
  const perMinute = (r, n = r.service.total) => (n * 60) / r.seconds;
  const onePoller = 60 / poll;
  const budgetFor = (r) => (r.hidden ? BUDGETS.hidden : r.budget ? (POLL === undefined || POLL === 15 ? BUDGETS.perMinuteAt15s : onePoller) : undefined);
  console.log('');
  console.log(`Polling at ${poll} s${POLL === undefined ? ' (the default)' : ` (--poll; the budget is about 15 s, compared here with one poller: ${onePoller.toFixed(1)}/min)`}; measured windows of ${SECONDS} s after ${SETTLE} s to settle.`);
  console.log('Requests that reached the service (counted at the proxy; OPTIONS = CORS preflights), per kind, and per minute:');
  console.log('');
  const head = ['case', 'window', 'unseen', 'feed', 'other', 'OPTIONS', 'req/min at service', 'req/min seen by Chromium', 'budget', ''];
  const rows = results.map((r) => {
    const budget = budgetFor(r);
    const value = r.hidden ? r.service.total : perMinute(r);
    const verdict = budget === undefined ? '(comparison)' : value <= budget + 1e-9 ? 'ok' : 'OVER';
    r.verdict = verdict;
    return [
      r.label,
      `${r.seconds.toFixed(1)} s`,
      r.service.unseen,
      r.service.feed,
      r.service.other,
      r.service.preflight,
      r.hidden ? `${r.service.total} requests` : perMinute(r).toFixed(2),
      r.hidden ? `${r.browser.total} requests` : perMinute(r, r.browser.total).toFixed(2),
      budget === undefined ? '-' : r.hidden ? `${budget} requests` : `<= ${budget % 1 ? budget.toFixed(1) : budget}/min`,
      verdict,
    ];
  });
  if (!results.some((r) => r.hidden)) rows.push([`${TABS} tabs, every tab hidden`, '-', '-', '-', '-', '-', 'NOT MEASURED', '-', '0 requests', 'not measured']);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells) => cells.map((c, i) => (i >= 1 && i <= 7 ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join('  ').trimEnd();
  console.log(line(head));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
  console.log('');
  console.log(`Hidden: ${hiddenNote}.`);
  if (afterShow)
    console.log(
      `Shown again (windows restored): ${afterShow.visible}/${TABS} tabs visible, ${afterShow.service.total} request(s) within 3 s (unseen ${afterShow.service.unseen}, feed ${afterShow.service.feed}, OPTIONS ${afterShow.service.preflight}; ${afterShow.at.join(', ')}): the refresh on visibilitychange.`,
    );
  const preflights = atService.filter((r) => r.method === 'OPTIONS').length;
  console.log(
    `CORS preflights over the whole run: ${preflights}` +
      (preflightMaxAge ? ` (Access-Control-Max-Age: ${preflightMaxAge}: Chromium reuses a preflight for that many seconds per URL, so the poll adds one OPTIONS every ${preflightMaxAge} s, +${(60 / preflightMaxAge).toFixed(2)}/min, whether or not a window catches it).` : '.'),
  );
  const budgetRun = results.find((r) => r.budget);
  if (preflightMaxAge && budgetRun) {
    const steady = perMinute(budgetRun, budgetRun.service.total - budgetRun.service.preflight) + 60 / preflightMaxAge;
    console.log(
      `${budgetRun.label}, steady state with that preflight: ${steady.toFixed(2)}/min at the service ` +
        `(${steady <= budgetFor(budgetRun) + 1e-9 ? 'within' : 'over'} the ${budgetFor(budgetRun)}/min budget; a page on the service's own origin, as behind the proxy, sends no preflight).`,
    );
  }
  if (errors.length) console.log(`Page errors:\n  ${[...new Set(errors)].join('\n  ')}`);
  console.log(`Took ${((Date.now() - started) / 1000).toFixed(0)} s.`);
  await b.browser.close().catch(() => {});
  if (!results.some((r) => r.hidden)) return 2;
  return results.some((r) => r.verdict === 'OVER') ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (e) {
  console.error(e);
} finally {
  for (const fn of cleanup.reverse()) await fn().catch(() => {});
}
process.exit(code);
