// Cursors are opaque to clients but must page exactly and refuse anything forged.
import { describe, expect, it } from 'vitest';
import { paginate } from '../../src/server/cursor.js';

describe('paginate', () => {
  const items = Array.from({ length: 10 }, (_, i) => i);

  it('pages through everything exactly once', () => {
    for (const size of [1, 3, 7, 10, 11]) {
      const seen: number[] = [];
      let cursor: string | undefined;
      do {
        const { page, nextCursor } = paginate(items, cursor, 'l', size);
        expect(page.length).toBeLessThanOrEqual(size);
        seen.push(...page);
        cursor = nextCursor;
      } while (cursor !== undefined);
      expect(seen).toEqual(items);
    }
  });

  it('refuses garbage, negative offsets and cursors of another list with -32602', () => {
    const { nextCursor } = paginate(items, undefined, 'a', 3);
    for (const [cursor, list] of [['nope', 'a'], [nextCursor!, 'b'], [Buffer.from('["a",-3]').toString('base64url'), 'a'], [Buffer.from('["a",1.5]').toString('base64url'), 'a']]) {
      expect(() => paginate(items, cursor, list!, 3)).toThrow(expect.objectContaining({ code: -32602 }));
    }
  });

  it('returns an empty last page when the list shrank under a cursor', () => {
    const { nextCursor } = paginate(items, undefined, 'a', 8);
    expect(paginate(items.slice(0, 5), nextCursor, 'a', 8)).toEqual({ page: [] });
  });
});
