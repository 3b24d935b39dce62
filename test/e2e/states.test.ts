import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, startPlayground } from './browser.ts';

// The playground's "every state" page as `npm start` serves it: real subscribers made at page load
// (idempotently), each state visible, and the theme controls with their CSS snippet.

let playground: Awaited<ReturnType<typeof startPlayground>>;
let browser: Browser;
let page: Page;
let url: string;

before(async () => {
  playground = await startPlayground();
  url = `${playground.url}states.html`;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
});

after(async () => {
  await browser?.close();
  await playground?.stop();
});

const card = (title: string) => page.locator('.state-card', { has: page.locator('h2', { hasText: title }) });

async function totals(): Promise<Record<string, number>> {
  return page.evaluate(async () => {
    const c = (await (await fetch('/demo-config.json')).json()) as { apiUrl: string; apiKey: string };
    const out: Record<string, number> = {};
    for (const s of ['empty', 'three', 'many', 'long', 'cta', 'read']) {
      const r = await fetch(`${c.apiUrl}/v1/subscribers/state-${s}/notifications/feed?limit=1`, { headers: { authorization: `ApiKey ${c.apiKey}` } });
      out[s] = ((await r.json()) as { totalCount: number }).totalCount;
    }
    return out;
  });
}

async function workflowNames(): Promise<string[]> {
  return page.evaluate(async () => {
    const c = (await (await fetch('/demo-config.json')).json()) as { apiUrl: string; apiKey: string };
    const r = await fetch(`${c.apiUrl}/v2/workflows`, { headers: { authorization: `ApiKey ${c.apiKey}` } });
    return ((await r.json()) as { workflows: { name: string }[] }).workflows.map((w) => w.name);
  });
}

test('every state side by side, on real subscribers made at page load, again the same after a reload', { timeout: 120_000 }, async () => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.locator('html[data-states-ready]').waitFor({ timeout: 90_000 });
  const expected = { empty: 0, three: 3, many: 500, long: 2, cta: 2, read: 4 };
  assert.deepEqual(await totals(), expected);

  await card('Empty').locator('[part~="empty"]').waitFor();
  await card('Loading').locator('[part~="skeleton"]').first().waitFor();
  await card('Error').locator('[part~="error"]').waitFor();
  await card('3 messages').locator('notif-message').nth(2).waitFor();
  assert.equal(await card('500 messages').locator('notif-message').count() > 0, true);
  // Newest first, in the order they were made: 500, 499, 498, ...
  // (The list is windowed: the rows in and near the view are rendered, about a dozen here.)
  const subjects = await card('500 messages').locator('notif-message [part~="subject"]').allTextContents();
  assert.ok(subjects.length >= 5, `${subjects.length} rows rendered`);
  assert.deepEqual(subjects, Array.from({ length: subjects.length }, (_, i) => `Message ${500 - i} of 500`));
  assert.match(await page.locator('.build').innerText(), /Lit's development build/);
  await card('CTA pending and done').locator('[part~="action-result"]').waitFor();
  assert.equal(await card('CTA pending and done').locator('[part~="button"]', { hasText: 'Accept' }).count(), 1, 'one invitation still pending');
  await card('Read and unread').locator('notif-message').nth(3).waitFor();
  assert.equal(await card('Read and unread').locator('[part~="unread-dot"]').count(), 2);
  assert.equal(await card('Dark').locator('notif-feed').getAttribute('theme'), 'dark');
  assert.equal(await card('Right to left').getAttribute('dir'), 'rtl');
  await page.locator('notif-bell[data-for="many"] [part~="badge"]', { hasText: '99+' }).waitFor();
  await page.locator('notif-bell[data-for="three"] [part~="badge"]', { hasText: '3' }).waitFor();

  // The custom-render state: the notes in the page's own markup (styled by its CSS); the test below
  // checks all four.
  const notes = card('Custom rendering').locator('.app-note');
  await notes.first().waitFor();
  assert.equal(await notes.first().evaluate((el) => getComputedStyle(el).borderInlineStartStyle), 'solid');
  // The preferences panel: the demo environment's workflows, and no workflow of the page's own
  // (what the page makes shows in every demo subscriber's preferences, the bell's gear too).
  await card('Preferences').locator('notif-preferences [role="switch"]').first().waitFor();
  const seeded = ['Announcement', 'Invoice paid', 'Project invitation', 'Reply to a comment'];
  const legends = await card('Preferences').locator('notif-preferences fieldset legend').allTextContents();
  assert.deepEqual(legends.map((l) => l.trim()).sort(), seeded);
  assert.deepEqual((await workflowNames()).sort(), seeded);

  await page.reload();
  await page.locator('html[data-states-ready]').waitFor({ timeout: 60_000 });
  assert.deepEqual(await totals(), expected, 'a second load adds nothing');
  assert.deepEqual((await workflowNames()).sort(), seeded, 'nor a workflow');
  assert.deepEqual(errors, []);
});

