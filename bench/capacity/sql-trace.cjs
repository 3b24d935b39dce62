// Loaded into a service process by the capacity bench's --trace-sql (node --require): times every
// statement the process runs, by its SQL text, without touching the service's code. SQLite
// (better-sqlite3): the time each call blocks the event loop. PostgreSQL (pg): from the query's
// call to its answer (the database's time, the pool's wait and the round trip).
//
// SIGUSR2 starts the window (counts cleared), the next SIGUSR2 ends it and writes the figures, as
// JSON, to NOTIF_BENCH_SQL_TRACE with the pid appended. It costs a clock read and a map update
// per statement: figures from a traced run are for the statements' shares, not for the budget.
'use strict';
const { writeFileSync } = require('node:fs');

const target = process.env.NOTIF_BENCH_SQL_TRACE;
/** A call this long or longer is counted as slow: the budget's 50 ms p99 has room for few of them. */
const SLOW_MS = 20;
const byText = new Map();
let recording = false;
let startedAt = 0;

/** One statement's figures, by its text (whitespace folded). */
function record(text, milliseconds) {
  if (!recording) return;
  const key = String(text).replace(/\s+/g, ' ').trim();
  let entry = byText.get(key);
  if (!entry) byText.set(key, (entry = { calls: 0, totalMs: 0, maxMs: 0, slowCalls: 0 }));
  entry.calls++;
  if (milliseconds >= SLOW_MS) entry.slowCalls++;
  entry.totalMs += milliseconds;
  if (milliseconds > entry.maxMs) entry.maxMs = milliseconds;
}

const now = () => Number(process.hrtime.bigint()) / 1e6;

function traceSqlite() {
  let Database;
  try {
    Database = require('better-sqlite3');
  } catch {
    return;
  }
  const probe = new Database(':memory:');
  const statementPrototype = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  for (const method of ['run', 'get', 'all']) {
    const original = statementPrototype[method];
    statementPrototype[method] = function timed(...args) {
      const started = now();
      try {
        return original.apply(this, args);
      } finally {
        record(this.source, now() - started);
      }
    };
  }
  const exec = Database.prototype.exec;
  Database.prototype.exec = function timedExec(text) {
    const started = now();
    try {
      return exec.call(this, text);
    } finally {
      record(text, now() - started);
    }
  };
}

function tracePostgres() {
  let pg;
  try {
    pg = require('pg');
  } catch {
    return;
  }
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function timedQuery(config, values, callback) {
    const text = typeof config === 'string' ? config : config && config.text;
    const started = now();
    const done = () => record(text, now() - started);
    if (typeof values === 'function') {
      const original = values;
      return query.call(this, config, (...args) => {
        done();
        return original(...args);
      });
    }
    if (typeof callback === 'function') {
      const original = callback;
      return query.call(this, config, values, (...args) => {
        done();
        return original(...args);
      });
    }
    const result = query.call(this, config, values);
    if (result && typeof result.then === 'function') result.then(done, done);
    return result;
  };
}

if (target) {
  traceSqlite();
  tracePostgres();
  process.on('SIGUSR2', () => {
    if (!recording) {
      byText.clear();
      startedAt = now();
      recording = true;
      return;
    }
    recording = false;
    const seconds = (now() - startedAt) / 1000;
    const statements = [...byText.entries()].map(([sql, figures]) => ({ sql, ...figures })).sort((a, b) => b.totalMs - a.totalMs);
    writeFileSync(`${target}.${process.pid}.json`, JSON.stringify({ seconds, statements }, null, 1));
  });
}
