// Debian's Chromium as every browser run here launches it (web-test-runner, the e2e tests, the
// browser benches): headless, with nothing reaching out to the network on its own.
// CHROMIUM_PATH overrides where it is.

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
