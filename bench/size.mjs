// The package's size, as users download it: raw, gzip -9 and brotli -11 bytes of both builds against
// DESIGN.md's budgets, each chunk's figures, and what takes the room.
//
//   npm run bench:size                 builds (npm run build) and measures dist/
//   npm run bench:size -- --no-build   measures dist/ as it is
//   npm run bench:size -- --docs       also rewrites the size table of docs/benchmarks.md
//
// - script tag: dist/notif-inbox.min.js, the first file a page loads (Lit inside), and everything it
//   may load after it (the files it imports on demand: dist/notif-preferences.min.js, custom
//   rendering's dist/custom-hosts.min.js).
// - ES build: dist/notif-inbox.js bundled the way an app's bundler ships `import 'notif-inbox'`:
//   esbuild, code splitting on, `lit` and `@lit/*` left external. The entry's static chunks are what
//   a page loads for it; the lazy ones (the preferences, custom rendering's hosts) come when asked.
// A feature's cost: each lazy module is a chunk of its own (listed); for code in the first file,
// build with and without its module and compare (git stash, or a branch), as bench/HISTORY.md records.
// test/build/size.test.ts checks the same budgets; this script exits 1 when one is exceeded.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const ROOT = resolve(import.meta.dirname, '..');
const KB = 1024;

/** DESIGN.md, "Budgets" (gzip bytes). */
export const BUDGETS = {
  /** The script tag's first file (Lit inside). */
  scriptTagFirst: 24 * KB,
  /** Everything the script tag may load: its first file and the lazy views it loads on demand. */
  scriptTagAll: 30 * KB,
  /** The ES build as an app's bundler ships it: the entry's static chunks together. */
  esEntry: 20 * KB,
  /**
   * The ES build as an app's bundler ships it: every chunk together, the lazy ones included (as the
   * script tag's "everything"; the stricter reading of "every chunk", which any one chunk is within).
   */
  esAll: 26 * KB,
};

/**
 * What a user would otherwise pick: gzip -9 bytes of esbuild-minified bundles, measured by
 * `npm run bench:others` (bench/others.mjs) on 2026-11-22 with the packages' latest versions.
 */
export const OTHERS = {
  "Courier's inbox (@trycourier/courier-ui-inbox 2.4.7, web components)": 43_106,
  "Novu's inbox (@novu/react 3.19.2, React external)": 151_516,
};

export const compressed = (bytes) => ({
  raw: bytes.length,
  gzip: gzipSync(bytes, { level: 9 }).length,
  brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
});

/** The figures of several files downloaded one by one: each compressed on its own, then added up. */
const total = (figures) => figures.reduce((sum, f) => ({ raw: sum.raw + f.raw, gzip: sum.gzip + f.gzip, brotli: sum.brotli + f.brotli }), { raw: 0, gzip: 0, brotli: 0 });

const LIT = [/^lit(\/|$)/, /^@lit\//];

/**
 * Bundles `entry` into one minified ES file in memory (Lit external unless `withLit`, and whatever
 * `external` names); returns its code and modules.
 */
export async function bundle(entry, { withLit = false, plugins = [], external = [] } = {}) {
  const { build } = await import('vite');
  const result = await build({
    configFile: false,
    root: ROOT,
    logLevel: 'silent',
    plugins,
    resolve: { conditions: ['production', 'module', 'browser'] },
    define: { 'process.env.NODE_ENV': '"production"' },
    build: {
      write: false,
      target: 'es2022',
      minify: true,
      lib: { entry: resolve(ROOT, entry), formats: ['es'], fileName: 'bundle' },
      rolldownOptions: {
        external: [...(withLit ? [] : LIT), ...external],
        output: { codeSplitting: false, minify: true, comments: false },
      },
    },
  });
  const output = (Array.isArray(result) ? result[0] : result).output;
  const chunk = output.find((o) => o.type === 'chunk');
  return { code: Buffer.from(chunk.code), modules: chunk.modules };
}

/** The relative files a module imports, statically or on demand (`import ... from './x.js'`, `import('./x.js')`). */
const relativeImports = (code) => [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]);

/** The script tag's files: the first one, and every file it may load after it (followed through their imports). */
export function measureScriptTag(dist = resolve(ROOT, 'dist')) {
  const first = resolve(dist, 'notif-inbox.min.js');
  if (!existsSync(first)) throw new Error(`${dist} has no build: run npm run build`);
  const files = [first];
  for (let i = 0; i < files.length; i++) {
    const code = readFileSync(files[i], 'utf8');
    for (const path of relativeImports(code)) {
      const file = resolve(dirname(files[i]), path.split('?')[0]);
      if (!files.includes(file)) files.push(file);
    }
  }
  const figures = files.map((file) => ({ file: basename(file), ...compressed(readFileSync(file)) }));
  return { first: figures[0], files: figures, all: total(figures) };
}

