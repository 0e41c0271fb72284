// sha256 digests for tests and the fake servers, straight from node:crypto: independent of
// src/format/digest, which is what they check. Plain JS so child-process servers can use it.
import { createHash } from 'node:crypto';

/** The hex sha256 of `bytes` (what `sha256sum` prints). */
export function sha256Hex(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The sha256 of `bytes` in the skills extension's format, `sha256:<hex>`. */
export function sha256(bytes) {
  return `sha256:${sha256Hex(bytes)}`;
}
