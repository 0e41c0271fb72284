// docs/layout.md, Discovery: "unlisted paths are resolved by asking the server, and misses
// are remembered for 5 s". With the catalog's clock injected: a miss is ENOENT from memory
// (no request) until 5 s have passed, then the server is asked again.
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { NotFoundError } from '../../src/errors.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';

/** The documented miss memory; the daemon builds its catalogs with DEFAULT_CATALOG_TIMINGS. */
const MISS_REMEMBERED_MS = 5_000;

function setUp() {
  const source = new MemorySkillSource();
  source.addSkill('known', { 'SKILL.md': skillMarkdown('known') });
  const clock = { nowMs: 0 };
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => undefined, cache: new ContentCache(1 << 20), hideDynamic: false, now: () => clock.nowMs });
  return { source, catalog, clock };
}

describe('misses of unlisted paths', () => {
  it('a skill the server gains after a miss is ENOENT from memory, with no request, until 5 s have passed; then found', async () => {
    const { source, catalog, clock } = setUp();
    await catalog.refresh();
    await expect(catalog.lookup('later')).rejects.toThrow(NotFoundError);
    // The miss was the server's answer: it was asked, by path and as a skill root.
    expect(source.count('resources/read', 'skill://later')).toBe(1);
    expect(source.count('skills/get', 'skill://later/SKILL.md')).toBe(1);
    const askedBefore = source.requests.length;

    // The server now has it (not in its listing: reachable by path only).
    source.addSkill('later', { 'SKILL.md': skillMarkdown('later') }, { listed: false });
    clock.nowMs = MISS_REMEMBERED_MS - 1;
    await expect(catalog.lookup('later')).rejects.toThrow(NotFoundError);
    // Nor is anything below a remembered miss asked for.
    await expect(catalog.read('later/SKILL.md')).rejects.toThrow(NotFoundError);
    expect(source.requests.length).toBe(askedBefore);

    clock.nowMs = MISS_REMEMBERED_MS;
    expect(await catalog.lookup('later')).toMatchObject({ kind: 'directory', uri: 'skill://later' });
    expect((await catalog.read('later/SKILL.md')).bytes.toString()).toBe(skillMarkdown('later'));
    expect(source.count('skills/get', 'skill://later/SKILL.md')).toBe(2);
    // Found by path, it is part of the tree from now on ("the tree is what ... earlier lookups show").
    expect((await catalog.list('')).sort()).toEqual(['known', 'later']);
  });

  it('each miss is remembered from its own time, and a path still missing is remembered again', async () => {
    const { source, catalog, clock } = setUp();
    await catalog.refresh();
    await expect(catalog.lookup('first')).rejects.toThrow(NotFoundError);
    clock.nowMs = 3_000;
    await expect(catalog.lookup('second')).rejects.toThrow(NotFoundError);

    clock.nowMs = MISS_REMEMBERED_MS;
    const asks = (name: string) => source.count('resources/read', `skill://${name}`);
    await expect(catalog.lookup('first')).rejects.toThrow(NotFoundError);
    await expect(catalog.lookup('second')).rejects.toThrow(NotFoundError);
    expect([asks('first'), asks('second')]).toEqual([2, 1]);

    clock.nowMs = 3_000 + MISS_REMEMBERED_MS;
    await expect(catalog.lookup('first')).rejects.toThrow(NotFoundError);
    await expect(catalog.lookup('second')).rejects.toThrow(NotFoundError);
    expect([asks('first'), asks('second')]).toEqual([2, 2]);
  });
});
