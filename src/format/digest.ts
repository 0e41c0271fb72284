// SHA-256 digests in the extension's `sha256:<hex>` form.
import { createHash } from 'node:crypto';

/** The `sha256:<64 hex>` digest of raw bytes. */
export function sha256Digest(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}
