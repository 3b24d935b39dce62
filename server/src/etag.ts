import { createHash } from 'node:crypto';

// Entity tags of JSON answers: the feed's (inbox/answer.ts) and the proxy's for what it rewrites.

/** Characters of the base64url SHA-256 a tag keeps: 27 of them hold 160 bits. */
export const TAG_LENGTH = 27;

/** The entity tag of a text (whole, or in parts) sent uncompressed: a hash of it. The proxy tags what it rewrites so too. */
export function entityTag(text: string | string[]): string {
  const hash = createHash('sha256');
  for (const part of typeof text === 'string' ? [text] : text) hash.update(part);
  return `"${hash.digest('base64url').slice(0, TAG_LENGTH)}"`;
}

/**
 * True when `If-None-Match` names the answer: by the weak comparison RFC 9110 asks for, and
 * ignoring the encoding's suffix (the same text in another encoding is as current).
 */
export function notModified(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '').replace(/-(br|gzip)"$/, '"');
  const own = bare(etag);
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === own);
}

