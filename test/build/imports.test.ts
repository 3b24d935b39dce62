import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import madge from 'madge';

// The browser code's one direction of dependency (DESIGN.md, "The house"): components -> store ->
// api; src/internal holds the elements' shared parts and imports no element; the store knows no Lit
// and no element code. No import circle anywhere in src/, type-only imports included.

const SRC = resolve(import.meta.dirname, '../../src');

/** The import graph of the TypeScript files under `dir` (type-only and lazy imports included; npm packages too). */
async function graph(dir: string) {
  return madge(dir, {
    fileExtensions: ['ts'],
    includeNpm: true,
    detectiveOptions: { ts: { skipTypeImports: false, skipAsyncImports: false } },
  });
}

const result = await graph(SRC);
const imports: Record<string, string[]> = result.obj();

/** Every import of the files under `folder` (paths relative to src/) that `forbidden` matches, as "file -> import". */
function importsMatching(folder: string, forbidden: RegExp): string[] {
  return Object.entries(imports)
    .filter(([file]) => file.startsWith(folder + '/'))
    .flatMap(([file, targets]) => targets.filter((target) => forbidden.test(target)).map((target) => `${file} -> ${target}`));
}

test('the import graph of src/ is read (the checks below see its files)', () => {
  assert.ok(imports['index.ts']?.length, 'src/index.ts and its imports');
  assert.ok(imports['store/inbox-store.ts']?.includes('store/feed-pages.ts'), 'the store facade imports its parts');
  assert.ok(imports['internal/inbox-element.ts']?.some((target) => /node_modules\/lit\//.test(target)), 'npm packages are in the graph');
});

test('no import circle in src/, type-only imports included', () => {
  assert.deepEqual(result.circular(), []);
});

test('the checker finds a circle made of type-only imports', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'notif-imports-'));
  try {
    writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.ts';\nexport interface A { b?: B }\n");
    writeFileSync(join(dir, 'b.ts'), "import type { A } from './a.ts';\nexport interface B { a?: A }\n");
    assert.deepEqual((await graph(dir)).circular(), [['a.ts', 'b.ts']]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('src/internal, src/store and src/api import no element (src/components)', () => {
  for (const folder of ['internal', 'store', 'api']) assert.deepEqual(importsMatching(folder, /^components\//), [], folder);
});

test('src/store imports no Lit and no element code (src/internal, src/components, src/i18n)', () => {
  assert.deepEqual(importsMatching('store', /node_modules\/(lit|@lit|lit-html|lit-element|@lit-labs)\/|^(internal|components|i18n)\//), []);
});

test('src/api imports neither the store nor any element code, nor Lit', () => {
  assert.deepEqual(importsMatching('api', /node_modules\/(lit|@lit|lit-html|lit-element)\/|^(store|internal|components|i18n)\//), []);
});
