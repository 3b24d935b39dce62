/**
 * A large trigger must not stall the service: 10 concurrent triggers x 100 recipients of a workflow
 * of 20 in-app steps (20,000 messages), while a client asks for /health every 10 ms (one request at a
 * time). Prints how long the triggers took and /health's median, p99 and worst latency during them.
 *
 *   npm run bench:large-trigger
 *   BENCH_TRIGGERS=10 BENCH_RECIPIENTS=100 BENCH_STEPS=20 npm run bench:large-trigger
 *   TEST_DATABASE_URL=postgres://... npm run bench:large-trigger     (on PostgreSQL)
 */
import { performance } from 'node:perf_hooks';
import { TestServer } from '../test/server/helpers.ts';

const TRIGGERS = Number(process.env.BENCH_TRIGGERS ?? 10);
const RECIPIENTS = Number(process.env.BENCH_RECIPIENTS ?? 100);
const STEPS = Number(process.env.BENCH_STEPS ?? 20);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main() {
  const server = new TestServer();
  await server.start();
  try {
    const wf = await server.post('/v2/workflows', {
      workflowId: 'bench-large',
      name: 'Large',
      steps: Array.from({ length: STEPS }, (_, i) => ({ name: `step ${i}`, type: 'in_app', controlValues: { body: `Step ${i} for {{subscriber.subscriberId}}` } })),
    });
    if (wf.status !== 201 && wf.status !== 200) throw new Error(`workflow: ${wf.status} ${JSON.stringify(wf.body)}`);
    // Warm up: the first requests compile schemas and fill caches.
    for (let i = 0; i < 20; i++) await fetch(new URL('/health', server.url)).then((r) => r.text());

    const health: number[] = [];
    let loading = true;
    const prober = (async () => {
      while (loading) {
        const t0 = performance.now();
        await fetch(new URL('/health', server.url)).then((r) => r.text());
        health.push(performance.now() - t0);
        await sleep(10);
      }
    })();
    const t0 = performance.now();
    const replies = await Promise.all(
      Array.from({ length: TRIGGERS }, (_, t) =>
        server.post('/v1/events/trigger', {
          name: 'bench-large',
          to: Array.from({ length: RECIPIENTS }, (_, r) => `large-${t}-${r}`),
        }),
      ),
    );
    const took = performance.now() - t0;
    loading = false;
    await prober;
    const failed = replies.filter((r) => r.status !== 201);
    if (failed.length > 0) throw new Error(`${failed.length} triggers failed: ${failed[0]!.status} ${JSON.stringify(failed[0]!.body)}`);

    const sorted = [...health].sort((a, b) => a - b);
    const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
    console.log(
      `${TRIGGERS} triggers x ${RECIPIENTS} recipients x ${STEPS} in-app steps (${TRIGGERS * RECIPIENTS * STEPS} messages) on ${server.postgres ? 'PostgreSQL' : 'SQLite'}: ${(took / 1000).toFixed(2)} s`,
    );
    console.log(
      `/health during them: ${sorted.length} requests, median ${fmt(percentile(sorted, 50))}, p99 ${fmt(percentile(sorted, 99))}, worst ${fmt(sorted.at(-1)!)}`,
    );
  } finally {
    await server.dispose();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
