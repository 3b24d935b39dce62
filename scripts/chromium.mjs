// Debian's Chromium as every browser run here launches it (web-test-runner, the e2e tests, the
// browser benches): headless, with nothing reaching out to the network on its own.
// CHROMIUM_PATH overrides where it is.

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Chromium features turned off. Chromium 156 loads its omnibox popup (a WebUI page) into a renderer
 * process of its own for every new window, and a headless run opens one for every page: in traces
 * of bench:render, 10 to 15 ms of CPU on that renderer's main thread and more on the browser's,
 * in the middle of the page's first render, on 2 cores (recent Puppeteer releases turn these two
 * off by default; the one web-test-runner uses here, 24.43, does not). The rest is Playwright 1.65's
 * own list: Chromium reads only the last `--disable-features` it is given, and Playwright puts its
 * own before these arguments, so this list names them again (Puppeteer, which web-test-runner
 * launches with, merges the two).
 */
const FEATURES_OFF = [
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  // Playwright's:
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
];

export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  `--disable-features=${FEATURES_OFF}`,
];
