import { randomBytes } from 'node:crypto';

// Ids are 24 lowercase hex characters, laid out like a Mongo ObjectId (4 bytes of seconds,
// 5 random bytes fixed per process, a 3-byte counter), so they sort by creation time within a
// process and Novu clients that validate ids accept them.

const SECONDS_BYTES = 4;
const PROCESS_BYTES = 5;
const COUNTER_BYTES = 3;
/** Hex characters per byte. */
const HEX_PER_BYTE = 2;
/** The counter wraps below 2^24 (three bytes). */
const COUNTER_LIMIT = 0xffffff;
const MS_PER_SECOND = 1000;

const processPart = randomBytes(PROCESS_BYTES).toString('hex');
let counter = randomBytes(COUNTER_BYTES).readUIntBE(0, COUNTER_BYTES);

export function newId(now = Date.now()): string {
  counter = (counter + 1) % COUNTER_LIMIT;
  const seconds = Math.floor(now / MS_PER_SECOND).toString(16).padStart(SECONDS_BYTES * HEX_PER_BYTE, '0');
  return seconds + processPart + counter.toString(16).padStart(COUNTER_BYTES * HEX_PER_BYTE, '0');
}

export function nowIso(): string {
  return new Date().toISOString();
}
