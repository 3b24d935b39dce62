import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error a plain .mjs module without declarations
import { BUDGETS, measureDist } from '../../bench/size.mjs';

// The size budgets of DESIGN.md, on the built dist/ (npm run test:build builds it first).
const figures: { scriptTag: { gzip: number; brotli: number }; es: { gzip: number; brotli: number } } = await measureDist();
console.log(`# script-tag ${figures.scriptTag.gzip} B gzip / ${figures.scriptTag.brotli} B brotli; ES ${figures.es.gzip} B gzip / ${figures.es.brotli} B brotli`);

test(`script-tag file (dist/notif-inbox.min.js, Lit inside) <= ${BUDGETS.scriptTag} B gzip`, () => {
  assert.ok(figures.scriptTag.gzip <= BUDGETS.scriptTag, `${figures.scriptTag.gzip} B gzip, over by ${figures.scriptTag.gzip - BUDGETS.scriptTag} B`);
});

test(`ES build (Lit external) <= ${BUDGETS.es} B gzip`, () => {
  assert.ok(figures.es.gzip <= BUDGETS.es, `${figures.es.gzip} B gzip, over by ${figures.es.gzip - BUDGETS.es} B`);
});