test('a theme control restyles every state and writes the CSS to copy', { timeout: 30_000 }, async () => {
  // A control for each custom property of the theming API (colours built from data, the rest literal in the CSS).
  const names = await page.$$eval('#theme-controls input[type="text"]', (inputs) => inputs.map((i) => (i as HTMLInputElement).name));
  for (const name of ['--notif-color-surface', '--notif-color-accent', '--notif-color-on-badge', '--notif-shadow', '--notif-radius', '--notif-font-family', '--notif-popover-width', '--notif-bell-color']) {
    assert.ok(names.includes(name), `a control for ${name} (have: ${names.join(' ')})`);
  }
  const feed = card('3 messages').locator('notif-feed');
  const surface = () => feed.evaluate((el) => getComputedStyle(el.shadowRoot!.querySelector('[part~="base"]')!).backgroundColor);
  const before = await surface();
  await page.fill('input[type="text"][name="--notif-color-surface"]', '#ffeedd');
  assert.equal(await surface(), 'rgb(255, 238, 221)');
  assert.notEqual(before, 'rgb(255, 238, 221)');
  assert.match((await page.locator('#theme-snippet').textContent()) ?? '', /--notif-color-surface: #ffeedd;/);
  await page.click('#theme-reset');
  assert.equal(await surface(), before);
  assert.doesNotMatch((await page.locator('#theme-snippet').textContent()) ?? '', /--notif-color-surface:/);
});

// The card is below the fold and never scrolled to: its list still shows every row (and so does the
// right-to-left card's, as far below).
test('the custom-render state shows all four notes with their unread marks', { timeout: 120_000 }, async () => {
  await page.goto(url);
  await page.locator('html[data-states-ready]').waitFor({ timeout: 90_000 });
  const custom = card('Custom rendering');
  await custom.locator('.app-note').nth(3).waitFor({ timeout: 10_000 });
  assert.equal(await custom.locator('[part~="unread-dot"]').count(), 2, 'the unread marks stay');
  await card('Right to left').locator('notif-message').nth(2).waitFor({ timeout: 10_000 });
});

test('the playground lists the people it seeded first, and the every-state page\'s subscribers in a group of their own', { timeout: 60_000 }, async () => {
  await page.goto(url);
  await page.locator('html[data-states-ready]').waitFor({ timeout: 90_000 });
  await page.goto(playground.url);
  for (const picker of ['#subscriber', '#recipient']) {
    await page.locator(`${picker} option`).first().waitFor({ state: 'attached' });
    const values = (selector: string) => page.locator(selector).evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
    const people = await values(`${picker} > option`);
    assert.equal(people.length, 5, `${picker}: ${people.join(', ')}`);
    assert.ok(people.every((id) => !id.startsWith('state-')), `${picker}: ${people.join(', ')}`);
    assert.equal(await page.locator(`${picker} > optgroup`).getAttribute('label'), 'Every-state page');
    const states = await values(`${picker} > optgroup > option`);
    assert.ok(states.length >= 6 && states.every((id) => id.startsWith('state-')), `${picker}'s group: ${states.join(', ')}`);
  }
  assert.equal(await page.locator('#subscriber').inputValue(), await page.locator('#subscriber > option').first().getAttribute('value'));
});
