import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { launchChromium } from './browser.ts';

// The first run of a new user: a fresh clone (the repository's files, its dependencies installed, no
// dist/), then `npm start`, which prints no warning, and `npm run example -- plain`, `react` and `vue`.
// Each page has its stylesheet and no console error, and stopping the command leaves no process and no
// temporary database behind.

const ROOT = resolve(import.meta.dirname, '../..');
let clone: string;

before(() => {
  clone = mkdtempSync(join(tmpdir(), 'notif-clone-'));
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) {
    if (!existsSync(join(ROOT, f)) || f.startsWith('dist/') || f == 'node_modules') continue;
    mkdirSync(dirname(join(clone, f)), { recursive: true });
    cpSync(join(ROOT, f), join(clone, f));
  }
  // `npm install` stands for a symlink to the installed dependencies (never written to).
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
  assert.equal(existsSync(join(clone, 'dist')), false);
});
after(() => rmSync(clone, { recursive: true, force: true }));

/** `npm run example -- name` in the clone: resolves with its page's URL once it prints it. */
function runExample(name: string) {
  const child = spawn('npm', ['run', 'example', '--', name], { cwd: clone, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const url = new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL in 240 s:\n${output}`)), 240_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      const m = new RegExp(`${name} example on (http://\\S+)`).exec(output);
      if (m) clearTimeout(timer), resolveUrl(m[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`exited with ${code}:\n${output}`))));
  });
  return { child, url, output: () => output };
}

/** The example services' temporary database folders. */
const databases = () => readdirSync(tmpdir()).filter((f) => f.startsWith('notif-example-'));

/** The process ids in `pid`'s process group still alive. */
function group(pid: number): string[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '-g', String(pid)], { encoding: 'utf8' }).split('\n').map((s) => s.trim()).filter(Boolean);
  } catch {
    return [];
  }
}

for (const name of ['plain', 'react', 'vue']) {
  test(`npm run example -- ${name} on a fresh clone: styled, no console error, nothing left running`, { timeout: 300_000 }, async () => {
    const before = databases();
    const run = runExample(name);
    const browser = await launchChromium();
    try {
      const url = await run.url;
      const serviceUrl = /service on (http:\/\/\S+)/.exec(run.output())![1]!;
      const page = await browser.newPage({ viewport: { width: 375, height: 700 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      await page.goto(url);
      await page.locator('notif-bell [part~="badge"]').filter({ hasText: '3' }).waitFor({ timeout: 20_000 });
      // The bar's stylesheet applied: a white bar, the body without its default margin.
      assert.equal(await page.locator('.bar').evaluate((el) => getComputedStyle(el).backgroundColor), 'rgb(255, 255, 255)');
      assert.equal(await page.evaluate(() => getComputedStyle(document.body).margin), '0px');
      assert.match(await page.locator('.build').innerText(), /build/);
      assert.deepEqual(errors, []);

      process.kill(-run.child.pid!, 'SIGINT');
      await new Promise((r) => (run.child.exitCode === null ? run.child.once('exit', r) : r(null)));
      const end = Date.now() + 10_000;
      while (group(run.child.pid!).length && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(group(run.child.pid!), [], 'no process left in the example\'s group');
      await assert.rejects(fetch(`${serviceUrl}/health`), 'the service is stopped');
      assert.deepEqual(databases().filter((d) => !before.includes(d)), [], 'the temporary database removed');
    } finally {
      if (group(run.child.pid!).length) process.kill(-run.child.pid!, 'SIGKILL');
      await browser.close();
    }
  });
}

test('npm start on a fresh clone: the playground, and no warning once its pages are served', { timeout: 300_000 }, async () => {
  const db = mkdtempSync(join(tmpdir(), 'notif-start-'));
  const child = spawn('npm', ['start', '--', '--port', '0', '--db', join(db, 'notif.db')], { cwd: clone, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c));
  child.stderr.on('data', (c: Buffer) => (output += c));
  const browser = await launchChromium();
  try {
    const end = Date.now() + 240_000;
    while (!/playground on (http:\/\/\S+)/.test(output) && child.exitCode === null && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    const url = /playground on (http:\/\/\S+)/.exec(output)?.[1];
    assert.ok(url, `no playground URL:\n${output}`);
    const page = await browser.newPage();
    await page.goto(url);
    await page.locator('#feed notif-message').first().waitFor({ timeout: 60_000 });
    await page.goto(new URL('states.html', url).href);
    await page.locator('notif-feed').first().waitFor({ timeout: 60_000 });
    await new Promise((r) => setTimeout(r, 2000));
    // Vite has scanned and optimized the pages' dependencies by now: it once printed "(!) Failed to run
    // dependency scan ... notif-inbox/react could not be resolved" with a stack trace here.
    // (npm's own complaint about a machine's config, from its npmrc or, under `npm run`, the
    // npm_config_* variables npm sets for its children, is not the project's output)
    const lines = output.split('\n').filter((l) => l.trim() && !/^npm warn Unknown (user|env) config/.test(l));
    assert.match(output, /development API key/);
    assert.deepEqual(lines.filter((l) => /\(!\)|warn|error|fail|could not be resolved|^\s+at /i.test(l)), []);
  } finally {
    await browser.close();
    if (group(child.pid!).length) process.kill(-child.pid!, 'SIGTERM');
    const stop = Date.now() + 10_000;
    while (group(child.pid!).length && Date.now() < stop) await new Promise((r) => setTimeout(r, 100));
    if (group(child.pid!).length) process.kill(-child.pid!, 'SIGKILL');
    rmSync(db, { recursive: true, force: true });
  }
});
