import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error a plain .mjs module without declarations
import { BUDGETS, measureDist } from '../../bench/size.mjs';

// The size budgets of DESIGN.md, on the built dist/ (npm run test:build builds it first).
type Figure = { gzip: number; brotli: number };
const figures: { scriptTag: Figure; es: Figure; preferences: Figure } = await measureDist();
console.log(
  `# script-tag ${figures.scriptTag.gzip} B gzip / ${figures.scriptTag.brotli} B brotli; ES ${figures.es.gzip} B gzip / ${figures.es.brotli} B brotli; preferences +${figures.preferences.gzip} B gzip`,
);

test(`script-tag file (dist/notif-inbox.min.js, Lit inside) <= ${BUDGETS.scriptTag} B gzip`, () => {
  assert.ok(figures.scriptTag.gzip <= BUDGETS.scriptTag, `${figures.scriptTag.gzip} B gzip, over by ${figures.scriptTag.gzip - BUDGETS.scriptTag} B`);
});

test(`ES build (Lit external) <= ${BUDGETS.es} B gzip`, () => {
  assert.ok(figures.es.gzip <= BUDGETS.es, `${figures.es.gzip} B gzip, over by ${figures.es.gzip - BUDGETS.es} B`);
});

test(`notif-inbox/notif-preferences over the ES build <= ${BUDGETS.preferences} B gzip`, () => {
  assert.ok(figures.preferences.gzip <= BUDGETS.preferences, `${figures.preferences.gzip} B gzip, over by ${figures.preferences.gzip - BUDGETS.preferences} B`);
});
