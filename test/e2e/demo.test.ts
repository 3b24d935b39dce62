import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, startPlayground } from './browser.ts';

// The playground end to end, as `npm start` runs it: the seeded service and the Vite page beside it,
// driven in Chromium. Send a notification from the form; the badge and the feed change.


let playground: Awaited<ReturnType<typeof startPlayground>>;
let browser: Browser;
let page: Page;
let playgroundUrl: string;

before(async () => {
  playground = await startPlayground();
  playgroundUrl = playground.url;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

after(async () => {
  await browser?.close();
  await playground?.stop();
});

const bellButton = () => page.locator('notif-bell button[aria-haspopup="dialog"]');
const badge = () => page.locator('notif-bell [part~="badge"]');
const fullFeedSubjects = () => page.locator('#feed notif-message [part~="subject"]');

test('the playground sends a notification and the badge and feed update live', { timeout: 90_000 }, async () => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(playgroundUrl);

  // Seeded: a subscriber picker with the five demo subscribers, a form with the four workflows.
  await page.locator('#subscriber option').first().waitFor({ state: 'attached' });
  assert.equal(await page.locator('#subscriber option').count(), 5);
  assert.deepEqual(await page.locator('#workflow option').allTextContents(), ['Project invitation', 'Reply to a comment', 'Invoice paid', 'Announcement']);
  await fullFeedSubjects().first().waitFor();
  // The seeded actors' avatars come from the playground itself (demo/public/avatars), not the network.
  const avatar = page.locator('#feed notif-message img[part~="avatar"]').first();
  await avatar.waitFor();
  assert.match((await avatar.getAttribute('src')) ?? '', /^\/avatars\/\w+\.svg$/);
  await page.waitForFunction((img) => (img as HTMLImageElement).complete, await avatar.elementHandle());
  assert.ok(await avatar.evaluate((img) => (img as HTMLImageElement).naturalWidth > 0), 'the avatar image loaded');
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

test('the playground at 375 px: nothing wider than the screen, before or after opening the bell; its links styled', { timeout: 60_000 }, async () => {
  const phone = await browser.newPage({ viewport: { width: 375, height: 700 } });
  try {
    await phone.goto(playgroundUrl);
    await phone.locator('#subscriber option').first().waitFor({ state: 'attached' });
    const width = () => phone.evaluate(() => document.documentElement.scrollWidth);
    assert.equal(await width(), 375);
    const bell = await phone.locator('notif-bell').boundingBox();
    assert.ok(bell && bell.x + bell.width <= 375, 'the bell on screen');
    await phone.locator('notif-bell button[aria-haspopup="dialog"]').click();
    await phone.locator('notif-bell [part~="popover"] notif-message').first().waitFor();
    assert.equal(await width(), 375, 'opening the bell does not widen the page');
    // "Every state" is a styled link (the accent colour, no underline), not the browser's default.
    const link = phone.locator('a.nav-link');
    assert.equal(await link.evaluate((a) => getComputedStyle(a).textDecorationLine), 'none');

    // The subscriber picker with the longest seeded name: shown whole, or cut with an ellipsis and
    // the whole name in its title; never cut mid-letter with nothing to say so. The link stays on one line.
    await phone.goto(`${playgroundUrl}?subscriber=katherine`);
    await phone.locator('#subscriber option').first().waitFor({ state: 'attached' });
    const picker = await phone.locator('#subscriber').evaluate((select) => {
      const s = select as HTMLSelectElement;
      // The same select with all the room it wants, where the page's CSS still applies to it.
      const natural = s.cloneNode(true) as HTMLSelectElement;
      natural.removeAttribute('id');
      natural.value = s.value;
      natural.style.cssText = 'position: absolute; visibility: hidden; max-inline-size: none';
      s.after(natural);
      const wanted = natural.getBoundingClientRect().width;
      natural.remove();
      return { name: s.selectedOptions[0]?.textContent, title: s.title, width: s.getBoundingClientRect().width, wanted, overflow: getComputedStyle(s).textOverflow };
    });
    assert.equal(picker.name, 'Katherine Johnson');
    if (picker.width < picker.wanted - 0.5) {
      assert.equal(picker.overflow, 'ellipsis', `the name is cut (${picker.width} of ${picker.wanted} px): with an ellipsis`);
      assert.equal(picker.title, 'Katherine Johnson', 'and the whole name as its title');
    }
    assert.equal(await link.evaluate((a) => { const r = document.createRange(); r.selectNodeContents(a); return r.getClientRects().length; }), 1, '"Every state" on one line');
    assert.equal(await width(), 375);
  } finally {
    await phone.close();
  }
});

test('"Embed it" shows the development key, wraps within its card at 375 px, and copies the snippet', { timeout: 60_000 }, async () => {
  const { apiKey } = (await (await fetch(new URL('/demo-config.json', playgroundUrl))).json()) as { apiKey: string };
  assert.match(apiKey, /\S{16,}/, 'the playground has the development key');
  const context = await browser.newContext({ viewport: { width: 375, height: 700 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(playgroundUrl).origin });
  const phone = await context.newPage();
  try {
    await phone.goto(playgroundUrl);
    await phone.locator('#subscriber option').first().waitFor({ state: 'attached' });
    await phone.locator('.snippet summary').click();
    const snippet = phone.locator('#snippet');
    await snippet.waitFor();
    const text = (await snippet.textContent()) ?? '';
    assert.ok(text.includes(`api-key="${apiKey}"`), text);
    assert.ok(!text.includes('(development only)'), text);
    // Nothing of it is cut or scrolled away: the code fits its box, and the box its card.
    const fits = await phone.locator('.snippet pre').evaluate((pre) => {
      const card = pre.closest('.card')!.getBoundingClientRect();
      const box = pre.getBoundingClientRect();
      return { scrolls: pre.scrollWidth > pre.clientWidth, inside: box.left >= card.left && box.right <= card.right };
    });
    assert.deepEqual(fits, { scrolls: false, inside: true });
    assert.equal(await phone.evaluate(() => document.documentElement.scrollWidth), 375);

    await phone.locator('#copy-snippet').click();
    await phone.locator('#copy-snippet', { hasText: 'Copied' }).waitFor();
    assert.equal(await phone.evaluate(() => navigator.clipboard.readText()), text);
  } finally {
    await context.close();
  }
});
