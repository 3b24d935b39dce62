import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

// SQLite's write-ahead log is copied back into the database file by a checkpoint. By default the
// connection that commits runs one whenever the log has passed 1,000 pages: the copy and its
// fsyncs then run inside that commit, on the event loop, holding every request for tens to
// hundreds of milliseconds on a busy disk (a trigger's commits took 40 to 330 ms on a loaded
// machine where their statements took 10). Here a worker thread with a connection of its own
// (wal-checkpointer.js) checkpoints instead, a little and often, and the service's connection
// never does.

/** How often the worker checkpoints what the log holds. */
export const CHECKPOINT_EVERY_MS = 250;
/** How long the worker's connection waits for a lock another connection holds. */
const BUSY_TIMEOUT_MS = 5000;
/** SQLite's own threshold (pages), for a connection left to checkpoint by itself. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

export interface Checkpointer {
  /** Checkpoints once more and ends the worker; the service's connection may close after. */
  stop(): Promise<void>;
}

/**
 * Takes the checkpoints of the database at `path` off `sqlite`'s connection (its automatic ones
 * turned off) into a worker thread. Should the worker not start, or fail later, the connection
 * checkpoints by itself again, as SQLite does by default.
 */
export async function startCheckpointer(sqlite: SQLite.Database, path: string): Promise<Checkpointer> {
  const worker = new Worker(new URL('./wal-checkpointer.js', import.meta.url), {
    workerData: { path, everyMs: CHECKPOINT_EVERY_MS, busyTimeoutMs: BUSY_TIMEOUT_MS },
  });
  // A service that ends without closing its database is not kept alive by its checkpoints.
  worker.unref();
  let stopping = false;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const started = await new Promise<boolean>((resolve) => {
    worker.once('message', () => resolve(true));
    worker.once('error', () => resolve(false));
    worker.once('exit', () => resolve(false));
  });
  worker.on('error', (err) => console.error('the WAL checkpointer failed; the database connection checkpoints by itself again:', err));
  worker.once('exit', () => {
    if (!stopping && sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
  });
  if (started) sqlite.pragma('wal_autocheckpoint = 0');
  return {
    async stop() {
      stopping = true;
      // Held open until the worker's last checkpoint is done.
      worker.ref();
      if (started) worker.postMessage('stop');
      await exited;
    },
  };
}
