import { after, before, test } from 'node:test';
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
