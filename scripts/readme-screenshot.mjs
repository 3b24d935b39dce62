// The README's screenshot, docs/images/playground.png: the playground as `npm start` serves it (the
// demo data), on a desktop, with the bell's popover open over the full-page feed.
//   npm run screenshot
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.mjs';
import { startService } from './service.mjs';

const OUT = resolve(import.meta.dirname, '../docs/images/playground.png');
const VIEWPORT = { width: 1280, height: 720 };

const playground = await startService({ name: 'notif-screenshot-', args: ['--demo'], ready: /playground on (http:\/\/\S+)/ });
const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage({ viewport: VIEWPORT, colorScheme: 'light' });
  await page.goto(playground.url);
  await page.locator('#feed notif-message').first().waitFor();
  await page.locator('notif-bell [part~="badge"]').waitFor();
  await page.locator('notif-bell button[aria-haspopup="dialog"]').click();
  await page.locator('notif-bell [part~="popover"] notif-message').first().waitFor();
  // The popover's entrance and the avatars' images done.
  await page.waitForFunction(() => [...document.images].every((image) => image.complete));
  await page.waitForTimeout(500);
  mkdirSync(dirname(OUT), { recursive: true });
  await page.screenshot({ path: OUT });
  console.log(`wrote ${OUT}`);
} finally {
  await browser.close();
  await playground.stop();
}
