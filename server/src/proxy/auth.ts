import { createHmac, timingSafeEqual } from 'node:crypto';

/** The subscriber hash: the HMAC-SHA256 (hex) of the subscriber id under `key`, as Novu's is. */
export function subscriberHash(subscriberId: string, key: string): string {
  return createHmac('sha256', key).update(subscriberId).digest('hex');
}

/**
 * The subscriber a page proves with `x-subscriber-id` and `x-subscriber-hash` (the hash under
 * `hmacKey`), or null when it proves none. The id is percent-decoded: a header carries bytes, so
 * the elements send encodeURI(id), which encodes what is outside ASCII and '%' itself (an id of
 * printable ASCII without '%' decodes to itself). One that does not decode proves nothing.
 */
export function hashedSubscriber(request: Request, hmacKey: string): string | null {
  const encoded = request.headers.get('x-subscriber-id');
  const hash = request.headers.get('x-subscriber-hash');
  if (!encoded || !hash) return null;
  let claimed: string;
  try {
    claimed = decodeURIComponent(encoded);
  } catch {
    return null;
  }
  const expected = Buffer.from(subscriberHash(claimed, hmacKey));
  const given = Buffer.from(hash.toLowerCase());
  return given.length === expected.length && timingSafeEqual(given, expected) ? claimed : null;
}
