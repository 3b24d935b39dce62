// The stream's SSE layer, written by hand (server/src/inbox/stream.ts, served by routes/stream.ts) against @fastify/sse, on the
// same Fastify version in the same run: memory per idle stream, and the time to tell every stream one
// event. Both servers do what the service's stream does at this layer: a `retry:` hint on connect, a
// heartbeat comment every 25 s, an `id:` and one `data:` line of JSON (carrying the id and the
// message, the stream's one kind of event) per event, serialized for each
// stream (each subscriber's message is its own), and cleanup on close.
//
//   node bench/sse.mjs                    installs @fastify/sse (latest) and this project's Fastify
//                                         into a temporary directory, prints the table, removes it
//   BENCH_STREAMS=2000 BENCH_ROUNDS=10 node bench/sse.mjs
//   node bench/sse.mjs @fastify/sse@0.6.0 pins the plugin's version
//
// Each server runs in its own process (node --expose-gc); this process holds the streams over raw
// sockets and times a POST /publish until every socket has read the event. The two are run in turns
// (hand, plugin, hand, plugin, ...) so that a load on the machine falls on both.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';

const ROOT = resolve(import.meta.dirname, '..');
const STREAMS = Number(process.env.BENCH_STREAMS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const plugin = process.argv[2] ?? '@fastify/sse';
const fastifyVersion = createRequire(join(ROOT, 'server/package.json'))('fastify/package.json').version;

const SERVER = `
const Fastify = require('fastify');
const mode = process.argv[2];
const app = Fastify();
const open = new Set();
const MAX_BUFFERED = 1 << 20;
let seq = 0;
if (mode === 'hand') {
  // As routes/stream.ts does it: the reply hijacked, its head and writes made on the raw response.
  app.get('/stream', async (request, reply) => {
    const res = reply.raw;
    let heartbeat;
    const send = (text) => {
      res.write(text);
      if (res.writableLength > MAX_BUFFERED) res.destroy();
    };
    const stream = { tell: (id, message) => send('id: ' + id + '\\ndata: ' + JSON.stringify({ id, message }) + '\\n\\n') };
    const end = () => {
      clearInterval(heartbeat);
      open.delete(stream);
      if (!res.destroyed) res.end();
    };
    res.on('close', end);
    open.add(stream);
    reply.hijack();
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
    res.write('retry: 1000\\n\\n');
    heartbeat = setInterval(() => send(':\\n\\n'), 25000);
  });
} else {
  app.register(require('@fastify/sse'), { heartbeatInterval: 25000 });
  app.register(async (app) => {
    app.get('/stream', { sse: 'only' }, async (request, reply) => {
      reply.sse.keepAlive();
      const stream = { tell: (id, message) => reply.sse.send({ id, data: { id, message } }) };
      reply.sse.onClose(() => open.delete(stream));
      open.add(stream);
      // (A retry hint alone is refused, "Invalid SSE source type": it goes with an empty data line.)
      await reply.sse.send({ retry: 1000, data: '' });
    });
  });
}
app.post('/publish', async () => {
  seq++;
  const message = { _id: 'm' + seq, subject: 'Ada commented', content: [{ type: 'text', content: 'A comment of some length, about fifty characters.' }], read: false, seen: false, createdAt: new Date().toISOString() };
  const started = process.hrtime.bigint();
  for (const stream of open) stream.tell(String(seq), message);
  return { streams: open.size, ms: Number(process.hrtime.bigint() - started) / 1e6 };
});
app.get('/gc', async () => (global.gc(), {}));
app.listen({ port: 0, host: '127.0.0.1' }).then((address) => console.log('listening on ' + address));
`;

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** One server: its RSS before and with STREAMS open streams, and ROUNDS events told to all of them. */
async function measure(dir, mode) {
  const child = spawn(process.execPath, ['--expose-gc', join(dir, 'server.cjs'), mode], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise((ok, fail) => {
      child.stdout.on('data', (d) => {
        const m = /listening on http:\/\/[^:]+:(\d+)/.exec(String(d));
        if (m) ok(Number(m[1]));
      });
      child.once('exit', (code) => fail(new Error(`${mode} server exited with ${code}`)));
    });
    const call = (method, path) => fetch(`http://127.0.0.1:${port}${path}`, { method }).then((r) => r.json());
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) * 1024;
    await call('GET', '/gc');
    const before = rss();

    let waiting;
    let pending = 0;
    const sockets = [];
    // Opened 50 at a time: each waits for its `retry:` before the next connects.
    await new Promise((opened) => {
      let started = 0;
      let ready = 0;
      const open = () => {
        started++;
        const socket = net.connect(port, '127.0.0.1');
        let text = '';
        let live = false;
        socket.setEncoding('utf8');
        socket.on('data', (chunk) => {
          text += chunk;
          if (!live && text.includes('retry: 1000')) {
            live = true;
            text = '';
            if (++ready === STREAMS) opened();
            else if (started < STREAMS) open();
          }
          if (live && waiting && text.includes('"message":')) {
            text = '';
            if (--pending === 0) waiting();
          }
        });
        socket.write('GET /stream HTTP/1.1\r\nhost: bench\r\naccept: text/event-stream\r\n\r\n');
        sockets.push(socket);
      };
      for (let i = 0; i < Math.min(50, STREAMS); i++) open();
    });
    await call('GET', '/gc');
    const held = rss();

    const told = [];
    const writes = [];
    for (let r = 0; r < ROUNDS; r++) {
      pending = STREAMS;
      const all = new Promise((done) => (waiting = done));
      const started = performance.now();
      const { ms } = await call('POST', '/publish');
      await all;
      waiting = undefined;
      told.push(performance.now() - started);
      writes.push(ms);
    }
    for (const socket of sockets) socket.destroy();
    return { perStreamKB: (held - before) / STREAMS / 1024, rssMB: held / 1048576, toldMs: median(told), writeMs: median(writes) };
  } finally {
    child.kill();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'notif-bench-sse-'));
