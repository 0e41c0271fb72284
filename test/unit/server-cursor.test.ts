// Cursors are opaque to clients, page by stable key (so a list that changes between pages
// neither skips nor repeats), and refuse anything this server did not issue.
import { describe, expect, it } from 'vitest';
import { encodeCursor, paginate } from '../../src/server/cursor.js';

const key = (item: string): string => item;

describe('paginate', () => {
  const items = Array.from({ length: 10 }, (_, i) => `skill://s${i}/SKILL.md`);

  it('pages through everything exactly once', () => {
    for (const size of [1, 3, 7, 10, 11]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const { page, nextCursor } = paginate(items, cursor, size, key);
        expect(page.length).toBeLessThanOrEqual(size);
        seen.push(...page);
        cursor = nextCursor;
      } while (cursor !== undefined);
      expect(seen).toEqual(items);
    }
  });

  it('spells cursors as the SDK does: base64url of "after:<last key>"', () => {
    const { nextCursor } = paginate(items, undefined, 3, key);
    expect(Buffer.from(nextCursor!, 'base64url').toString()).toBe(`after:${items[2]}`);
    expect(nextCursor).toBe(encodeCursor(items[2]!));
  });

  it('neither skips nor repeats when items are added or removed between pages', () => {
    const first = paginate(items, undefined, 4, key);
    // s0 (already seen) goes, s35 (after the cursor) and s05 (before it) arrive.
    const changed = [...items.slice(1), 'skill://s05/SKILL.md', 'skill://s35/SKILL.md'].sort();
    const rest: string[] = [];
    let cursor = first.nextCursor;
    while (cursor !== undefined) {
      const page = paginate(changed, cursor, 4, key);
      rest.push(...page.page);
      cursor = page.nextCursor;
    }
    expect(rest).toEqual(changed.filter((item) => item > first.page.at(-1)!));
    expect(rest).toContain('skill://s35/SKILL.md');
    expect(rest.filter((item) => first.page.includes(item))).toEqual([]);
  });

  it('refuses garbage and forged cursors with -32602', () => {
    for (const cursor of ['nope!', '', Buffer.from('["a",3]').toString('base64url'), Buffer.from([0xff, 0xfe]).toString('base64url')]) {
      expect(() => paginate(items, cursor, 3, key), cursor).toThrow(expect.objectContaining({ code: -32602 }));
    }
  });

  it('returns an empty last page when the list shrank under a cursor', () => {
    const { nextCursor } = paginate(items, undefined, 8, key);
    expect(paginate(items.slice(0, 5), nextCursor, 8, key)).toEqual({ page: [] });
  });
});