/**
 * The ES build as an app's bundler ships it: esbuild bundles dist/notif-inbox.js with code splitting,
 * minified, `lit` and `@lit/*` external. Returns every chunk's figures (`lazy`: not among the
 * entry's static imports), the entry's static chunks together, every chunk together, and the
 * largest chunk's gzip bytes.
 */
export async function measureEsBuild(dist = resolve(ROOT, 'dist')) {
  const entry = resolve(dist, 'notif-inbox.js');
  if (!existsSync(entry)) throw new Error(`${dist} has no build: run npm run build`);
  const { build } = await import('esbuild');
  const outdir = resolve(ROOT, '.size-es');
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    target: 'es2022',
    platform: 'browser',
    conditions: ['production'],
    external: ['lit', 'lit/*', '@lit/*'],
    write: false,
    metafile: true,
    outdir,
    absWorkingDir: ROOT,
    logLevel: 'silent',
  });
  const outputs = result.metafile.outputs;
  const byPath = new Map(result.outputFiles.map((f) => [f.path, f.contents]));
  // (Each file imported on demand is an entry point of esbuild's too: the entry is the one of dist/notif-inbox.js.)
  const entryOutput = Object.keys(outputs).find((key) => outputs[key].entryPoint && resolve(ROOT, outputs[key].entryPoint) === entry);
  // The entry and what it imports statically, transitively.
  const staticOutputs = [entryOutput];
  for (let i = 0; i < staticOutputs.length; i++) {
    for (const { path, kind } of outputs[staticOutputs[i]].imports) {
      if (kind === 'import-statement' && outputs[path] && !staticOutputs.includes(path)) staticOutputs.push(path);
    }
  }
  const chunks = Object.keys(outputs)
    .filter((key) => key.endsWith('.js'))
    .map((key) => ({ file: basename(key), lazy: !staticOutputs.includes(key), ...compressed(Buffer.from(byPath.get(resolve(ROOT, key)))) }));
  const entryFigures = chunks.filter((chunk) => !chunk.lazy);
  return { chunks, entry: total(entryFigures), all: total(chunks), largest: Math.max(...chunks.map((chunk) => chunk.gzip)) };
}

/** Both builds' figures (dist/ built beforehand). */
export async function measureDist(dist = resolve(ROOT, 'dist')) {
  return { scriptTag: measureScriptTag(dist), es: await measureEsBuild(dist) };
}

/**
 * Where the bytes of the script-tag build come from: per source group, its modules' code as rendered
 * in the bundle, minified on its own and compressed on its own (so the parts add up to a little
 * more than the whole, which compresses across them).
 */
