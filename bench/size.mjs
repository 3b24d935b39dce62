// The package's size, as users download it: gzip and brotli bytes of both builds, against the budgets
// of DESIGN.md, and what takes the room.
//
//   npm run bench:size            builds (npm run build) and measures dist/
//   npm run bench:size -- --no-build   measures dist/ as it is
//   npm run bench:size -- --live       also what live updates cost in each build (below)
//
// - script-tag build: dist/notif-inbox.min.js, the one file with Lit inside.
// - ES build: dist/notif-inbox.js with the chunks it imports, bundled into one minified file with
//   `lit` and `@lit/*` left external, the way an app's bundler ships `import 'notif-inbox'` (the
//   preferences, which the bell imports only when asked, stay a chunk of their own, as there).
// - custom rendering's hosts (dist/chunks/custom-hosts-*.js), loaded once a page sets a render hook, are out of both.
// - notif-inbox/notif-preferences: what importing it adds to the ES build (both bundled, less the ES build).
// - live updates (--live): what the stream and arrivals add to each build. Both builds are made again
//   from a copy of the sources with bench/live-off.patch applied, which takes out the stream reader
//   (the store's #listen and #onLive, the stream's fields, the relaying of its events between tabs,
//   the `live` attribute and request()'s `raw`), `message-received` and its bridge to
//   `notif-message-received`, the feed's "N new" button (with its CSS and the list window's
//   `scrolled`) and the bell's rule that an open popover sees arrivals; the difference is the cost.
//   The patch must still apply and the copy must type-check: when the code it touches changes, the
//   patch is made again (edit a copy of src/ the same way, then `git diff`).
// Exits 1 when a budget is exceeded (test/build/size.test.ts checks the same figures in CI).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const ROOT = resolve(import.meta.dirname, '..');

