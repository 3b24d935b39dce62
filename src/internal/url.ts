// Message content is untrusted. These helpers decide which URLs may reach an `href` or a `src`.

const SAFE_LINK_PROTOCOLS = new Set(['http:', 'https:']);
/** Raster image types only: an SVG opened on its own can run script. */
const SAFE_DATA_IMAGE = /^data:image\/(png|jpeg|jpg|gif|webp|avif);base64,[a-z0-9+/]+=*$/i;

/** Strips what browsers themselves ignore in URLs (C0 controls, whitespace) so it cannot hide a scheme. */
function normalise(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
}

function base(): string {
  return typeof location === 'undefined' ? 'http://localhost/' : location.href;
}

/**
 * The URL to put in an `href`, or null. Allowed: absolute `http:` and `https:` URLs and relative
 * references (path, query or fragment). `javascript:`, `data:`, `vbscript:`, `blob:`, `file:` and
 * every other scheme are refused, including when disguised with case, whitespace or control characters.
 */
export function safeHref(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  if (!trimmed || trimmed.length > 4096) return null;
  const compact = normalise(trimmed);
  // A scheme is a letter followed by letters, digits, +, - or . and then a colon.
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(compact);
  if (scheme && !SAFE_LINK_PROTOCOLS.has(scheme[1]!.toLowerCase() + ':')) return null;
  let url: URL;
  try {
    url = new URL(trimmed, base());
  } catch {
    return null;
  }
  if (!SAFE_LINK_PROTOCOLS.has(url.protocol)) return null;
  return scheme ? url.href : trimmed;
}

/** The URL to put in an avatar's `src`, or null: `http(s):` (absolute or relative) or a base64 raster `data:image/`. */
export function safeImageSrc(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  if (/^data:/i.test(trimmed)) return trimmed.length <= 200_000 && SAFE_DATA_IMAGE.test(trimmed) ? trimmed : null;
  return safeHref(trimmed);
}

/** True when `href` leaves the page's origin. */
export function isExternal(href: string): boolean {
  try {
    return new URL(href, base()).origin !== (typeof location === 'undefined' ? '' : location.origin);
  } catch {
    return false;
  }
}

/** Hosts where a development API key in the page is expected. */
export function isLocalHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || h === '127.0.0.1' || h === '[::1]' || h === '::1';
}

/** Whether an `api-key` attribute on a page served from `hostname` deserves the warning. */
export function apiKeyNeedsWarning(hostname: string, apiKey: string | undefined | null): boolean {
  return !!apiKey && !isLocalHost(hostname);
}

let apiKeyWarned = false;
/** Logs once per page that an API key in the page is a secret. */
export function warnApiKeyOnce(apiKey: string | undefined | null): void {
  if (apiKeyWarned || typeof location === 'undefined' || !apiKeyNeedsWarning(location.hostname, apiKey)) return;
  apiKeyWarned = true;
  console.warn(
    'notif-inbox: the api-key attribute holds a secret API key and is for local development only. ' +
      'Do not ship it to production pages; mount the proxy on your own domain and use subscriber-hash instead.',
  );
}