export async function breakdown() {
  const { minifyTemplatesPlugin } = await import('../scripts/minify-templates.mjs');
  const { minifySync } = await import('rolldown/utils'); // Vite's own bundler (a dependency of vite)
  const { modules } = await bundle('src/script-tag.ts', { withLit: true, plugins: [minifyTemplatesPlugin()] });
  const groups = new Map();
  for (const [id, info] of Object.entries(modules)) {
    const rel = id.replace(/\\/g, '/').replace(/^.*?\/(node_modules|src)\//, '$1/');
    const group = rel.startsWith('node_modules/')
      ? 'Lit (lit-html, reactive-element, lit-element)'
      : /\.styles\.ts$/.test(rel)
        ? 'element CSS (*.styles.ts)'
        : rel.startsWith('src/components/')
          ? 'element classes and templates (src/components)'
          : rel.startsWith('src/store/') || rel.startsWith('src/api/')
            ? 'store and client (src/store, src/api)'
            : rel.startsWith('src/i18n/')
              ? 'localization (src/i18n)'
              : 'base classes, controllers, icons, URLs (src/internal)';
    groups.set(group, (groups.get(group) ?? '') + (info.code ?? '') + '\n');
  }
  return [...groups]
    .map(([group, code]) => {
      const min = Buffer.from(minifySync('group.js', code, { compress: true, mangle: { toplevel: true } }).code);
      return [group, compressed(min)];
    })
    .sort((a, b) => b[1].gzip - a[1].gzip);
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const number = (n) => String(n).padStart(8);
/** ok, or by how much `gzip` is over `budget`. */
const verdict = (gzip, budget) => (gzip <= budget ? 'ok' : `OVER by ${gzip - budget} B`);

async function main() {
  if (!process.argv.includes('--no-build')) {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  }
  const { scriptTag, es } = await measureDist();
  const rows = [
    ['script tag: the first file (notif-inbox.min.js, Lit inside)', scriptTag.first, BUDGETS.scriptTagFirst],
    ['script tag: everything it may load', scriptTag.all, BUDGETS.scriptTagAll],
    ["ES build (esbuild, Lit external): the entry's static chunks", es.entry, BUDGETS.esEntry],
    ['ES build: every chunk together, the lazy ones included', es.all, BUDGETS.esAll],
  ];
  console.log(`${'figure'.padEnd(62)} ${'raw'.padStart(8)} ${'gzip'.padStart(8)} ${'brotli'.padStart(8)}   budget (gzip)`);
  let over = false;
  for (const [name, f, budget] of rows) {
    over ||= f.gzip > budget;
    console.log(`${name.padEnd(62)} ${number(f.raw)} ${number(f.gzip)} ${number(f.brotli)}   ${kb(budget)} ${verdict(f.gzip, budget)}`);
  }
  for (const [name, bytes] of Object.entries(OTHERS)) console.log(`${name.padEnd(80)} ${number(bytes)}`);
  console.log('\nthe script tag\'s files:');
  for (const f of scriptTag.files) console.log(`  ${f.file.padEnd(60)} ${number(f.raw)} ${number(f.gzip)} ${number(f.brotli)}`);
  console.log('the ES build\'s chunks, as esbuild splits them (lazy: loaded when asked):');
  for (const f of es.chunks) console.log(`  ${(f.file + (f.lazy ? ' (lazy)' : '')).padEnd(60)} ${number(f.raw)} ${number(f.gzip)} ${number(f.brotli)}`);
  console.log(`  (the largest: ${number(es.largest).trim()} B gzip)`);
  console.log('\nwhat takes the room (script-tag build, its lazy files included; each part minified and gzipped alone):');
  const groups = await breakdown();
  const sum = groups.reduce((n, [, f]) => n + f.gzip, 0);
  for (const [group, f] of groups) {
    console.log(`  ${group.padEnd(56)} ${String(f.raw).padStart(7)} raw ${String(f.gzip).padStart(6)} gzip  ${((f.gzip / sum) * 100).toFixed(0).padStart(3)} %`);
  }
  if (process.argv.includes('--docs')) writeSizeTable(scriptTag, es);
  process.exitCode = over ? 1 : 0;
}

/** Rewrites the table between <!-- size:start --> and <!-- size:end --> in docs/benchmarks.md. */
function writeSizeTable(scriptTag, es) {
  const n = (x) => `${x.toLocaleString('en-US')} B`;
  const row = (name, f, budget) =>
    `| ${name} | ${n(f.raw)} | ${n(f.gzip)} | ${n(f.brotli)} | ${budget / 1024} KB (${budget.toLocaleString('en-US')} B)${f.gzip > budget ? ': **over**' : ''} |`;
  const table = [
    '| figure | raw | gzip | brotli | budget (gzip) |',
    '|---|---:|---:|---:|---:|',
    row('script tag: the first file, `dist/notif-inbox.min.js` (Lit inside)', scriptTag.first, BUDGETS.scriptTagFirst),
    row(`script tag: everything it may load (its first file, ${scriptTag.files.slice(1).map((f) => '`' + f.file + '`').join(', ')})`, scriptTag.all, BUDGETS.scriptTagAll),
    row("ES build bundled by esbuild (code splitting, Lit external): the entry's static chunks", es.entry, BUDGETS.esEntry),
    row('ES build bundled by esbuild: every chunk together, the lazy ones included', es.all, BUDGETS.esAll),
    ...Object.entries(OTHERS).map(([name, bytes]) => `| for comparison: ${name} | | ${bytes.toLocaleString('en')} B | | |`),
  ].join('\n');
  const path = resolve(ROOT, 'docs/benchmarks.md');
  const page = readFileSync(path, 'utf8');
  const a = page.indexOf('<!-- size:start -->');
  const b = page.indexOf('<!-- size:end -->');
  if (a < 0 || b < a) throw new Error('docs/benchmarks.md lacks the <!-- size:start --> ... <!-- size:end --> markers');
  writeFileSync(path, `${page.slice(0, a)}<!-- size:start -->\n${table}\n${page.slice(b)}`);
  console.log('docs/benchmarks.md: size table rewritten');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
