/** Bytes of versionedText(0); versionedText(N) is BASE_BYTES + N bytes. */
export const BASE_BYTES: number;
/** The text of version `n`: its number, padded with dots to 100 + n bytes. */
export function versionedText(n: number): string;
