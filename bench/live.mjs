// Live: what the stream (GET …/notifications/stream) gives and costs, against DESIGN.md's budgets.
//
//   npm run build && npm run bench:live             every figure (about 3 minutes)
//   node bench/live.mjs --seconds 20 --streams 2000  shorter, lighter (while developing)
//
// 1. Trigger to badge: 5 tabs of one browser profile (dist/notif-inbox.min.js on a page of another
//    origin, each tab its own window, so all are visible), 50 triggers one after another; for each,
//    the time from sending the trigger to each tab's badge showing the new count (the page records
//    Date.now() once its bell has rendered the count; one machine, one clock).
// 2. Requests per minute reaching the service from those 5 idle tabs, feed closed (counted by a
//    node:http proxy in front of the service, preflights included).
// 3. 10,000 idle streams held by one service process (1,000 subscribers, 10 streams each, opened by
//    node:http clients in this process): the service's RSS (/proc), and the unseen count's p99 under
//    load (autocannon, 16 connections, 10 s) with the streams open against the same load without.
// 4. One trigger to 1,000 connected subscribers: 1,000 streams, then triggers to all 1,000 at once (10
//    triggers of 100, the API's largest `to`); the time until the last stream is told of its message.
//
// The service runs on SQLite in its own temporary folder (scripts/service.mjs), or with
// --database postgres://... on a fresh database made there (and dropped after). --server-only
// skips 1 and 2 (no browser, no build needed).
//   node bench/live.mjs --server-only --streams 2000 --database postgres://notif@127.0.0.1:5432/notif
//   node bench/live.mjs --server-only --fan-out-only     4 alone (the fan-out, a few seconds)
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../scripts/chromium.mjs';
import { startService } from '../scripts/service.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const SCRIPT = join(ROOT, 'dist/notif-inbox.min.js');
const KEY = 'bench_live_key';

/** DESIGN.md "Budgets" and issue 11. */
const BUDGETS = { medianMs: 100, p95Ms: 300, perMinute: 1, rssMb: 300, p99Ratio: 2, fanOutMs: 1000 };

const { values: opts } = parseArgs({
  options: {
    tabs: { type: 'string', default: '5' },
    triggers: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '60' },
    streams: { type: 'string', default: '10000' },
    subscribers: { type: 'string', default: '1000' },
    database: { type: 'string' },
    'server-only': { type: 'boolean', default: false },
    'fan-out-only': { type: 'boolean', default: false },
  },
});
const DATABASE = opts.database ? 'PostgreSQL' : 'SQLite';
const TABS = Number(opts.tabs);
const TRIGGERS = Number(opts.triggers);
const SECONDS = Number(opts.seconds);
const STREAMS = Number(opts.streams);
const SUBSCRIBERS = Number(opts.subscribers);
if (!opts['server-only'] && !existsSync(SCRIPT)) {
  console.error('dist/notif-inbox.min.js is missing: run npm run build first');
  process.exit(2);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const started = Date.now();
const log = (line) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}`);
const cleanup = [];
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/** A fresh database on the --database server, dropped at the end; undefined on SQLite. */
async function database() {
  if (!opts.database) return undefined;
  const { default: pg } = await import('pg');
  const name = `notif_bench_live_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: opts.database });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  cleanup.push(async () => {
    const c = new pg.Client({ connectionString: opts.database });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`).finally(() => c.end());
  });
  const url = new URL(opts.database);
  url.pathname = `/${name}`;
  return url.href;
}

async function service(name) {
  const s = await startService({ key: KEY, tenant: 'bench/live', name, db: await database(), built: true });
  cleanup.push(s.stop);
  const call = async (method, path, body) => {
    const res = await fetch(s.url + path, { method, headers: { authorization: `ApiKey ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  await call('POST', '/v2/workflows', { workflowId: 'note', name: 'Note', steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: '{{payload.title}}', body: 'Live bench.' } }] });
  return { ...s, call };
}

