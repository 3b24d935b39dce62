import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error a plain .mjs module without declarations
import { BUDGETS, measureDist } from '../../bench/size.mjs';

// DESIGN.md's size budgets, on the built dist/ (npm run test:build builds it first). Each is a
// budget, not a ceiling: a build may grow within it.
type Figure = { raw: number; gzip: number; brotli: number };
type Chunk = Figure & { file: string; lazy: boolean };
const { scriptTag, es }: {
  scriptTag: { first: Figure & { file: string }; files: (Figure & { file: string })[]; all: Figure };
  es: { chunks: Chunk[]; entry: Figure; all: Figure; largest: number };
} = await measureDist();
console.log(
  `# script tag: first file ${scriptTag.first.gzip} B gzip, everything ${scriptTag.all.gzip} B gzip (${scriptTag.files.map((f) => f.file).join(', ')}); ` +
    `ES build: entry's static chunks ${es.entry.gzip} B gzip, every chunk ${es.all.gzip} B gzip (the largest ${es.largest} B)`,
);

const within = (gzip: number, budget: number) => assert.ok(gzip <= budget, `${gzip} B gzip, over by ${gzip - budget} B`);

test(`script tag: the first file a page loads (Lit inside) <= ${BUDGETS.scriptTagFirst} B gzip`, () => {
  assert.equal(scriptTag.first.file, 'notif-inbox.min.js');
  within(scriptTag.first.gzip, BUDGETS.scriptTagFirst);
});

test(`script tag: everything it may load <= ${BUDGETS.scriptTagAll} B gzip`, () => {
  // The preferences are a file of their own, loaded on demand (and measured here with the first file).
  assert.ok(scriptTag.files.some((f) => f.file === 'notif-preferences.min.js'), 'the preferences file is among those it may load');
  within(scriptTag.all.gzip, BUDGETS.scriptTagAll);
});

test(`ES build bundled by esbuild (code splitting, Lit external): the entry's static chunks <= ${BUDGETS.esEntry} B gzip`, () => {
  assert.ok(es.chunks.some((chunk) => chunk.lazy), 'the lazy parts (the preferences, custom rendering) are chunks of their own');
  within(es.entry.gzip, BUDGETS.esEntry);
});

test(`ES build bundled by esbuild: every chunk together, the lazy ones included, <= ${BUDGETS.esAll} B gzip`, () => {
  // (Each chunk is compressed on its own, as a browser downloads it, and the figures added up.)
  assert.equal(es.all.gzip, es.chunks.reduce((sum, chunk) => sum + chunk.gzip, 0));
  within(es.all.gzip, BUDGETS.esAll);
});
