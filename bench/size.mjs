// The package's size, as users download it: gzip and brotli bytes of both builds, against the budgets
// of DESIGN.md, and what takes the room.
//
//   npm run bench:size            builds (npm run build) and measures dist/
//   npm run bench:size -- --no-build   measures dist/ as it is
//
// - script-tag build: dist/notif-inbox.min.js, the one file with Lit inside.
// - ES build: dist/notif-inbox.js with the chunks it imports, bundled into one minified file with
//   `lit` and `@lit/*` left external, the way an app's bundler ships `import 'notif-inbox'`.
// Exits 1 when a budget is exceeded (test/build/size.test.ts checks the same figures in CI).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const ROOT = resolve(import.meta.dirname, '..');

export const BUDGETS = {
  /** dist/notif-inbox.min.js, gzip: DESIGN.md "script-tag bundle ... <= 18 KB". */
  scriptTag: 18 * 1024,
  /** The ES build, Lit external, gzip: DESIGN.md "<= 12 KB". */
  es: 12 * 1024,
};

/** What a user would otherwise pick, gzip, esbuild-minified bundles (issue 5). */
export const OTHERS = { 'Courier inbox': 43 * 1024, 'Novu inbox': 152 * 1024 };

export const compressed = (bytes) => ({
  raw: bytes.length,
  gzip: gzipSync(bytes, { level: 9 }).length,
  brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
});

const LIT = [/^lit(\/|$)/, /^@lit\//];

/** Bundles `entry` into one minified ES file in memory (Lit external unless `withLit`); returns its code and modules. */
export async function bundle(entry, { withLit = false, plugins = [] } = {}) {
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
        external: withLit ? [] : LIT,
        output: { codeSplitting: false, minify: true, comments: false },
      },
    },
  });
  const output = (Array.isArray(result) ? result[0] : result).output;
  const chunk = output.find((o) => o.type === 'chunk');
  return { code: Buffer.from(chunk.code), modules: chunk.modules };
}

/** The figures of dist/ (built beforehand). */
export async function measureDist(dist = resolve(ROOT, 'dist')) {
  const min = resolve(dist, 'notif-inbox.min.js');
  const es = resolve(dist, 'notif-inbox.js');
  if (!existsSync(min) || !existsSync(es)) throw new Error(`${dist} has no build: run npm run build`);
  const scriptTag = compressed(readFileSync(min));
  const esBundle = await bundle(es);
  return { scriptTag, es: compressed(esBundle.code) };
}

/** Where the bytes of the script-tag build come from (minified bytes per source group). */
export async function breakdown() {
  const { minifyTemplatesPlugin } = await import('../scripts/minify-templates.mjs');
  const { modules } = await bundle('src/index.ts', { withLit: true, plugins: [minifyTemplatesPlugin()] });
  const groups = new Map();
  for (const [id, info] of Object.entries(modules)) {
    const rel = id.replace(/\\/g, '/').replace(/^.*?\/(node_modules|src)\//, '$1/');
    const group = rel.startsWith('node_modules/')
      ? `lit (${rel.split('/')[1]}${rel.split('/')[1]?.startsWith('@') ? `/${rel.split('/')[2]}` : ''})`
      : /\.styles\.ts$/.test(rel)
        ? 'element CSS (*.styles.ts)'
        : rel.startsWith('src/components/')
          ? 'element classes and templates'
          : rel.startsWith('src/store/') || rel.startsWith('src/api/')
            ? 'store and client (src/store, src/api)'
            : 'i18n, icons, base classes (src/i18n, src/internal)';
    groups.set(group, (groups.get(group) ?? 0) + info.renderedLength);
  }
  return [...groups].sort((a, b) => b[1] - a[1]);
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

async function main() {
  if (!process.argv.includes('--no-build')) {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  }
  const figures = await measureDist();
  const rows = [
    ['script-tag build (dist/notif-inbox.min.js, Lit inside)', figures.scriptTag, BUDGETS.scriptTag],
    ['ES build (dist/notif-inbox.js + chunks, Lit external)', figures.es, BUDGETS.es],
  ];
  console.log('build                                                        raw       gzip   brotli   budget (gzip)');
  let over = false;
  for (const [name, f, budget] of rows) {
    const ok = f.gzip <= budget;
    over ||= !ok;
    console.log(
      `${name.padEnd(58)} ${String(f.raw).padStart(7)} ${String(f.gzip).padStart(9)} ${String(f.brotli).padStart(8)}   ${kb(budget)} ${ok ? 'ok' : `OVER by ${f.gzip - budget} B`}`,
    );
  }
  for (const [name, bytes] of Object.entries(OTHERS)) console.log(`${name.padEnd(58)} ${''.padStart(7)} ${String(bytes).padStart(9)}`);
  console.log('\nminified bytes by source (script-tag build, before compression):');
  const groups = await breakdown();
  const total = groups.reduce((n, [, b]) => n + b, 0);
  for (const [group, bytes] of groups) console.log(`  ${group.padEnd(52)} ${String(bytes).padStart(7)}  ${((bytes / total) * 100).toFixed(0).padStart(3)} %`);
  process.exitCode = over ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