async function listen(server) {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(async () => {
    server.closeAllConnections?.();
    await new Promise((r) => server.close(r));
  });
  return `http://127.0.0.1:${server.address().port}`;
}

// ---- 1 and 2: tabs of one browser ----

async function browserFigures() {
  const svc = await service('notif-bench-live-');
  await svc.call('POST', '/v2/subscribers', { subscriberId: 'ada' });
  const atService = [];
  const to = new URL(svc.url);
  const proxyUrl = await listen(
    createServer((req, res) => {
      atService.push({ t: Date.now(), method: req.method, path: req.url });
      const upstream = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, host: to.host } }, (reply) => {
        res.writeHead(reply.statusCode, reply.headers);
        reply.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    }),
  );
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>live bench</title><link rel="icon" href="data:,">
<script>window.seen = {}; addEventListener('notif-unseen-count-change', (e) => e.target.updateComplete.then(() => (window.seen[e.detail.count] ??= Date.now())));</script>
<script type="module" src="/dist/notif-inbox.min.js"></script></head>
<body><notif-bell base-url="${proxyUrl}" subscriber-id="ada" api-key="${KEY}"></notif-bell></body></html>`;
  const pageUrl =
    (await listen(
      createServer((req, res) => {
        if (req.url === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(page);
        if (req.url === '/dist/notif-inbox.min.js') return createReadStream(SCRIPT).pipe(res.writeHead(200, { 'content-type': 'text/javascript' }));
        // The files the script tag loads on demand, beside it.
        if (/^\/dist\/[\w-]+\.min\.js$/.test(req.url) && existsSync(join(ROOT, req.url))) {
          return createReadStream(join(ROOT, req.url)).pipe(res.writeHead(200, { 'content-type': 'text/javascript' }));
        }
        res.writeHead(404).end();
      }),
    )) + '/';

  const dir = mkdtempSync(join(tmpdir(), 'notif-bench-chromium-'));
  const child = spawn(CHROMIUM_PATH, [...CHROMIUM_ARGS, '--remote-debugging-port=0', `--user-data-dir=${dir}`, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
  cleanup.push(async () => {
    child.kill('SIGKILL');
    await sleep(300);
    rmSync(dir, { recursive: true, force: true });
  });
  let output = '';
  const ws = await new Promise((ok, fail) => {
    child.stderr.setEncoding('utf8').on('data', (c) => {
      const m = /DevTools listening on (ws:\/\/\S+)/.exec((output += c));
      if (m) ok(m[1]);
    });
    child.once('exit', () => fail(new Error(output)));
  });
  const browser = await chromium.connectOverCDP(ws, { noDefaults: true });
  const context = browser.contexts()[0];
  const cdp = await browser.newBrowserCDPSession();
  const tabs = [];
  for (let i = 0; i < TABS; i++) {
    const next = context.waitForEvent('page');
    await cdp.send('Target.createTarget', { url: pageUrl, newWindow: true });
    const p = await next;
    await p.waitForFunction(() => window.seen[0] !== undefined || document.querySelector('notif-bell')?.shadowRoot);
    tabs.push(p);
  }
  const states = await Promise.all(tabs.map((p) => p.evaluate(() => document.visibilityState)));
  if (states.some((s) => s !== 'visible')) throw new Error(`not every tab is visible: ${states}`);
  await sleep(2000);
  const streams = atService.filter((r) => r.method === 'GET' && r.path.includes('/notifications/stream')).length;
  log(`${TABS} tabs open (visible), ${streams} stream request(s) reached the service (besides its CORS preflight)`);

  // 1. Trigger to badge.
  const latencies = [];
  for (let k = 1; k <= TRIGGERS; k++) {
    const t0 = Date.now();
    await svc.call('POST', '/v1/events/trigger', { name: 'note', to: 'ada', payload: { title: `n${k}` } });
    const times = await Promise.all(tabs.map((p) => p.waitForFunction((k) => window.seen[k], k, { timeout: 10_000 }).then((h) => h.jsonValue())));
    for (const t of times) latencies.push(t - t0);
    await sleep(50);
  }
  latencies.sort((a, b) => a - b);
  const median = quantile(latencies, 0.5);
  const p95 = quantile(latencies, 0.95);

  // 2. Idle requests per minute.
  log(`idle: counting requests reaching the service for ${SECONDS} s`);
  await sleep(2000);
  const t0 = Date.now();
  await sleep(SECONDS * 1000);
  const idle = atService.filter((r) => r.t >= t0).length;
  const perMinute = (idle * 60) / SECONDS;
  await browser.close().catch(() => {});
  return { median, p95, worst: latencies.at(-1), samples: latencies.length, perMinute, idle };
}

// ---- 3 and 4: many streams on one process ----

/**
 * Opens a stream for `subscriberId`; `onEvent` is called once per message event. A 503 (the service
 * under pressure, say while it closes thousands of streams) is tried again after its Retry-After, as
 * the elements do.
 */
let retried = 0;
async function openStream(url, agent, subscriberId, onEvent) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await openOnce(url, agent, subscriberId, onEvent);
    } catch (err) {
      if (!err.retryAfter || attempt === 5) throw err;
      retried++;
      await sleep(err.retryAfter * 1000);
    }
  }
}

function openOnce(url, agent, subscriberId, onEvent) {
  return new Promise((ok, fail) => {
    const req = httpRequest(`${url}/v1/subscribers/${subscriberId}/notifications/stream`, { agent, headers: { authorization: `ApiKey ${KEY}` } }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return fail(Object.assign(new Error(`stream ${subscriberId}: ${res.statusCode}`), { retryAfter: res.statusCode === 503 && Number(res.headers['retry-after'] ?? 1) }));
      }
      res.setEncoding('utf8');
      let first = true;
      res.on('data', (chunk) => {
        if (first && chunk.includes('"count":')) (first = false), ok(req);
        if (onEvent && chunk.includes('"message":')) onEvent();
      });
      res.on('error', () => {});
    });
    req.on('error', fail);
    req.end();
  });
}

const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

async function unseenLoad(url, seconds = 10) {
  const r = await autocannon({
    url: `${url}/v1/subscribers/s0/notifications/unseen`,
    headers: { authorization: `ApiKey ${KEY}` },
    connections: 16,
    duration: seconds,
  });
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

async function serverFigures() {
  const svc = await service('notif-bench-live-streams-');
  const pid = svc.pid;
  for (let i = 0; i < SUBSCRIBERS; i += 100) {
    await svc.call('POST', '/v1/events/trigger', { name: 'note', to: Array.from({ length: 100 }, (_, j) => `s${i + j}`), payload: { title: 'first' } });
  }
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const rssBefore = rssMb(pid);
  if (opts['fan-out-only']) return { rssBefore, ...(await fanOut(svc, agent)) };
  const bare = await unseenLoad(svc.url);
  log(`unseen count without streams: ${bare.rps.toFixed(0)} req/s, p99 ${bare.p99} ms; RSS ${rssBefore.toFixed(0)} MB`);

  // 3. Idle streams.
  const held = [];
  for (let i = 0; i < STREAMS; i += 200) {
    held.push(...(await Promise.all(Array.from({ length: Math.min(200, STREAMS - i) }, (_, j) => openStream(svc.url, agent, `s${(i + j) % SUBSCRIBERS}`)))));
  }
  await sleep(2000);
  const rssStreams = rssMb(pid);
  log(`${held.length} streams open; RSS ${rssStreams.toFixed(0)} MB`);
  const loaded = await unseenLoad(svc.url);
  log(`unseen count with ${held.length} streams: ${loaded.rps.toFixed(0)} req/s, p99 ${loaded.p99} ms`);
  for (const req of held) req.destroy();
  // Closing 10,000 streams at once keeps the service busy a moment (its overload protection answers
  // 503 meanwhile): the fan-out is measured once it answers at once again.
  await sleep(1000);
  for (let settled = 0, i = 0; settled < 5 && i < 300; i++) {
    const t = Date.now();
    const res = await fetch(`${svc.url}/v1/subscribers/s0/notifications/unseen`, { headers: { authorization: `ApiKey ${KEY}` } });
    await res.arrayBuffer();
    settled = res.ok && Date.now() - t < 50 ? settled + 1 : 0;
    await sleep(100);
  }
  return { rssBefore, rssStreams, streams: held.length, bare, loaded, ...(await fanOut(svc, agent)) };
}

async function fanOut(svc, agent) {
  // 4. Fan-out: one stream per subscriber, then all of them triggered at once.
  let told = 0;
  let last = 0;
  const fan = [];
  for (let i = 0; i < SUBSCRIBERS; i += 200) {
    fan.push(...(await Promise.all(Array.from({ length: Math.min(200, SUBSCRIBERS - i) }, (_, j) => openStream(svc.url, agent, `s${i + j}`, () => ((last = Date.now()), told++))))));
  }
  await sleep(500);
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: SUBSCRIBERS / 100 }, (_, i) =>
      svc.call('POST', '/v1/events/trigger', { name: 'note', to: Array.from({ length: 100 }, (_, j) => `s${i * 100 + j}`), payload: { title: 'fan' } }),
    ),
  );
  const accepted = Date.now() - t0;
  for (let i = 0; i < 100 && told < SUBSCRIBERS; i++) await sleep(100);
  for (const req of fan) req.destroy();
  return { told, fanOutMs: last - t0, accepted };
}

async function main() {
  const b = opts['server-only'] ? undefined : await browserFigures();
  const s = await serverFigures();
  const ok = (pass) => (pass ? 'ok' : 'OVER BUDGET');
  const ratio = s.loaded && s.loaded.p99 / Math.max(1, s.bare.p99);
  console.log(`
