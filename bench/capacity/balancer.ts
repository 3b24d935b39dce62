// A small round-robin TCP balancer (node:net) in front of several service processes: each accepted
// connection goes to the next backend in turn, and its bytes are piped both ways until either side
// closes. HTTP passes through untouched, so a stream and a keep-alive connection stay on the
// backend they were given, as behind a layer-4 balancer in production.
//
//   node --import tsx bench/capacity/balancer.ts [--workers K] 127.0.0.1:4001 127.0.0.1:4002
//
// It prints `listening on http://127.0.0.1:<port>` once ready. A connection costs it two open files
// (the client's and the backend's): past what one process may open, --workers K runs K processes
// (node:cluster) that share the port, each balancing the connections it is handed. Run with an IPC
// channel (the capacity bench does), it answers the message 'stats' with the connections it holds
// and has given to each backend, over all its workers.
import cluster from 'node:cluster';
import net from 'node:net';
import { parseArgs } from 'node:util';

export interface Backend {
  host: string;
  port: number;
}

export interface BalancerStats {
  backends: { address: string; open: number; total: number; failed: number }[];
}

export interface Balancer {
  port: number;
  stats(): BalancerStats;
  close(): Promise<void>;
}

/** Starts the balancer on 127.0.0.1 (port 0: any free one). */
export function startBalancer(backends: Backend[], port = 0): Promise<Balancer> {
  const counters = backends.map((b) => ({ address: `${b.host}:${b.port}`, open: 0, total: 0, failed: 0 }));
  let next = 0;
  const server = net.createServer({ noDelay: true, pauseOnConnect: true }, (client) => {
    const index = next;
    next = (next + 1) % backends.length;
    const counter = counters[index]!;
    counter.open++;
    counter.total++;
    const backend = net.connect({ ...backends[index]!, noDelay: true });
    let connected = false;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      counter.open--;
      client.destroy();
      backend.destroy();
    };
    backend.once('connect', () => {
      connected = true;
      client.pipe(backend);
      backend.pipe(client);
      client.resume();
    });
    backend.on('error', () => {
      if (!connected) counter.failed++;
      close();
    });
    client.on('error', close);
    client.on('close', close);
    backend.on('close', close);
  });
  // Many streams connect at once while the load ramps up.
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => {
      const address = server.address() as net.AddressInfo;
      resolve({
        port: address.port,
        stats: () => ({ backends: counters.map((c) => ({ ...c })) }),
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

function parseBackend(text: string): Backend {
  const match = /^(.+):(\d+)$/.exec(text);
  if (!match) throw new Error(`a backend is host:port, not '${text}'`);
  return { host: match[1]!, port: Number(match[2]) };
}

/** Adds `more`'s counts to `into` (the workers' stats, backend by backend). */
function addStats(into: BalancerStats, more: BalancerStats) {
  more.backends.forEach((backend, i) => {
    const total = into.backends[i];
    if (!total) into.backends[i] = { ...backend };
    else {
      total.open += backend.open;
      total.total += backend.total;
      total.failed += backend.failed;
    }
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { workers: { type: 'string', default: '1' } } });
  const backends = positionals.map(parseBackend);
  if (backends.length === 0) {
    console.error('usage: balancer.ts [--workers K] host:port [host:port ...]');
    process.exit(2);
  }
  const workers = Math.max(1, Number(values.workers));
  if (workers > 1 && cluster.isPrimary) {
    // Workers listening on port 0 share one port (node:cluster); each says which.
    const forked = Array.from({ length: workers }, () => cluster.fork());
    const ports = await Promise.all(forked.map((worker) => new Promise<number>((resolve) => worker.once('message', (m: { port: number }) => resolve(m.port)))));
    console.log(`listening on http://127.0.0.1:${ports[0]}`);
    process.on('message', async (message) => {
      if (message !== 'stats') return;
      const all: BalancerStats = { backends: [] };
      for (const worker of forked) {
        worker.send('stats');
        addStats(all, await new Promise<BalancerStats>((resolve) => worker.once('message', (m: { stats: BalancerStats }) => resolve(m.stats))));
      }
      process.send?.({ stats: all });
    });
    // Workers first: one still handed a connection after the primary left fails writing to it.
    process.on('SIGTERM', async () => {
      const exits = forked.map((worker) => {
        if (worker.isDead()) return Promise.resolve();
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        worker.process.kill('SIGTERM');
        return exited;
      });
      await Promise.all(exits);
      process.exit(0);
    });
  } else {
    const balancer = await startBalancer(backends);
    if (cluster.isWorker) process.send?.({ port: balancer.port });
    else console.log(`listening on http://127.0.0.1:${balancer.port}`);
    process.on('message', (message) => {
      if (message === 'stats') process.send?.({ stats: balancer.stats() });
    });
    process.on('SIGTERM', () => process.exit(0));
    // A worker whose primary is gone has nobody to hand it connections: it leaves too.
    if (cluster.isWorker) process.on('disconnect', () => process.exit(0));
  }
}
