/**
 * Scheduler lateness: 1,000 delayed jobs on a fresh SQLite server process (triggers of a workflow
 * [delay N s, in_app] to 100 subscribers each), then for every in-app message the lateness =
 * message createdAt - the delay job's due time (jobs.run_at). Prints median, p99 and worst.
 *
 *   npm run bench:scheduler
 *   BENCH_JOBS=5000 BENCH_DELAY_S=5 BENCH_POLL_MS=250 npm run bench:scheduler
 *
 * The due times are spread over the time the triggers take (each request runs 100 subscribers), so
 * the scheduler faces bursts of about 100 jobs due within a few milliseconds of each other.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { TestServer } from '../test/server/helpers.ts';

const ROOT = resolve(import.meta.dirname, '..');
const JOBS = Number(process.env.BENCH_JOBS ?? 1000);
const DELAY_S = Number(process.env.BENCH_DELAY_S ?? 4);
const POLL_MS = process.env.BENCH_POLL_MS;
const BATCH = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main() {
  // A SQLite file of its own, even when TEST_DATABASE_URL is set.
  delete process.env.TEST_DATABASE_URL;
  const server = new TestServer(POLL_MS ? { NOTIF_SCHEDULER_POLL_MS: POLL_MS } : {});
  await server.start();
  try {
    const wf = await server.post('/v2/workflows', {
      workflowId: 'bench-later',
      name: 'Later',
      steps: [
        { name: 'wait', type: 'delay', controlValues: { amount: DELAY_S, unit: 'seconds' } },
        { name: 'inbox', type: 'in_app', controlValues: { body: 'Hello {{subscriber.subscriberId}}' } },
      ],
    });
    if (wf.status !== 201) throw new Error(`workflow: ${wf.status} ${JSON.stringify(wf.body)}`);

    const started = Date.now();
    for (let i = 0; i < JOBS; i += BATCH) {
      const to = Array.from({ length: Math.min(BATCH, JOBS - i) }, (_, j) => `bench-${i + j}`);
      const r = await server.post('/v1/events/trigger', { name: 'bench-later', to, payload: { i } });
      if (r.status !== 201) throw new Error(`trigger: ${r.status} ${JSON.stringify(r.body)}`);
    }
    const triggerMs = Date.now() - started;
    console.log(`scheduled ${JOBS} delayed jobs (delay ${DELAY_S} s) in ${triggerMs} ms`);
    if (triggerMs > DELAY_S * 1000) console.log('warning: the triggers took longer than the delay; the first jobs came due while triggering');

    const db = new SQLite(server.dbPath, { readonly: true });
    const count = db.prepare("SELECT count(*) AS n FROM messages WHERE channel = 'in_app'");
    const deadline = Date.now() + DELAY_S * 1000 + 60_000;
    while ((count.get() as { n: number }).n < JOBS) {
      if (Date.now() > deadline) throw new Error(`only ${(count.get() as { n: number }).n} of ${JOBS} messages arrived`);
      await sleep(100);
    }
    const rows = db
      .prepare(
        `SELECT m.created_at AS createdAt, j.run_at AS runAt FROM messages m
           JOIN jobs j ON j.notification_id = m.notification_id AND j.type = 'delay'
          WHERE m.channel = 'in_app'`,
      )
      .all() as { createdAt: string; runAt: number }[];
    db.close();
    const lateness = rows.map((r) => Date.parse(r.createdAt) - r.runAt).sort((x, y) => x - y);
    const early = lateness.filter((l) => l < 0).length;
    const figures = {
      jobs: lateness.length,
      delaySeconds: DELAY_S,
      pollMs: Number(POLL_MS ?? 250),
      medianMs: percentile(lateness, 50),
      p90Ms: percentile(lateness, 90),
      p99Ms: percentile(lateness, 99),
      worstMs: lateness.at(-1)!,
      bestMs: lateness[0]!,
      early,
      triggerMs,
      cpus: cpus().length,
      node: process.version,
      date: new Date().toISOString(),
    };
    console.log(
      `lateness over ${figures.jobs} jobs: median ${figures.medianMs} ms, p90 ${figures.p90Ms} ms, p99 ${figures.p99Ms} ms, worst ${figures.worstMs} ms` +
        (early ? ` (${early} fired early!)` : ''),
    );
    mkdirSync(resolve(ROOT, 'bench/out'), { recursive: true });
    writeFileSync(resolve(ROOT, 'bench/out/scheduler.json'), JSON.stringify(figures, null, 2) + '\n');
  } finally {
    await server.dispose();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
