import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium, startPlayground } from './browser.ts';

// README.md's "Your first notification" from a new user's side: a bell for a subscriber the service
// has never seen is on the page before the commands run (every sign-up's first visit); the
// commands, as printed, make the subscriber and send it a message, which the bell shows. The bell's
// text is read every 250 ms throughout: no error state at any moment.

const README = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
/** How often the bell's text is read for an error (ms). */
const SAMPLE_EVERY = 250;
/** What an error state says (English), and a developer's message people must never read. */
const ERROR_TEXT = /Couldn't load|unavailable|not configured|Access was refused/i;

/** The section's shell blocks, without the lines that set what the reader fills in (NOTIF=, KEY=). */
function firstNotificationCommands(): string[] {
  const start = README.indexOf('\n## Your first notification\n');
  const end = README.indexOf('\n## ', start + 1);
  const section = README.slice(start, end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((match) => match[1]!.split('\n').filter((line) => !/^(NOTIF|KEY)=/.test(line)).join('\n').trim())
    .filter((block) => block.length > 0);
}

let playground: Awaited<ReturnType<typeof startPlayground>>;
let browser: Browser;

before(async () => {
  playground = await startPlayground();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await playground?.stop();
});

test("the README's commands reach a bell opened for a brand-new subscriber, with no error shown at any moment", { timeout: 120_000 }, async () => {
  const { apiUrl, apiKey } = (await (await fetch(new URL('/demo-config.json', playground.url))).json()) as { apiUrl: string; apiKey: string };
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(playground.url);
  await page.locator('#subscriber option').first().waitFor({ state: 'attached' });
  // Margaret's bell, before the service knows her.
  await page.evaluate(
    ({ apiUrl, apiKey, every, errorText }) => {
      const bell = document.createElement('notif-bell');
      bell.id = 'margaret';
      bell.setAttribute('base-url', apiUrl);
      bell.setAttribute('api-key', apiKey);
      bell.setAttribute('subscriber-id', 'margaret');
      document.querySelector('.topbar-end')!.append(bell);
      // (No named function in here: the test's transform would wrap it in a helper the page lacks.)
      const samples = { count: 0, errors: [] as string[] };
      setInterval(() => {
        samples.count++;
        // The text of the bell and of every shadow root inside it.
        const roots: (ShadowRoot | null)[] = [bell.shadowRoot];
        let text = '';
        let error = false;
        while (roots.length > 0) {
          const root = roots.pop();
          if (!root) continue;
          text += ' ' + root.textContent;
          if (root.querySelector('[part~="error"]')) error = true;
          for (const el of root.querySelectorAll('*')) if (el.shadowRoot) roots.push(el.shadowRoot);
        }
        if (error || new RegExp(errorText, 'i').test(text)) samples.errors.push(text.replace(/\s+/g, ' ').trim());
      }, every);
      (window as unknown as { samples: typeof samples }).samples = samples;
    },
    { apiUrl, apiKey, every: SAMPLE_EVERY, errorText: ERROR_TEXT.source },
  );
  await page.locator('#margaret button[aria-haspopup="dialog"]').click();
  await page.locator('#margaret notif-feed [part~="empty"]').waitFor();

  for (const block of firstNotificationCommands()) {
    const output = execFileSync('sh', ['-ec', block], { env: { ...process.env, NOTIF: apiUrl, KEY: apiKey }, encoding: 'utf8' });
    assert.equal(JSON.parse(output).statusCode, undefined, `${block}\nanswered ${output}`);
  }
  // The bell asks for its count every 15 s by default; the next answer finds Margaret, and her message.
  await page.locator('#margaret notif-message', { hasText: 'Your order A-1042 has shipped' }).waitFor({ timeout: 45_000 });
  // A last sample after the message shows.
  await page.waitForTimeout(SAMPLE_EVERY * 2);
  const samples = await page.evaluate(() => (window as unknown as { samples: { count: number; errors: string[] } }).samples);
  assert.ok(samples.count >= 4, `sampled ${samples.count} times`);
  assert.deepEqual(samples.errors, [], 'no error state at any moment');
  assert.deepEqual(pageErrors, []);
  await page.close();
});
