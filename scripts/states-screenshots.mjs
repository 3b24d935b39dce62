// Screenshots of the elements' states on the playground, to look at by eye: the bell's popover
// loading, empty (a subscriber the service has not seen yet), refused (a wrong key) and with short
// messages, at 375 px and on a desktop, light and dark; a long body; the preferences.
//   node scripts/states-screenshots.mjs [folder]   (default: a temporary folder, printed)
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.mjs';
import { startService } from './service.mjs';

const out = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'notif-shots-'));
mkdirSync(out, { recursive: true });
const VIEWPORTS = { phone: { width: 375, height: 760 }, desktop: { width: 1280, height: 860 } };
const LONG_BODY = Array(12).fill('The analytical engine weaves algebraic patterns just as the Jacquard loom weaves flowers and leaves.').join(' ');

const playground = await startService({ name: 'notif-shots-', args: ['--demo'], ready: /playground on (http:\/\/\S+)/ });
const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
try {
  const config = await (await fetch(new URL('/demo-config.json', playground.url))).json();
  const api = (path, body) =>
    fetch(config.apiUrl + path, { method: 'POST', headers: { authorization: `ApiKey ${config.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await api('/v2/workflows', { workflowId: 'short', name: 'Short', steps: [{ name: 'in-app', type: 'in_app', controlValues: { subject: '{{payload.subject}}', body: '{{payload.body}}' } }] });
  await api('/v1/events/trigger', { name: 'short', to: 'short-one', payload: { subject: 'Hi', body: 'Ok' } });
  await api('/v1/events/trigger', { name: 'short', to: 'long-one', payload: { subject: 'A long one', body: LONG_BODY } });

  for (const [size, viewport] of Object.entries(VIEWPORTS)) {
    for (const scheme of ['light', 'dark']) {
      const page = await browser.newPage({ viewport, colorScheme: scheme });
      await page.goto(playground.url);
      await page.locator('#subscriber option').first().waitFor({ state: 'attached' });
      for (const [state, attributes] of Object.entries({
        loading: { 'subscriber-id': 'held', hold: true },
        empty: { 'subscriber-id': `new-user-${Date.now()}` },
        refused: { 'subscriber-id': 'short-one', 'api-key': 'wrong-key' },
        short: { 'subscriber-id': 'short-one' },
        long: { 'subscriber-id': 'long-one' },
      })) {
        // A bell of its own in the top bar, in place of the playground's.
        await page.evaluate(
          ({ attributes, apiUrl, apiKey }) => {
            document.querySelector('#shot-bell')?.remove();
            document.querySelector('#bell').hidden = true;
            const bell = document.createElement('notif-bell');
            bell.id = 'shot-bell';
            bell.setAttribute('base-url', apiUrl);
            bell.setAttribute('api-key', attributes['api-key'] ?? apiKey);
            bell.setAttribute('subscriber-id', attributes['subscriber-id']);
            bell.setAttribute('live', 'poll');
            if (attributes.hold) bell.fetch = () => new Promise(() => {});
            document.querySelector('.topbar-end').append(bell);
          },
          { attributes, apiUrl: config.apiUrl, apiKey: config.apiKey },
        );
        await page.locator('#shot-bell button[aria-haspopup="dialog"]').click();
        const ready = { loading: '[part~="skeleton"]', empty: '[part~="empty"]', refused: '[part~="error"]', short: 'notif-message', long: 'notif-message' }[state];
        await page.locator(`#shot-bell notif-feed ${ready}`).first().waitFor();
        if (state === 'long') {
          await page.locator('#shot-bell notif-message [part~="more-button"]').first().waitFor();
          await page.waitForTimeout(400);
          await page.screenshot({ path: join(out, `${size}-${scheme}-long-cut.png`) });
          await page.locator('#shot-bell notif-message [part~="more-button"]').first().click();
        }
        await page.waitForTimeout(400);
        await page.screenshot({ path: join(out, `${size}-${scheme}-${state}.png`) });
        const widths = await page.evaluate(() => {
          const bell = document.querySelector('#shot-bell');
          const popover = bell.shadowRoot.querySelector('[popover]');
          const feed = bell.shadowRoot.querySelector('notif-feed');
          return { popover: popover.clientWidth, feed: feed.getBoundingClientRect().width };
        });
        console.log(`${size} ${scheme} ${state}: popover ${widths.popover} px, feed ${Math.round(widths.feed)} px`);
        await page.keyboard.press('Escape');
      }
      // The preferences, from the gear of a bell with short messages.
      await page.locator('#shot-bell button[aria-haspopup="dialog"]').click();
      await page.locator('#shot-bell [part~="preferences-button"]').click();
      await page.locator('#shot-bell notif-preferences [part~="global"]').waitFor();
      await page.waitForTimeout(400);
      await page.screenshot({ path: join(out, `${size}-${scheme}-preferences.png`) });
      await page.close();
    }
  }
  console.log(`screenshots in ${out}`);
} finally {
  await browser.close();
  await playground.stop();
}
