// Opaque pagination cursors: an offset bound to the list it pages, so a cursor from
// one list (or a forged one) is refused instead of silently paging something else.
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/** One page of `items` starting at the cursor's offset; throws -32602 for a cursor not issued for `list`. */
export function paginate<T>(items: readonly T[], cursor: string | undefined, list: string, pageSize: number): { page: T[]; nextCursor?: string } {
  const offset = cursor === undefined ? 0 : decodeCursor(cursor, list);
  const end = offset + pageSize;
  const page = items.slice(offset, end);
  return end < items.length ? { page, nextCursor: encodeCursor(list, end) } : { page };
}

function encodeCursor(list: string, offset: number): string {
  return Buffer.from(JSON.stringify([list, offset])).toString('base64url');
}

function decodeCursor(cursor: string, list: string): number {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && value[0] === list && Number.isSafeInteger(value[1]) && (value[1] as number) >= 0) {
      return value[1] as number;
    }
  } catch {
    // fall through to the error below
  }
  throw new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${cursor}`, { cursor });
}
