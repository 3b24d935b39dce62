// Message content is untrusted. These helpers decide which URLs may reach an `href` or a `src`.

/** Raster image types only: an SVG opened on its own can run script. */
const SAFE_DATA_IMAGE = /^data:image\/(png|jpe?g|gif|webp|avif);base64,[a-z0-9+/]+=*$/i;
const HTTP = /^https?:?$/i;

/**
 * The URL to put in an `href`, or null. Allowed: absolute `http:` and `https:` URLs and relative
 * references (path, query or fragment). `javascript:`, `data:`, `vbscript:`, `blob:`, `file:` and
 * every other scheme are refused, including when disguised with case, whitespace or control characters.
 */
export function safeHref(value: unknown): string | null {
  try {
    if (typeof value == 'string' && (value = value.trim()) && (value as string).length <= 4096) {
      // A scheme, once what browsers ignore in URLs (C0 controls, whitespace) is taken out.
      // eslint-disable-next-line no-control-regex
      const scheme = /^([a-z][a-z0-9+.-]*):/i.exec((value as string).replace(/[\0- \x7f-\x9f]/g, ''))?.[1];
      const url = new URL(value as string, location.href);
      if (HTTP.test(url.protocol) && HTTP.test(scheme ?? 'http')) return scheme ? url.href : (value as string);
    }
  } catch {
    // not a URL
  }
  return null;
}

/** The URL to put in an avatar's `src`, or null: `http(s):` (absolute or relative) or a base64 raster `data:image/`. */
export function safeImageSrc(value: unknown): string | null {
  // Any other `data:` URL is refused by safeHref, which allows no scheme but http(s).
  return typeof value == 'string' && (value = value.trim()).length <= 2e5 && SAFE_DATA_IMAGE.test(value as string)
    ? (value as string)
    : safeHref(value);
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
