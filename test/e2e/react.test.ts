import { after, before, test } from 'node:test';
import { clickThrough, customRowAndPreferences, runExample, type Running } from './examples.ts';

// demo/react (Vite dev server, the example's own vite.config.ts), against the real service.
let running: Running;
before(async () => {
  running = await runExample('react');
});
after(async () => {
  await running?.close();
});

test('react: badge, open, mark all read, a CTA button, and a message click that routes without a page load', { timeout: 90_000 }, async () => {
  await clickThrough(running, /Project 7/);
});

test('react: a note in the app\'s own card (renderMessage), and a preference changed from the bell', { timeout: 90_000 }, async () => {
  await customRowAndPreferences(running);
});
