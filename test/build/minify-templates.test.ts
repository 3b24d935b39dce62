import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error a plain .mjs module without declarations
import { minifyCss } from '../../scripts/minify-templates.mjs';

// The build's minification of css`` templates (scripts/minify-templates.mjs), and what it left in dist/
// (npm run test:build builds it first).

test('css``: comments go even when they hold a quote, strings stay whole', () => {
  const css = `
    .a { color: red; }
    /* The bell's icon; the app's content */
    .b::after { content: '/* not a comment */'; }
    /* it's */ .c { quotes: "it's" "x"; }
  `;
  assert.equal(minifyCss(css).trim(), `.a{color:red}.b::after{content:'/* not a comment */'}.c{quotes:"it's" "x"}`);
});

test('no CSS comment reaches the built files', () => {
  const dist = resolve(import.meta.dirname, '../../dist');
  const files = [...readdirSync(dist).map((f) => resolve(dist, f)), ...readdirSync(resolve(dist, 'chunks')).map((f) => resolve(dist, 'chunks', f))];
  for (const file of files.filter((f) => f.endsWith('.js'))) {
    const comment = /\/\*[\s\S]*?\*\//.exec(readFileSync(file, 'utf8'));
    assert.equal(comment, null, `${file}: ${comment?.[0]}`);
  }
});
