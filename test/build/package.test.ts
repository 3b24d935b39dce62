import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

// The package as published: `npm pack` of the built dist/, installed into a fresh consumer folder,
// then imported the ways users do (Node resolution of every export, a Vite app bundle, tsc with the
// React and Vue typings). The consumer lives under node_modules/.cache so that its own
// dependencies (lit, react, vue) resolve from the repository's node_modules, as a user's would
// from theirs; notif-inbox itself resolves only to the installed tarball.

const ROOT = resolve(import.meta.dirname, '../..');
let consumer: string;
let installed: string;

before(() => {
  assert.ok(existsSync(join(ROOT, 'dist/notif-inbox.min.js')), 'dist/ is built (npm run test:build builds it)');
  mkdirSync(join(ROOT, 'node_modules/.cache'), { recursive: true });
  consumer = mkdtempSync(join(ROOT, 'node_modules/.cache/notif-consumer-'));
  const tarball = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', consumer], { cwd: ROOT, encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1)!;
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // Its dependencies (lit, @lit/task) are in npm's cache since the repository's own install.
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', join(consumer, tarball)], {
    cwd: consumer,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  installed = join(consumer, 'node_modules/notif-inbox');
});

after(() => {
  if (consumer) rmSync(consumer, { recursive: true, force: true });
});

