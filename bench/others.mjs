// What a user would otherwise pick, measured here rather than quoted: the inbox packages of Courier and
// Novu, installed from npm at their current versions, used the way their quick starts show, bundled by
// esbuild into one minified ES file each, and compressed.
//
//   node bench/others.mjs            installs into a temporary directory, prints the table, removes it
//   node bench/others.mjs --keep     keeps the temporary directory (entries, bundles, metafiles)
//   node bench/others.mjs @novu/js@3.19.2 ...   pins packages instead of taking their latest versions
//
// Every bundle: esbuild --bundle --minify --format=esm --platform=browser (esbuild then also defines
// process.env.NODE_ENV as "production"). For the React packages, react and react-dom (with their
// subpaths) stay external: the figure is the package's own cost on top of React, which the app
// already ships. The web-component packages need no framework, so their figure is everything.
// Dynamic imports are inlined (no code splitting), as for our script-tag build.
// Our own figure is printed too when dist/ exists (this script never builds).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const ROOT = resolve(import.meta.dirname, '..');
const started = performance.now();
const seconds = (from) => `${((performance.now() - from) / 1000).toFixed(1)} s`;

/** What each entry imports and does: the JavaScript of the vendor's quick start (README on npm). */
const CASES = [
  {
    name: 'Courier inbox, web components',
    pkg: '@trycourier/courier-ui-inbox',
    react: false,
    file: 'courier-ui-inbox.js',
    code: `import { Courier } from '@trycourier/courier-ui-inbox';

document.body.append(document.createElement('courier-inbox'));
Courier.shared.signIn({ userId: 'user-1', jwt: 'jwt-from-your-backend' });
`,
  },
  {
    name: 'Courier inbox, React',
    pkg: '@trycourier/courier-react',
    react: true,
    file: 'courier-react.jsx',
    code: `import { useEffect } from 'react';
import { createRoot } from 'react-dom/client';
import { CourierInbox, useCourier } from '@trycourier/courier-react';

function App() {
  const courier = useCourier();
  useEffect(() => {
    courier.shared.signIn({ userId: 'user-1', jwt: 'jwt-from-your-backend' });
  }, []);
  return <CourierInbox />;
}
createRoot(document.getElementById('app')).render(<App />);
`,
  },
  {
    name: 'Novu inbox, @novu/js UI (no framework)',
    pkg: '@novu/js',
    react: false,
    file: 'novu-js-ui.js',
    code: `import { NovuUI } from '@novu/js/ui';

const novu = new NovuUI({
  options: { applicationIdentifier: 'APPLICATION_IDENTIFIER', subscriber: 'SUBSCRIBER_ID' },
});
novu.mountComponent({ name: 'Inbox', props: {}, element: document.getElementById('notification-inbox') });
`,
  },
  {
    name: 'Novu inbox, React',
    pkg: '@novu/react',
    react: true,
    file: 'novu-react.jsx',
    code: `import { createRoot } from 'react-dom/client';
import { Inbox } from '@novu/react';

function App() {
  return <Inbox applicationIdentifier="APPLICATION_IDENTIFIER" subscriber="SUBSCRIBER_ID" />;
}
createRoot(document.getElementById('app')).render(<App />);
`,
  },
];

/** For context only (not part of any figure above): React itself, which the React rows leave out. */
const REACT_CASE = {
  name: 'react + react-dom/client alone (context)',
  pkg: 'react-dom',
  react: false,
  file: 'react.js',
  code: `import { createElement } from 'react';
import { createRoot } from 'react-dom/client';

createRoot(document.getElementById('app')).render(createElement('p', null, 'hello'));
`,
};

const REACT_EXTERNALS = ['react', 'react/*', 'react-dom', 'react-dom/*'];

const compressed = (bytes) => ({
  raw: bytes.length,
  gzip: gzipSync(bytes, { level: 9 }).length,
  brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
});