live (${new Date().toISOString().slice(0, 10)}, ${DATABASE}, one service process)${!b ? '' : `
  trigger to badge, ${TABS} tabs x ${TRIGGERS} triggers (${b.samples} badges): median ${b.median} ms, p95 ${b.p95} ms, worst ${b.worst} ms   ${ok(b.median <= BUDGETS.medianMs && b.p95 <= BUDGETS.p95Ms)} (budget median <= ${BUDGETS.medianMs}, p95 <= ${BUDGETS.p95Ms})
  idle requests per minute, ${TABS} tabs, feed closed: ${b.perMinute.toFixed(2)} (${b.idle} in ${SECONDS} s)   ${ok(b.perMinute <= BUDGETS.perMinute)} (budget <= ${BUDGETS.perMinute})`}
  ${!s.loaded ? '(idle streams skipped: --fan-out-only)' : `${s.streams} idle streams: service RSS ${s.rssStreams.toFixed(0)} MB (${s.rssBefore.toFixed(0)} MB before)   ${ok(s.rssStreams <= BUDGETS.rssMb)} (budget <= ${BUDGETS.rssMb} MB)
    unseen count under load (16 connections, 10 s): p99 ${s.loaded.p99} ms with the streams, ${s.bare.p99} ms without (x${ratio.toFixed(2)}); ${s.loaded.rps.toFixed(0)} vs ${s.bare.rps.toFixed(0)} req/s   ${ok(ratio <= BUDGETS.p99Ratio)} (budget x${BUDGETS.p99Ratio})`}
  ${SUBSCRIBERS} connected subscribers triggered at once: ${s.told} streams told, the last ${s.fanOutMs} ms after the triggers were sent, ${s.fanOutMs - s.accepted} ms after they were answered (writing 1,000 messages took ${s.accepted} ms)   ${ok(s.told === SUBSCRIBERS && s.fanOutMs <= BUDGETS.fanOutMs)} (budget every stream within ${BUDGETS.fanOutMs} ms)${retried ? `
  (${retried} stream requests answered 503, under pressure, and tried again after Retry-After)` : ''}`);
}

try {
  await main();
} finally {
  for (const c of cleanup.reverse()) await c().catch(() => {});
}
process.exit(0);
