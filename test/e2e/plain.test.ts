import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { clickThrough, runExample, type Running } from './examples.ts';

// demo/plain.html: only the script tag (dist/notif-inbox.min.js), no build step, against the real service.
let running: Running;
before(async () => {
  running = await runExample('plain');
});
after(async () => {
  await running?.close();
});

test('plain: badge, open, mark all read, a CTA button, and a message click that routes without a page load', { timeout: 90_000 }, async () => {
  await clickThrough(running, /Opened \/projects\/7/);
});

test('plain: the preferences come from their own file beside the script tag, and work', { timeout: 90_000 }, async () => {
  const { page, url, errors } = running;
  const files: string[] = [];
  const onRequest = (request: { url(): string }) => {
    if (/\.min\.js(\?|$)/.test(request.url())) files.push(new URL(request.url()).pathname);
  };
  page.on('request', onRequest);
  try {
    await page.goto(url);
    const bell = page.locator('notif-bell');
    await bell.locator('button[aria-haspopup="dialog"]').click();
    await bell.locator('[part~="preferences-button"]').click();
    const switches = bell.locator('notif-preferences [role="switch"]');
    await switches.first().waitFor();
    assert.ok((await switches.count()) > 1, 'the global switch and a workflow\'s');
    // The bell's own file and the preferences' file beside it; the stream's file too once the service
    // turns out to offer a stream (after the first count), and nothing else.
    const loaded = [...new Set(files)].sort();
    assert.ok(loaded.includes('/dist/notif-inbox.min.js') && loaded.includes('/dist/notif-preferences.min.js'), loaded.join(', '));
    assert.deepEqual(loaded.filter((file) => !['/dist/notif-inbox.min.js', '/dist/notif-preferences.min.js', '/dist/live-stream.min.js'].includes(file)), []);
    assert.deepEqual(errors, []);
  } finally {
    page.off('request', onRequest);
  }
});
