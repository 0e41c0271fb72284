// Pagination by stable key: a cursor names the last key of its page ("after:<uri>", in the
// SDK's own spelling), so a tree that changes between pages neither skips nor repeats items.
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';

const PREFIX = 'after:';

export interface Page<T> {
  page: T[];
  nextCursor?: string;
}

/**
 * The page after the cursor's key of `items`, which must be sorted by `keyOf` in code-unit
 * order; throws -32602 for a cursor this server did not issue.
 */
export function paginate<T>(items: readonly T[], cursor: string | undefined, pageSize: number, keyOf: (item: T) => string): Page<T> {
  const start = cursor === undefined ? 0 : indexAfter(items, decodeCursor(cursor), keyOf);
  const end = Math.min(items.length, start + pageSize);
  const page = items.slice(start, end);
  const last = page.at(-1);
  return end < items.length && last !== undefined ? { page, nextCursor: encodeCursor(keyOf(last)) } : { page };
}

export function encodeCursor(key: string): string {
  return Buffer.from(PREFIX + key, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!text.startsWith(PREFIX) || text.includes('\uFFFD')) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor', { cursor });
  }
  return text.slice(PREFIX.length);
}

/** Index of the first item whose key sorts after `key` (binary search; keys are sorted). */
export function indexAfter<T>(items: readonly T[], key: string, keyOf: (item: T) => string): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (keyOf(items[mid]!) <= key) low = mid + 1;
    else high = mid;
  }
  return low;
}
