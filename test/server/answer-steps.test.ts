import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';
import { buildAnswer, type Answer } from '../../server/src/inbox/answer.ts';
import { entityTag } from '../../server/src/etag.ts';

// A feed page of large messages (ten 1 MB payloads) is turned into bytes, hashed for its ETag,
// compressed and handed to the connection without holding the event loop for the whole page: in
// pieces of about a megabyte, compressed on the thread pool (server/src/inbox/answer.ts). Before, the whole 10 MB text was
// encoded in one call and copied for the thread pool's hash in another (0.85 s of /health p99 on a
// busy machine, test/server/bounds-trigger.test.ts). The event loop's longest stall while the
// answer is built is compared with what the same bytes take in one synchronous stretch, measured
// here just before, both in this thread's CPU time (Linux: /proc), so neither the machine's speed
// nor its load (another process taking the core for a while) counts.

const MESSAGES = 20;
const MESSAGE_CHARACTERS = 1_000_000;
const ATTEMPTS = 3;
/** The longest stall may be at most this share of the whole page done at once (each piece is a twentieth of it; before, the stall was all of it and more). */
const MOST_OF_ONE_STRETCH = 0.5;
/** /proc's clock ticks a second (USER_HZ). */
const TICKS_PER_SECOND = 100;

/** This (the main) thread's CPU time in ms, from /proc: 10 ms steps. */
function threadCpuMs(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  // Fields after the command's closing parenthesis: state is the 3rd, utime the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** An answer's bytes as the connection would take them: whole, or piece by piece (then put together only when `keep`). */
async function bodyOf(answer: Answer, keep: boolean): Promise<Buffer> {
  if (Buffer.isBuffer(answer.body)) return answer.body;
  const pieces: Buffer[] = [];
  for await (const piece of answer.body) if (keep) pieces.push(piece as Buffer);
  return Buffer.concat(pieces);
}

/** A page's parts as the feed makes them: own text (large payloads spliced in) and embedded objects. */
function pageParts(): string[] {
  const parts: string[] = [];
  for (let i = 0; i < MESSAGES; i++) {
    parts.push(`${i === 0 ? '{"data":[' : ','}{"_id":"m${i}","payload":{"blob":"${randomBytes(MESSAGE_CHARACTERS / 2).toString('hex')}"},"template":`, '{"name":"t"}');
  }
  parts.push('}],"totalCount":10}');
  return parts;
}

/** The most CPU time this thread spent between two turns of the event loop while `work` runs. */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let last = threadCpuMs();
  let running = true;
  const tick = () => {
    const now = threadCpuMs();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  running = false;
  tick();
  return longest;
}

describe("a large page's answer", () => {
  it('is the right bytes and tag, and never holds the event loop for the whole page', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
    const parts = pageParts();
    const text = parts.join('');
    for (const encoding of ['br', undefined] as const) {
      const answer = await buildAnswer(parts, encoding);
      const body = await bodyOf(answer, true);
      const plain = encoding ? brotliDecompressSync(body) : body;
      assert.equal(plain.toString(), text);
      const tag = entityTag(text);
      assert.equal(answer.etag, encoding ? `${tag.slice(0, -1)}-br"` : tag, 'the tag hashes the text, as a small answer\'s does');
    }

    const stalls: number[] = [];
    const stretches: number[] = [];
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      // The page's bytes made and hashed in one synchronous stretch: what one step must stay well under.
      const started = threadCpuMs();
      createHash('sha256').update(Buffer.from(parts.join(''))).digest();
      stretches.push(threadCpuMs() - started);
      stalls.push(await longestStall(async () => bodyOf(await buildAnswer(parts, 'br'), false)));
    }
    const stretch = Math.min(...stretches);
    const stall = Math.min(...stalls);
    t.diagnostic(`CPU ms, the page at once: ${stretches.join(', ')}; the longest stretch between two turns while built: ${stalls.join(', ')}`);
    assert.ok(stall <= stretch * MOST_OF_ONE_STRETCH, `the event loop held ${stall} ms of CPU at once, against ${stretch} ms for the whole page at once`);
  });
});