export const BUDGETS = {
  /** dist/notif-inbox.min.js, gzip: DESIGN.md "script-tag file, every element ... <= 22 KB". */
  scriptTag: 22 * 1024,
  /** The ES build of notif-inbox (bell, feed, message), Lit external, gzip: DESIGN.md "<= 15 KB". */
  es: 15 * 1024,
  /** notif-inbox/notif-preferences over the ES build, gzip: DESIGN.md "<= 3 KB". */
  preferences: 3 * 1024,
  /** What live updates add to each build, gzip: issue 11, "the stream and arrival cost at most 700 B". */
  live: 700,
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

/** The figures of dist/ (built beforehand). */
export async function measureDist(dist = resolve(ROOT, 'dist')) {
  const min = resolve(dist, 'notif-inbox.min.js');
  const es = resolve(dist, 'notif-inbox.js');
  if (!existsSync(min) || !existsSync(es)) throw new Error(`${dist} has no build: run npm run build`);
  const scriptTag = compressed(readFileSync(min));
  // The lazy imports (the bell's of the preferences, the feed's of custom rendering's hosts) stay
  // out, as an app's bundler splits them off.
  const lazy = /custom-hosts[^/]*\.js$/;
  const esBundle = compressed((await bundle(es, { external: [/notif-preferences\.js$/, lazy] })).code);
  const both = resolve(dist, '.size-both.js');
  writeFileSync(both, "import './notif-inbox.js';\nimport './notif-preferences.js';\n");
  let withPrefs;
  try {
    withPrefs = compressed((await bundle(both, { external: [lazy] })).code);
  } finally {
    rmSync(both, { force: true });
  }
  const preferences = { raw: withPrefs.raw - esBundle.raw, gzip: withPrefs.gzip - esBundle.gzip, brotli: withPrefs.brotli - esBundle.brotli };
  return { scriptTag, es: esBundle, preferences };
}

/**
 * What live updates add to each build (gzip, raw and brotli bytes): `figures` (of dist/, as built)
 * less the same figures of a build of the sources with bench/live-off.patch applied.
 */
export async function measureLive(figures) {
  const copy = mkdtempSync(join(tmpdir(), 'notif-live-off-'));
  try {
    for (const f of ['src', 'scripts', 'vite.config.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json']) cpSync(resolve(ROOT, f), join(copy, f), { recursive: true });
    symlinkSync(resolve(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
    try {
      execFileSync('git', ['apply', resolve(ROOT, 'bench/live-off.patch')], { cwd: copy, stdio: 'pipe' });
    } catch (e) {
      throw new Error(`bench/live-off.patch no longer applies to src/: make it again (bench/size.mjs says how)\n${e.stderr}`);
    }
    // (The build type-checks the copy as it writes its declarations.)
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: copy, stdio: 'pipe' });
    const without = await measureDist(join(copy, 'dist'));
    const less = (a, b) => ({ raw: a.raw - b.raw, gzip: a.gzip - b.gzip, brotli: a.brotli - b.brotli });
    return { scriptTag: less(figures.scriptTag, without.scriptTag), es: less(figures.es, without.es) };
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
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

async function main() {
  if (!process.argv.includes('--no-build')) {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  }
  const figures = await measureDist();
  const rows = [
    ['script-tag build (dist/notif-inbox.min.js, Lit inside)', figures.scriptTag, BUDGETS.scriptTag],
    ['ES build (dist/notif-inbox.js + chunks, Lit external)', figures.es, BUDGETS.es],
    ['notif-inbox/notif-preferences, over the ES build', figures.preferences, BUDGETS.preferences],
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
  for (const [name, bytes] of Object.entries(OTHERS)) console.log(`${name.padEnd(72)} ${''.padStart(7)} ${String(bytes).padStart(9)}`);
  if (process.argv.includes('--live')) {
    const live = await measureLive(figures);
    console.log('\nlive updates, what they add (bench/live-off.patch takes them out)');
    for (const [name, f] of [['  to the script-tag build', live.scriptTag], ['  to the ES build', live.es]]) {
      const ok = f.gzip <= BUDGETS.live;
      over ||= !ok;
      console.log(`${name.padEnd(58)} ${String(f.raw).padStart(7)} ${String(f.gzip).padStart(9)} ${String(f.brotli).padStart(8)}   ${BUDGETS.live} B ${ok ? 'ok' : `OVER by ${f.gzip - BUDGETS.live} B`}`);
    }
  }
  console.log('\nwhat takes the room (script-tag build; each part minified and gzipped alone):');
  const groups = await breakdown();
  const total = groups.reduce((n, [, f]) => n + f.gzip, 0);
  for (const [group, f] of groups) {
    console.log(`  ${group.padEnd(56)} ${String(f.raw).padStart(7)} raw ${String(f.gzip).padStart(6)} gzip  ${((f.gzip / total) * 100).toFixed(0).padStart(3)} %`);
  }
  if (process.argv.includes('--readme')) writeReadme(figures);
  process.exitCode = over ? 1 : 0;
}

/** Rewrites the table between <!-- size:start --> and <!-- size:end --> in README.md. */
function writeReadme(figures) {
  const n = (x) => `${x.toLocaleString('en-US')} B`;
  const row = (name, f, budget) =>
    `| ${name} | ${n(f.raw)} | ${n(f.gzip)} | ${n(f.brotli)} | ${budget / 1024} KB (${budget.toLocaleString('en-US')} B)${f.gzip > budget ? ': **over**' : ''} |`;
  const table = [
    '| build | raw | gzip | brotli | budget (gzip) |',
    '|---|---:|---:|---:|---:|',
    row('script tag, `dist/notif-inbox.min.js` (Lit inside)', figures.scriptTag, BUDGETS.scriptTag),
    row('ES build, `notif-inbox` with Lit external (bundled as an app would)', figures.es, BUDGETS.es),
    row('`notif-inbox/notif-preferences`, over the ES build', figures.preferences, BUDGETS.preferences),
    ...Object.entries(OTHERS).map(([name, bytes]) => `| for comparison: ${name} | | ${bytes.toLocaleString('en')} B | | |`),
  ].join('\n');
  const path = resolve(ROOT, 'README.md');
  const readme = readFileSync(path, 'utf8');
  const a = readme.indexOf('<!-- size:start -->');
  const b = readme.indexOf('<!-- size:end -->');
  if (a < 0 || b < a) throw new Error('README.md lacks the <!-- size:start --> ... <!-- size:end --> markers');
  writeFileSync(path, `${readme.slice(0, a)}<!-- size:start -->\n${table}\n${readme.slice(b)}`);
  console.log('README.md: size table rewritten');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
