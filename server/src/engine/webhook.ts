// Delivery of a chat message to a subscriber's webhook: one JSON POST, with a timeout. Never throws:
// every outcome (an answer of any status, a refused address, a refused connection, a timeout, a bad
// URL) is returned.
//
// The URL is the subscriber's, so it is untrusted: by default only public addresses are reached.
// The host name is resolved here, every address it resolves to is checked, and the connection goes
// to the checked address (so a name that resolves to a public address now and a private one a moment
// later cannot slip through). Loopback, private, link-local, unique-local, carrier-grade NAT,
// multicast, reserved and cloud metadata addresses are refused; redirects are not followed; of the
// answer only its status is kept. `serve --allow-private-webhooks` (or NOTIF_ALLOW_PRIVATE_WEBHOOKS=1)
// lifts the address check, for development and tests whose receivers listen on 127.0.0.1.

import { lookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { MAX_URL_LENGTH } from '../render.ts';
import { engineSettings } from './settings.ts';

export const WEBHOOK_TIMEOUT_MS = 5000;
/** Chat webhooks of one step sent at once, at most. */
export const WEBHOOK_CONCURRENCY = 8;
/** Largest request body sent to a webhook (the rendered text is far smaller). */
const MAX_BODY_BYTES = 64 * 1024;

/** Host names of cloud metadata services, refused whatever they resolve to. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

/** True when webhooks may reach private and loopback addresses (`--allow-private-webhooks`): development only. */
const allowPrivate = () => engineSettings().allowPrivateWebhooks;

export interface WebhookOutcome {
  ok: boolean;
  /** The receiver's HTTP status, when it answered. */
  statusCode?: number;
  /** Why it failed, when it did. */
  error?: string;
  /** True when the address was refused and no request was made. */
  refused?: boolean;
  ms: number;
}

/** True for an absolute http(s) URL with a host and no user:password part. */
export function isWebhookUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > MAX_URL_LENGTH) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && !url.username && !url.password;
  } catch {
    return false;
  }
}

class RefusedAddress extends Error {}

/** Why `address` may not be reached, or null when it is a public unicast address. */
export function refusedAddress(address: string): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const ip = ipaddr.process(address);
  // ::a.b.c.d (IPv4-compatible, deprecated): ipaddr.js calls it unicast, but it names an IPv4 address.
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return `${address} is an IPv4-compatible address`;
  const range = ip.range();
  return range === 'unicast' ? null : `${address} is a ${range} address`;
}

/** Refuses names that are never public (metadata services, localhost and .internal/.local names). */
function refusedName(hostname: string): string | null {
  const name = hostname.toLowerCase().replace(/\.+$/, '');
  if (METADATA_HOSTS.has(name)) return `${name} is a metadata service`;
  if (name === 'localhost' || /\.(localhost|internal|local|home\.arpa)$/.test(name)) return `${name} is not a public name`;
  return null;
}

/**
 * Why a webhook URL's host is refused before any lookup (an address or a name that is never
 * public), or null. Checked when a URL is saved, so a subscriber's credential that could never be
 * delivered is refused with a clear error then, and again on delivery (with the addresses a name
 * resolves to). `--allow-private-webhooks` lifts it.
 */
export function refusedHost(url: string): string | null {
  if (allowPrivate()) return null;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(host) ? refusedAddress(host) : refusedName(host);
}

/** A dns lookup for http.request that hands on only addresses that pass `refusedAddress`. */
const checkedLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { all: true, family: (options as { family?: number }).family ?? 0 })
    .then((addresses) => {
      if (addresses.length === 0) throw new Error(`${hostname} did not resolve`);
      for (const resolved of addresses) {
        const why = refusedAddress(resolved.address);
        if (why) throw new RefusedAddress(`${hostname} resolves to ${why}`);
      }
      const all = (options as { all?: boolean }).all;
      if (all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    })
    .catch((err: Error) => callback(err as NodeJS.ErrnoException, '', 0));
};

export async function postWebhook(url: string, body: unknown, timeoutMs = WEBHOOK_TIMEOUT_MS): Promise<WebhookOutcome> {
  const started = Date.now();
  if (!isWebhookUrl(url)) return { ok: false, error: 'not an http(s) URL', ms: 0 };
  const target = new URL(url);
  const why = refusedHost(url);
  if (why) return { ok: false, refused: true, error: `refused: ${why}`, ms: 0 };
  const payload = Buffer.from(JSON.stringify(body));
  if (payload.length > MAX_BODY_BYTES) return { ok: false, error: 'message too large for a webhook', ms: 0 };
  try {
    const statusCode = await new Promise<number>((resolve, reject) => {
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(
        target,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': payload.length, 'user-agent': 'notif-inbox' },
          // The checked lookup: the connection goes to the address that was checked.
          ...(allowPrivate() ? {} : { lookup: checkedLookup }),
          agent: false,
          signal: AbortSignal.timeout(timeoutMs),
        },
        (res: IncomingMessage) => {
          // Only the status is kept: the answer is not read (a redirect is an answer like any other).
          resolve(res.statusCode ?? 0);
          res.destroy();
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
    const ok = statusCode >= 200 && statusCode < 300;
    return { ok, statusCode, ...(ok ? {} : { error: `answered ${statusCode}` }), ms: Date.now() - started };
  } catch (err) {
    if (err instanceof RefusedAddress) return { ok: false, refused: true, error: `refused: ${err.message}`, ms: Date.now() - started };
    const failure = err as Error & { code?: string };
    const timedOut = failure.name === 'TimeoutError' || failure.name === 'AbortError';
    const error = timedOut ? `no answer within ${timeoutMs} ms` : [failure.code, failure.message].filter(Boolean).join(': ');
    return { ok: false, error: error || 'request failed', ms: Date.now() - started };
  }
}

/** Runs `work` over `items`, at most `limit` at a time, keeping the order of the results. */
export async function mapBounded<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next;
      next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