test('the tarball holds the builds, the declarations and the manifest, and nothing of the sources or tests', () => {
  const files = execFileSync('find', ['.', '-type', 'f'], { cwd: installed, encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const f of ['./dist/notif-inbox.js', './dist/notif-inbox.min.js', './dist/notif-bell.js', './dist/client.js', './dist/types/index.d.ts', './dist/types/react.d.ts', './dist/types/vue.d.ts', './custom-elements.json', './package.json', './README.md']) {
    assert.ok(files.includes(f), `${f} in the package`);
  }
  assert.deepEqual(files.filter((f) => /^\.\/(src|server|test|demo|bench|scripts)\//.test(f)), []);
  assert.deepEqual(files.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts')), []);
});

test('every export of package.json resolves to a file that exists, types included', () => {
  const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  const entries = Object.entries(pkg.exports as Record<string, string | Record<string, string>>);
  assert.ok(entries.length >= 9);
  for (const [subpath, target] of entries) {
    for (const file of typeof target === 'string' ? [target] : Object.values(target)) {
      assert.ok(existsSync(join(installed, file)), `${subpath} -> ${file} exists`);
    }
  }
  for (const field of ['main', 'module', 'types', 'customElements']) assert.ok(existsSync(join(installed, pkg[field])), `${field} exists`);
  // Node's resolution from the consumer, as a bundler starts it.
  const script = `for (const s of ['notif-inbox', 'notif-inbox/notif-bell', 'notif-inbox/client', 'notif-inbox/i18n/de', 'notif-inbox/notif-inbox.min.js', 'notif-inbox/custom-elements.json']) console.log(import.meta.resolve(s));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: consumer, encoding: 'utf8' });
  for (const line of out.trim().split('\n')) assert.ok(line.includes('/node_modules/notif-inbox/'), line);
});

test('German loads from the package as README shows it, and from beside the script-tag file', () => {
  const script = `import de from 'notif-inbox/i18n/de';
const beside = await import(new URL('./i18n/de.js', import.meta.resolve('notif-inbox/notif-inbox.min.js')));
console.log(de.$code, de.markAllRead.length > 0, beside.default === de);`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: consumer, encoding: 'utf8' });
  assert.equal(out.trim(), 'de true true');
});

test('the client entry works in Node with no DOM and no Lit (it is plain fetch)', () => {
  const script = `import { NotifClient, NotifApiError } from 'notif-inbox/client';
const c = new NotifClient({ baseUrl: 'http://127.0.0.1:9/', apiKey: 'k' });
try { await c.unseenCount('ada'); } catch (e) { console.log(e instanceof NotifApiError, e.status, typeof c.trigger); }`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: consumer, encoding: 'utf8' });
  assert.equal(out.trim(), 'true 0 function');
});

test('the builds carry production Lit only (no "dev mode" warning) and the ES build leaves lit to the app', () => {
  const min = readFileSync(join(installed, 'dist/notif-inbox.min.js'), 'utf8');
  assert.doesNotMatch(min, /Lit is in dev mode/);
  assert.doesNotMatch(min, /^import\s/m, 'the script-tag file imports nothing');
  for (const tag of ['notif-bell', 'notif-feed', 'notif-message']) assert.ok(new RegExp(`define\\([\`"']${tag}[\`"']\\)`).test(min), `the script-tag file defines <${tag}>`);
  // <notif-preferences> is a file of its own beside it, which it loads on demand.
  const preferences = readFileSync(join(installed, 'dist/notif-preferences.min.js'), 'utf8');
  assert.match(min, /import\(["']\.\/notif-preferences\.min\.js["']\)/, 'the script-tag file loads the preferences from beside it');
  assert.ok(/define\([`"']notif-preferences[`"']\)/.test(preferences), 'the preferences file defines <notif-preferences>');
  assert.doesNotMatch(preferences, /class \w+ extends HTMLElement|lit-html@|litHtmlVersions/, 'the preferences file uses the first file\'s Lit');
  const chunks = execFileSync('find', ['dist', '-name', '*.js'], { cwd: installed, encoding: 'utf8' }).trim().split('\n');
  for (const chunk of chunks.filter((c) => !c.endsWith('.min.js'))) {
    const code = readFileSync(join(installed, chunk), 'utf8');
    assert.doesNotMatch(code, /Lit is in dev mode/, chunk);
    assert.doesNotMatch(code, /class \w+ extends HTMLElement|lit-html@|litHtmlVersions/, `${chunk} bundles no Lit`);
  }
});

test('a Vite app importing the package bundles one Lit (its own) and registers the three elements', async () => {
  writeFileSync(
    join(consumer, 'main.js'),
    `import 'notif-inbox';\nimport { LitElement } from 'lit';\nimport { NotifBell } from 'notif-inbox/notif-bell';\nexport const same = customElements.get('notif-bell') === NotifBell && NotifBell.prototype instanceof LitElement;\n`,
  );
  const { build } = await import('vite');
  const result = await build({
    configFile: false,
    root: consumer,
    logLevel: 'silent',
    build: { write: false, minify: false, lib: { entry: join(consumer, 'main.js'), formats: ['es'], fileName: 'app' } },
  });
  const output = (Array.isArray(result) ? result[0]! : result) as { output: { type: string; code?: string }[] };
  const code = output.output.filter((o) => o.type === 'chunk').map((o) => o.code).join('\n');
  assert.equal(code.match(/litHtmlVersions/g)?.length ?? 0, 1, 'one copy of lit-html');
  assert.doesNotMatch(code, /Lit is in dev mode/);
  for (const tag of ['notif-bell', 'notif-feed', 'notif-message', 'notif-preferences']) assert.ok(new RegExp(`define\\([\`"']${tag}[\`"']\\)`).test(code), `defines <${tag}>`);
});

test('the declarations type-check in a consumer: tag map, events, React JSX and Vue components', () => {
  writeFileSync(
    join(consumer, 'app.tsx'),
    `import type {} from 'notif-inbox/react';
import type {} from 'notif-inbox/vue';
import { getInboxStore, type NotifBell } from 'notif-inbox';
import { NotifClient } from 'notif-inbox/client';
import { registerTranslation } from 'notif-inbox';
import de from 'notif-inbox/i18n/de';
import type { GlobalComponents } from 'vue';
registerTranslation(de);
const bell: NotifBell = document.createElement('notif-bell');
bell.addEventListener('notif-message-click', (e) => e.detail.url?.startsWith('/'));
getInboxStore({ baseUrl: '/', subscriberId: 'a' }).subscribe((s) => s.unseenCount);
new NotifClient({ baseUrl: '/' }).feed('a').then((page) => page.data.length);
export const App = () => <notif-bell base-url="/" subscriberId="a" onnotif-action={(e) => e.detail.button} />;
export const vueProps: InstanceType<GlobalComponents['notif-feed']>['$props'] = { embedded: true };
// @ts-expect-error typed detail
bell.addEventListener('notif-unseen-count-change', (e) => e.detail.url);
// @ts-expect-error typed JSX props
export const Bad = () => <notif-bell theme="blue" />;
`,
  );
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', jsx: 'react-jsx', strict: true, noEmit: true, skipLibCheck: false, lib: ['ES2022', 'DOM', 'DOM.Iterable'], types: [] },
      files: ['app.tsx'],
    }),
  );
  try {
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: consumer, encoding: 'utf8' });
  } catch (e) {
    assert.fail(`tsc in the consumer:\n${(e as { stdout?: string }).stdout}`);
  }
});
