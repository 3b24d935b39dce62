// @ts-check
// The worker thread of wal-checkpoints.ts: a connection of its own to the database that checkpoints
// its write-ahead log every `everyMs` until told to stop, then once more. Plain JavaScript, so that
// Node starts it as it is, from the sources as from the build (Node 20 gives a worker thread none of
// the TypeScript loader the service may run under).
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

/** @type {{ path: string, everyMs: number, busyTimeoutMs: number }} */
const { path, everyMs, busyTimeoutMs } = workerData;
const port = parentPort;
if (!port) throw new Error('wal-checkpointer.js runs as a worker thread (wal-checkpoints.ts starts it)');

const database = new SQLite(path);
database.pragma(`busy_timeout = ${busyTimeoutMs}`);
// A passive checkpoint waits for no one: it copies what no reader still needs, while the service's
// connection goes on reading and writing.
const checkpoint = () => database.pragma('wal_checkpoint(PASSIVE)');
const timer = setInterval(checkpoint, everyMs);

port.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpoint();
  database.close();
  port.close();
});
port.postMessage('ready');
