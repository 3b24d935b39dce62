import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';

// The playground end to end, as `npm start` runs it: the seeded service and the Vite page beside it,
// driven in Chromium. Send a notification from the form; the badge and the feed change.

const ROOT = resolve(import.meta.dirname, '../..');

let child: ChildProcess;
let dir: string;
let browser: Browser;
let page: Page;
let playgroundUrl: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'notif-e2e-'));
  child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', 'serve', '--port', '0', '--db', join(dir, 'notif.db'), '--demo'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  playgroundUrl = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`playground did not start in 60 s:\n${output}`)), 60_000);
    const onData = (chunk: string) => {
      output += chunk;
      const m = /playground on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]!);
      }
    };
    child.stdout!.setEncoding('utf8').on('data', onData);
    child.stderr!.setEncoding('utf8').on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

after(async () => {
  await browser?.close();
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
});

const bellButton = () => page.locator('notif-bell button[aria-haspopup="dialog"]');
const badge = () => page.locator('notif-bell [part~="badge"]');
const fullFeedSubjects = () => page.locator('#feed notif-message [part~="subject"]');

test('the playground sends a notification and the badge and feed update live', { timeout: 90_000 }, async () => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(playgroundUrl);

  // Seeded: a subscriber picker with the five demo subscribers, a form with the three workflows.
  await page.locator('#subscriber option').first().waitFor({ state: 'attached' });
  assert.equal(await page.locator('#subscriber option').count(), 5);
  assert.deepEqual(await page.locator('#workflow option').allTextContents(), ['Project invitation', 'Reply to a comment', 'Invoice paid']);
  await fullFeedSubjects().first().waitFor();
  await badge().waitFor();
  const before = Number(await badge().textContent());
  assert.ok(before > 0, `seeded unseen messages, badge ${before}`);
  const firstSubject = await fullFeedSubjects().first().textContent();

  // Send a project invitation to the subscriber on screen.
  await page.selectOption('#workflow', 'project-invite');
  await page.fill('input[name="project"]', 'Playwright Project');
  await page.click('#send');
  await page.locator('#send-status', { hasText: 'Sent.' }).waitFor();

  await page.locator('notif-bell [part~="badge"]', { hasText: String(before + 1) }).waitFor({ timeout: 10_000 });
  await page.locator('#feed notif-message [part~="subject"]', { hasText: 'Playwright Project' }).first().waitFor({ timeout: 10_000 });
  const newest = await fullFeedSubjects().first().textContent();
  assert.match(newest ?? '', /invited you to Playwright Project/);
  assert.notEqual(newest, firstSubject);

  // The bell's popover shows it too; opening clears the badge.
  await bellButton().click();
  await page.locator('notif-bell [part~="popover"] notif-message [part~="subject"]', { hasText: 'Playwright Project' }).first().waitFor();
  await badge().waitFor({ state: 'detached' });
  const label = await bellButton().getAttribute('aria-label');
  assert.equal(label, 'Notifications');

  // Accept the invitation from the popover: the result replaces the buttons.
  const invite = page.locator('notif-bell [part~="popover"] notif-message', { hasText: 'Playwright Project' }).first();
  await invite.locator('[part~="button"]', { hasText: 'Accept' }).click();
  await invite.locator('[part~="action-result"]', { hasText: 'You joined Playwright Project' }).waitFor();
  await page.keyboard.press('Escape');
  await page.locator('notif-bell[open]').waitFor({ state: 'detached' });

  assert.deepEqual(errors, []);
});
