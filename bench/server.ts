/**
 * Server throughput: requests per second of the feed (limit 20) and the unseen count on 100,000
 * in-app messages over 1,000 subscribers (SQLite), next to a bare Node `http` server answering `{}`,
 * on the same machine in the same run. Servers run in their own processes; autocannon loads them
 * from this one. Every feed page is read from the database and put together anew (the service keeps
 * no answers).
 *
 *   npm run bench:server                      # 10 s per target
 *   BENCH_SECONDS=5 BENCH_MESSAGES=20000 npm run bench:server
 *   BENCH_DATABASE_URL=postgres://.../empty_db npm run bench:server   # on PostgreSQL (an empty database)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { openDatabase } from '../server/src/db/index.ts';
import { registerKey } from '../server/src/db/keys.ts';
import { newId } from '../server/src/ids.ts';
import { newSubscriberRow } from '../server/src/engine/subscribers.ts';
// @ts-expect-error a plain .mjs module without declarations
import { serviceCommand } from '../scripts/service.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100_000);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const KEY = 'bench_key';
/** What the elements ask for (src/store/feed-pages.ts FEED_FIELDS): the feed's projection. */
const FEED_FIELDS = '_id,subject,content,createdAt,read,seen,avatar,cta,templateIdentifier,transactionId,payload';
/** DESIGN.md's budgets (issue 12): share of the bare server's requests/s, and bytes on the wire. */
const BUDGETS: Record<string, { share?: number; bytes?: number }> = {
  'feed, limit 20': { share: 25 },
  'feed, limit 20, as the elements ask (fields, br)': { share: 25, bytes: 8 * 1024 },
  'unseen count': { share: 50 },
};

export async function makeDatabase(path: string) {
  const started = Date.now();
  const db = await openDatabase({ location: path });
  const tenant = await registerKey(db, KEY, 'bench', 'production');
  const now = new Date().toISOString();
  const workflowId = newId();
  const stepId = newId();
  await db.kysely
    .insertInto('workflows')
    .values({
      id: workflowId,
      environment_id: tenant.environmentId,
      organization_id: tenant.organizationId,
      workflow_id: 'comment-added',
      name: 'Comment added',
      description: 'Someone commented on your document',
      steps: JSON.stringify([
        {
          _id: stepId,
          name: 'In-app',
          type: 'in_app',
          controlValues: {
            subject: '{{payload.author}} commented',
            body: '{{payload.comment}}',
            primaryAction: { label: 'Reply' },
            secondaryAction: { label: 'Dismiss' },
          },
        },
      ]),
      tags: '[]',
      active: 1,
      critical: 0,
      created_at: now,
      updated_at: now,
    })
    .execute();

  const subscriberIds: string[] = [];
  const rows = [];
  for (let i = 0; i < SUBSCRIBERS; i++) {
    const id = newId();
    subscriberIds.push(id);
    rows.push(
      newSubscriberRow(tenant, `user-${i}`, now, { id, first_name: `First${i}`, last_name: `Last${i}`, email: `user${i}@example.com`, locale: 'en' }),
    );
  }
  for (let i = 0; i < rows.length; i += 200) await db.kysely.insertInto('subscribers').values(rows.slice(i, i + 200)).execute();

  const start = Date.now() - 14 * 24 * 3600 * 1000;
  await db.kysely.transaction().execute(async (trx) => {
    let batch = [];
    for (let i = 0; i < MESSAGES; i++) {
      const created = new Date(start + Math.floor((i / MESSAGES) * 14 * 24 * 3600 * 1000)).toISOString();
      const read = i % 5 === 0 ? 1 : 0;
      const seen = read || i % 3 === 0 ? 1 : 0;
      batch.push({
        id: newId(Date.parse(created)),
        environment_id: tenant.environmentId,
        organization_id: tenant.organizationId,
        subscriber_id: subscriberIds[i % SUBSCRIBERS]!,
        notification_id: newId(),
        template_id: workflowId,
        message_template_id: stepId,
        template_identifier: 'comment-added',
        transaction_id: newId(),
        channel: 'in_app',
        subject: `Author ${i % 37} commented`,
        content: JSON.stringify([{ type: 'text', content: `This is comment number ${i}, with a little more text to be realistic.` }]),
        avatar: null,
        cta: JSON.stringify({
          type: 'redirect',
          data: { url: `/documents/${i}` },
          action: { status: 'pending', buttons: [{ type: 'primary', content: 'Reply' }, { type: 'secondary', content: 'Dismiss' }] },
        }),
        feed_id: null,
        feed_identifier: null,
        read,
        seen,
        last_read_date: read ? created : null,
        last_seen_date: seen ? created : null,
        status: 'sent',
        error_id: null,
        error_text: null,
        payload: JSON.stringify({ author: `Author ${i % 37}`, comment: `comment ${i}`, documentId: i }),
        overrides: '{}',
        context_keys: '[]',
        provider_id: null,
        email: null,
        phone: null,
        device_tokens: null,
        direct_webhook_url: null,
        title: null,
        delivered_at: created,
        created_at: created,
        updated_at: created,
      });
      if (batch.length === 200) {
        await trx.insertInto('messages').values(batch).execute();
        batch = [];
      }
    }
    if (batch.length) await trx.insertInto('messages').values(batch).execute();
  });
  // PostgreSQL: as autovacuum leaves a table that has stopped growing, not as a bulk load does for a
  // minute (visibility map set, so the counts' index-only scans skip the heap; statistics).
  if (db.dialect == 'postgres') {
    await sql`vacuum analyze`.execute(db.kysely);
  }
  await db.close();
  return { seconds: (Date.now() - started) / 1000 };
}