try {
  console.error(`installing fastify@${fastifyVersion} and ${plugin} into ${dir}...`);
  writeFileSync(join(dir, 'package.json'), '{"private": true}');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', `fastify@${fastifyVersion}`, plugin], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  const installed = JSON.parse(readFileSync(join(dir, 'node_modules/@fastify/sse/package.json'), 'utf8')).version;
  writeFileSync(join(dir, 'server.cjs'), SERVER);
  const results = { hand: [], plugin: [] };
  for (let run = 0; run < RUNS; run++) {
    for (const mode of ['hand', 'plugin']) {
      const r = await measure(dir, mode);
      results[mode].push(r);
      console.error(`run ${run + 1} ${mode}: ${r.perStreamKB.toFixed(1)} KB a stream, every stream told in ${r.toldMs.toFixed(1)} ms (writes ${r.writeMs.toFixed(1)} ms)`);
    }
  }
  const row = (name, rs) =>
    `| ${name} | ${median(rs.map((r) => r.perStreamKB)).toFixed(1)} KB | ${median(rs.map((r) => r.rssMB)).toFixed(0)} MB | ${median(rs.map((r) => r.writeMs)).toFixed(1)} ms | ${median(rs.map((r) => r.toldMs)).toFixed(1)} ms |`;
  console.log(`\n${STREAMS} idle streams, ${ROUNDS} events told to all of them, ${RUNS} runs each (medians), Fastify ${fastifyVersion}, Node ${process.version}`);
  console.log('| SSE layer | RSS a stream | RSS held | the server writes one event to every stream | until every stream has read it |');
  console.log('|---|---:|---:|---:|---:|');
  console.log(row('by hand (routes/stream.ts)', results.hand));
  console.log(row(`@fastify/sse ${installed}`, results.plugin));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
