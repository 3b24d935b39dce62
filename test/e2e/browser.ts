import { chromium, type Browser } from 'playwright-core';
// @ts-expect-error a plain .mjs module without declarations
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../scripts/chromium.mjs';
// @ts-expect-error a plain .mjs module without declarations
import { startService } from '../../scripts/service.mjs';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** `npm start` as a test runs it: the seeded service with the playground, on free ports, in a temporary folder. */
export function startPlayground(): Promise<{ url: string; stop(): Promise<void> }> {
  return startService({ name: 'notif-e2e-', args: ['--demo'], ready: /playground on (http:\/\/\S+)/ });
}