function startProcess(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolveStart, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolveStart({ child, url: m[1]! });
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}: ${out}`)));
  });
}

const BARE = `require('node:http').createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.end('{}');
}).listen(0, '127.0.0.1', function () { console.log('listening on http://127.0.0.1:' + this.address().port); });`;

interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  bytesPerRequest: number;
}

async function loadTarget(name: string, url: string, paths: string[], headers: Record<string, string> = {}): Promise<Result> {
  let i = 0;
  const opts: autocannon.Options = {
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers,
    requests: [
      {
        setupRequest: (req) => {
          req.path = paths[i++ % paths.length]!;
          return req;
        },
      },
    ],
  };
  // Warm up (JIT, SQLite page cache), then measure.
  await autocannon({ ...opts, duration: 2 });
  const r = await autocannon(opts);
  return {
    name,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
    bytesPerRequest: Math.round(r.throughput.total / Math.max(1, r.requests.total)),
  };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'notif-bench-'));
  const dbPath = process.env.BENCH_DATABASE_URL || join(dir, 'bench.db');
  const children: ChildProcess[] = [];
  try {
    console.log(`building ${MESSAGES} messages over ${SUBSCRIBERS} subscribers...`);
    const built = await makeDatabase(dbPath);
    console.log(`database ready in ${built.seconds.toFixed(1)} s`);

    const bare = await startProcess(['-e', BARE]);
    children.push(bare.child);
    const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean); // e.g. --cpu-prof
    // Compiled, as it runs in production (scripts/service.mjs, serviceCommand).
    const command = serviceCommand({ built: true });
    const service = await startProcess([...nodeFlags, ...command, 'serve', '--port', '0', '--db', dbPath, '--no-seed'], {
      NOTIF_API_KEYS: `${KEY}=bench/production`,
    });
    children.push(service.child);

    const auth = { authorization: `ApiKey ${KEY}` };
    const subscribers = Array.from({ length: SUBSCRIBERS }, (_, i) => `user-${i}`);
    // Each subscriber's first page: the full Message, and as the elements ask for it.
    const feedPaths = subscribers.map((s) => `/v1/subscribers/${s}/notifications/feed?limit=20`);
    const askedPaths = subscribers.map((s) => `/v1/subscribers/${s}/notifications/feed?limit=20&fields=${FEED_FIELDS}`);
    const only = process.env.BENCH_ONLY; // e.g. BENCH_ONLY=feed to profile one target, BENCH_ONLY='=feed, limit 20' for that one alone
    const results: Result[] = [];
    const load = (name: string, ...rest: Parameters<typeof loadTarget> extends [string, ...infer R] ? R : never) =>
      !only || (only[0] == '=' ? name == only.slice(1) : name.includes(only)) || name.startsWith('bare') ? loadTarget(name, ...rest).then((r) => void results.push(r)) : Promise.resolve();
    await load('bare node http {}', bare.url, ['/']);
    // The framework's floor: the same process answering its unauthenticated health check.
    await load('service GET /health', service.url, ['/health']);
    const compressed = { ...auth, 'accept-encoding': 'br, gzip' };
    await load('feed, limit 20', service.url, feedPaths, auth);
    // The full Message as a browser (or any HTTP client that takes compression) asks for it.
    await load('feed, limit 20 (br)', service.url, feedPaths, compressed);
    await load('feed, limit 20, as the elements ask (fields, br)', service.url, askedPaths, compressed);
    await load('unseen count', service.url, subscribers.map((s) => `/v1/subscribers/${s}/notifications/unseen`), auth);

    const bareRps = results[0]!.rps;
    console.log(`\n${dbPath.startsWith('postgres') ? 'PostgreSQL' : 'SQLite'}, ${MESSAGES} messages, ${SUBSCRIBERS} subscribers, ${CONNECTIONS} connections, ${SECONDS} s each, ${cpus().length} cores, Node ${process.version}`);
    console.log('| target | req/s | vs bare | p50 ms | p99 ms | bytes/req | errors | budget | verdict |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of results) {
      // (Judged unrounded: 24.5% is not 25%.)
      const share = (r.rps / bareRps) * 100;
      const budget = BUDGETS[r.name];
      const ok = !budget || ((budget.share === undefined || share >= budget.share) && (budget.bytes === undefined || r.bytesPerRequest <= budget.bytes));
      const text = budget ? [budget.share && `>= ${budget.share}% of bare`, budget.bytes && `<= ${budget.bytes} B on the wire`].filter(Boolean).join(', ') : '-';
      console.log(
        `| ${r.name} | ${r.rps} | ${share.toFixed(1)}% | ${r.p50} | ${r.p99} | ${r.bytesPerRequest} | ${r.errors + r.non2xx} | ${text} | ${budget ? (ok ? 'ok' : 'OVER') : ''} |`,
      );
    }
    mkdirSync(join(ROOT, 'bench/out'), { recursive: true });
    writeFileSync(join(ROOT, 'bench/out/server.json'), JSON.stringify({ when: new Date().toISOString(), MESSAGES, SUBSCRIBERS, CONNECTIONS, SECONDS, results }, null, 2));
    const failed = results.filter((r) => r.errors + r.non2xx > 0);
    if (failed.length) {
      console.error(`requests failed: ${failed.map((r) => r.name).join(', ')}`);
      process.exitCode = 1;
    }
  } finally {
    await Promise.all(children.map((c) => new Promise((r) => (c.once('exit', r), c.kill('SIGTERM')))));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
