// What every framework example's end-to-end test does (test/e2e/{react,vue,plain}.test.ts): start
// the real service with the example's subscriber and messages, serve the example, and click
// through it in Chromium.
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
// @ts-expect-error a plain .mjs module without declarations
import { serveExample, startExampleService } from '../../scripts/examples.mjs';
import { launchChromium } from './browser.ts';


export interface ExampleService {
  baseUrl: string;
  apiKey: string;
  subscriberId: string;
  stop(): Promise<void>;
}

export interface Running {
  service: ExampleService;
  url: string;
  browser: Browser;
  page: Page;
  errors: string[];
  close(): Promise<void>;
}

/** The service, the example `name` served beside it, and a Chromium page on it. */
export async function runExample(name: 'react' | 'vue' | 'plain'): Promise<Running> {
  const service: ExampleService = await startExampleService();
  let served: { url: string; close(): Promise<void> } | undefined;
  let browser: Browser | undefined;
  try {
    served = (await serveExample(name, service)) as { url: string; close(): Promise<void> };
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    const s = served;
    const b = browser;
    return {
      service,
      url: s.url,
      browser: b,
      page,
      errors,
      close: async () => {
        await b.close();
        await s.close();
        await service.stop();
      },
    };
  } catch (e) {
    await browser?.close();
    await served?.close();
    await service.stop();
    throw e;
  }
}

async function api<T>(service: ExampleService, path: string): Promise<T> {
  const res = await fetch(`${service.baseUrl}${path}`, { headers: { authorization: `ApiKey ${service.apiKey}` } });
  assert.equal(res.status, 200, path);
  return (await res.json()) as T;
}

/**
 * The click-through every example must pass: the badge shows the three unseen messages; opening
 * the bell shows them and clears the badge; mark all read clears every unread dot (on the server
 * too); Accept on an invitation shows its result (and the server records the action); clicking
 * a message routes inside the app, without a page load.
 */
export async function clickThrough({ page, url, service, errors }: Running, routeText: RegExp): Promise<void> {
  await page.goto(url);
  await page.evaluate(() => ((window as unknown as { samePage: string }).samePage = 'yes'));

  const badge = page.locator('notif-bell [part~="badge"]');
  await badge.filter({ hasText: '3' }).waitFor({ timeout: 15_000 });

  await page.locator('notif-bell button[aria-haspopup="dialog"]').click();
  const messages = page.locator('notif-bell [part~="popover"] notif-message');
  await messages.nth(2).waitFor();
  assert.equal(await messages.count(), 3);
  await badge.waitFor({ state: 'detached' });

  const dots = page.locator('notif-bell [part~="popover"] [part~="unread-dot"]');
  assert.equal(await dots.count(), 3);
  await page.locator('notif-bell [part~="mark-all-button"]').click();
  await dots.first().waitFor({ state: 'detached' });
  assert.equal(await dots.count(), 0);
  await waitFor(async () => (await api<{ data: { read: boolean }[] }>(service, `/v1/subscribers/${service.subscriberId}/notifications/feed?read=false`)).data.length === 0, 'the server has no unread message');

  const invite = messages.filter({ hasText: 'Analytical Engine' });
  await invite.locator('[part~="button"]', { hasText: 'Accept' }).click();
  await invite.locator('[part~="action-result"]', { hasText: 'You joined Analytical Engine' }).waitFor();
  await waitFor(async () => {
    const feed = await api<{ data: { subject: string; cta?: { action?: { status?: string } } }[] }>(service, `/v1/subscribers/${service.subscriberId}/notifications/feed`);
    return feed.data.find((m) => m.subject.includes('Analytical Engine'))?.cta?.action?.status === 'done';
  }, 'the server recorded the action');

  await messages.filter({ hasText: 'Bombe' }).locator('[part~="link"]').click();
  await page.locator('[data-testid="route"], #route').filter({ hasText: routeText }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/projects/7');
  assert.equal(await page.evaluate(() => (window as unknown as { samePage?: string }).samePage), 'yes', 'no page load');

  assert.deepEqual(errors, []);
}

async function waitFor(check: () => Promise<boolean>, what: string, timeout = 5000): Promise<void> {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`timed out waiting: ${what}`);
}

/**
 * The React and Vue examples' own rendering and the preferences: the note shows in the app's own
 * card (framework components in the row's light-DOM host), its "Mark unread" changes the server;
 * the bell's preferences button shows <notif-preferences>, whose switch turns the note workflow's
 * in-app channel off on the server; back shows the messages.
 */
export async function customRowAndPreferences({ page, service, errors }: Running): Promise<void> {
  const bell = page.locator('notif-bell');
  if (!(await bell.locator('[part~="popover"] notif-feed').count())) await bell.locator('button[aria-haspopup="dialog"]').click();
  const card = bell.locator('[data-testid="note-card"]');
  await card.filter({ hasText: 'Welcome aboard' }).waitFor();
  assert.equal(await card.count(), 1, 'one note, in the app\'s card; the invitations keep the built-in row');
  assert.ok(await card.isVisible());
  assert.equal(await card.evaluate((el) => getComputedStyle(el).borderInlineStartStyle), 'solid', "the page's CSS applies");
  await card.locator('button', { hasText: 'Mark unread' }).click();
  await card.locator('button', { hasText: 'Mark read' }).waitFor();
  await waitFor(async () => {
    const feed = await api<{ data: { subject: string; read: boolean }[] }>(service, `/v1/subscribers/${service.subscriberId}/notifications/feed`);
    return feed.data.find((m) => m.subject === 'Welcome aboard')?.read === false;
  }, 'the note unread on the server');

  await bell.locator('[part~="preferences-button"]').click();
  const prefs = bell.locator('notif-preferences');
  // The note has one channel, in-app: its one switch is the workflow's own, in its legend.
  const noteInApp = prefs.locator('fieldset', { hasText: 'Note' }).locator('legend input[role="switch"]');
  await noteInApp.waitFor();
  assert.equal(await noteInApp.isChecked(), true);
  await noteInApp.click();
  await waitFor(async () => {
    const p = await api<{ workflows: { channels: { in_app?: boolean }; workflow: { identifier: string } }[] }>(service, `/v2/subscribers/${service.subscriberId}/preferences`);
    return p.workflows.find((w) => w.workflow.identifier === 'example-note')?.channels.in_app === false;
  }, 'the note workflow muted on the server');
  await bell.locator('[part~="back-button"]').click();
  await bell.locator('[part~="popover"] notif-message').first().waitFor();
  assert.deepEqual(errors, []);
}
