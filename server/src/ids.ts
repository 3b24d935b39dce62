import { randomBytes } from 'node:crypto';

// Ids are 24 lowercase hex characters, laid out like a Mongo ObjectId (4 bytes of seconds,
// 5 random bytes fixed per process, a 3-byte counter), so they sort by creation time within a
// process and Novu clients that validate ids accept them.
const processBytes = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

export function newId(now = Date.now()): string {
  counter = (counter + 1) % 0xffffff;
  const seconds = Math.floor(now / 1000).toString(16).padStart(8, '0');
  return seconds + processBytes + counter.toString(16).padStart(6, '0');
}

export function nowIso(): string {
  return new Date().toISOString();
}
