// Message content is untrusted. These helpers decide which URLs may reach an `href` or a `src`.

/** Raster image types only: an SVG opened on its own can run script. */
const SAFE_DATA_IMAGE = /^data:image\/(png|jpe?g|gif|webp|avif);base64,[a-z0-9+/]+=*$/i;
const HTTP = /^https?:?$/i;
/** Longer URLs are refused (no real link is this long). */
const MAX_URL_LENGTH = 4096;
/** Longer `data:` images are refused (about 150 KB of image). */
const MAX_DATA_IMAGE_LENGTH = 200_000;

/**
 * The URL to put in an `href`, or null. Allowed: absolute `http:` and `https:` URLs and relative
 * references (path, query or fragment). `javascript:`, `data:`, `vbscript:`, `blob:`, `file:` and
 * every other scheme are refused, including when disguised with case, whitespace or control characters.
 */
export function safeHref(value: unknown): string | null {
  if (typeof value != 'string') return null;
  const text = value.trim();
  if (!text || text.length > MAX_URL_LENGTH) return null;
  try {
    // A scheme, once what browsers ignore in URLs (C0 controls, whitespace) is taken out.
    // eslint-disable-next-line no-control-regex
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text.replace(/[\0- \x7f-\x9f]/g, ''))?.[1];
    const url = new URL(text, location.href);
    if (HTTP.test(url.protocol) && HTTP.test(scheme ?? 'http')) return scheme ? url.href : text;
  } catch {
    // not a URL
  }
  return null;
}

/** The URL to put in an avatar's `src`, or null: `http(s):` (absolute or relative) or a base64 raster `data:image/`. */
export function safeImageSrc(value: unknown): string | null {
  if (typeof value == 'string') {
    const text = value.trim();
    if (text.length <= MAX_DATA_IMAGE_LENGTH && SAFE_DATA_IMAGE.test(text)) return text;
  }
  // Any other `data:` URL is refused by safeHref, which allows no scheme but http(s).
  return safeHref(value);
}

/** Hosts where a development API key in the page is expected. */
export const isLocalHost = (hostname: string): boolean => /^((.*\.)?localhost|127\.0\.0\.1|\[?::1\]?)\.?$/i.test(hostname);

/** Whether an `api-key` attribute on a page served from `hostname` deserves the warning. */
export const apiKeyNeedsWarning = (hostname: string, apiKey: string | undefined | null): boolean => !!apiKey && !isLocalHost(hostname);

let warned = false;
/** Logs once per page that an API key in the page is a secret. */
export function warnApiKeyOnce(apiKey: string | undefined): void {
  if (!warned && apiKeyNeedsWarning(location.hostname, apiKey)) {
    warned = true;
    console.warn('notif-inbox: api-key is a secret, for localhost only: use subscriber-hash and the proxy.');
  }
}