const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Bytes of the output per package (from esbuild's metafile), largest first. */
function byPackage(metafile) {
  const out = Object.values(metafile.outputs)[0];
  const sizes = new Map();
  for (const [input, { bytesInOutput }] of Object.entries(out.inputs)) {
    const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
    const key = m ? m[1] : '(entry)';
    sizes.set(key, (sizes.get(key) ?? 0) + bytesInOutput);
  }
  return [...sizes].sort((a, b) => b[1] - a[1]);
}

async function main() {
  const keep = process.argv.includes('--keep');
  const pins = new Map(
    process.argv
      .slice(2)
      .filter((a) => !a.startsWith('--'))
      .map((spec) => [spec.slice(0, spec.lastIndexOf('@') > 0 ? spec.lastIndexOf('@') : undefined), spec]),
  );
  const dir = mkdtempSync(join(tmpdir(), 'notif-inbox-others-'));
  try {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'others', private: true, type: 'module' }));

    const localEsbuild = resolve(ROOT, 'node_modules/esbuild/bin/esbuild');
    const useLocal = existsSync(localEsbuild);
    const specs = [...CASES.map((c) => c.pkg), 'react', 'react-dom'].map((pkg) => pins.get(pkg) ?? `${pkg}@latest`);
    if (!useLocal) specs.push('esbuild@latest');
    let t = performance.now();
    console.log(`npm install --no-save --ignore-scripts ${specs.join(' ')}\n  in ${dir}`);
    run('npm', ['install', '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', ...specs], dir);
    console.log(`  installed in ${seconds(t)}`);
    const esbuild = useLocal ? localEsbuild : join(dir, 'node_modules/esbuild/bin/esbuild');
    console.log(`esbuild ${run(esbuild, ['--version'], dir).trim()} (${useLocal ? 'the project\'s' : 'installed in the temporary directory'})\n`);

    const version = (pkg) => JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8')).version;
    mkdirSync(join(dir, 'out'));
    const rows = [];
    for (const c of [...CASES, REACT_CASE]) {
      writeFileSync(join(dir, c.file), c.code);
      const outfile = join(dir, 'out', c.file.replace(/\.jsx?$/, '.min.js'));
      const meta = `${outfile}.meta.json`;
      const args = [c.file, '--bundle', '--minify', '--format=esm', '--platform=browser', '--jsx=automatic',
        `--outfile=${outfile}`, `--metafile=${meta}`, '--log-level=error'];
      if (c.react) args.push(...REACT_EXTERNALS.map((e) => `--external:${e}`));
      t = performance.now();
      try {
        run(esbuild, args, dir);
      } catch (error) {
        console.log(`${c.name}: esbuild failed\n${error.stderr ?? error.message}`);
        rows.push({ c, failed: true });
        continue;
      }
      const code = readFileSync(outfile);
      const metafile = JSON.parse(readFileSync(meta, 'utf8'));
      // What the output still imports (external): only react and react-dom for a React row, nothing otherwise.
      const imports = [...new Set(Object.values(metafile.outputs)[0].imports.filter((i) => i.external).map((i) => i.path))];
      rows.push({ c, version: version(c.pkg), size: compressed(code), packages: byPackage(metafile), imports, time: seconds(t) });
    }

    const n = (x) => String(x.toLocaleString('en-US')).padStart(10);
    // Both units: the project's budgets count KB as 1024 B; vendors and the issue's figures used 1000.
    const kb = (x) => `${(x / 1024).toFixed(1)} KiB = ${(x / 1000).toFixed(1)} kB`.padStart(22);
    console.log(`${'package@version'.padEnd(36)} ${'what'.padEnd(42)} ${'raw'.padStart(10)} ${'gzip -9'.padStart(10)} ${'brotli'.padStart(10)}  ${'gzip'.padStart(22)}`);
    for (const r of rows) {
      if (r.failed) {
        console.log(`${r.c.pkg.padEnd(36)} ${r.c.name.padEnd(42)} FAILED`);
        continue;
      }
      const what = `${r.c.name}${r.c.react ? ' *' : ''}`;
      console.log(`${`${r.c.pkg}@${r.version}`.padEnd(36)} ${what.padEnd(42)} ${n(r.size.raw)} ${n(r.size.gzip)} ${n(r.size.brotli)} ${kb(r.size.gzip)}`);
    }
    if (existsSync(resolve(ROOT, 'dist'))) {
      try {
        const { measureDist } = await import('./size.mjs');
        const ours = await measureDist();
        const own = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8'));
        const me = `${own.name}@${own.version} (dist/ as built)`;
        const first = ours.scriptTag.first;
        const entry = ours.es.entry;
        console.log(`${me.padEnd(36)} ${'script tag: first file, Lit inside'.padEnd(42)} ${n(first.raw)} ${n(first.gzip)} ${n(first.brotli)} ${kb(first.gzip)}`);
        console.log(`${''.padEnd(36)} ${'ES build, Lit external: static chunks'.padEnd(42)} ${n(entry.raw)} ${n(entry.gzip)} ${n(entry.brotli)} ${kb(entry.gzip)}`);
      } catch (error) {
        console.log(`notif-inbox: could not measure dist/ (${error.message})`);
      }
    } else {
      console.log('notif-inbox: no dist/ (run npm run build, then this again, to print our figures)');
    }
    console.log(`\n* react, react/*, react-dom, react-dom/* kept external: the figure is on top of React.`);
    console.log('  The other rows need no framework: everything they run is in the figure.');

    console.log('\nwhat each bundle holds (minified bytes per package, before compression; imports left in the output):');
    for (const r of rows.filter((x) => !x.failed)) {
      const top = r.packages.slice(0, 6).map(([p, b]) => `${p} ${b.toLocaleString('en-US')}`).join(', ');
      const rest = r.packages.length > 6 ? `, ... (${r.packages.length} packages)` : '';
      console.log(`  ${r.c.pkg}: ${top}${rest}; imports: ${r.imports.join(', ') || 'none'}; bundled in ${r.time}`);
    }
    console.log('\nentries (the vendors\' quick starts):');
    for (const c of CASES) console.log(`--- ${c.file}\n${c.code}`);
    if (keep) console.log(`kept: ${dir}`);
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
  console.log(`done in ${seconds(started)}`);
}

await main();
