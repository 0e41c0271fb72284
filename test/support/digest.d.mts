/** The hex sha256 of `bytes` (what `sha256sum` prints). */
export function sha256Hex(bytes: Uint8Array | string): string;
/** The sha256 of `bytes` in the skills extension's format, `sha256:<hex>`. */
export function sha256(bytes: Uint8Array | string): string;
