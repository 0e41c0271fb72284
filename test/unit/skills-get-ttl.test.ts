// The catalog honours the ttlMs a skills/get answer carries (the current text: GetSkillResult
// extends CacheableResult) as it honours a listing's: an entry found by path is held that long,
// across re-listings, and asked for again on the daemon's own clock when it runs out, not before.
// A server on the earlier text (no ttlMs on skills/get) is still served as before.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, LISTING_TTL_RANGE_MS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { UnavailableError } from '../../src/errors.js';
import type { CacheHint } from '../../src/mcp/skill-source.js';
import type { SkillEntry } from '../../src/protocol/skills-wire.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';

/** A server whose skills/get answers carry their own cache fields (or none), apart from its listing's. */
class GetHintSource extends MemorySkillSource {
  getHint: CacheHint = {};
  down = false;

  override async getSkill(uri: string): Promise<{ entry: SkillEntry } & CacheHint> {
    if (this.down) throw new UnavailableError('connection refused', { server: this.label, method: 'skills/get', uri });
    const { entry } = await super.getSkill(uri);
    return { entry, ...this.getHint };
  }
}

const HIDDEN = 'skill://hidden/SKILL.md';

/** One listed skill, one reachable only by path; the listing is held 60 s (the server's ttlMs). */
function serverWithUnlistedSkill(getHint: CacheHint): GetHintSource {
  const source = new GetHintSource();
  source.hint = { ttlMs: 60_000, cacheScope: 'private' };
  source.getHint = getHint;
  source.addSkill('listed', { 'SKILL.md': skillMarkdown('listed') });
  source.addSkill('hidden', { 'SKILL.md': skillMarkdown('hidden') }, { listed: false });
  return source;
}

/** A catalog on fake timers (the kernel looks a path up one name at a time: `hidden`, then its files): nothing but the clock re-lists or re-fetches. */
function clockedCatalog(source: MemorySkillSource): ServerCatalog {
  vi.useFakeTimers();
  return new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => undefined, cache: new ContentCache(1 << 20), hideDynamic: false, random: () => 0 });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('skills/get ttlMs', () => {
  it('re-fetches an entry found by path when its ttlMs runs out, not before, and shows what changed', async () => {
    const source = serverWithUnlistedSkill({ ttlMs: 20_000, cacheScope: 'public' });
    const catalog = clockedCatalog(source);
    await catalog.refresh();
    await catalog.lookup('hidden');
    expect(source.count('skills/get', HIDDEN)).toBe(1);
    expect(await catalog.list('hidden')).toEqual(['SKILL.md']);

    // The server adds a file to the skill; the held entry stands until its ttlMs runs out.
    source.addSkill('hidden', { 'SKILL.md': skillMarkdown('hidden'), 'notes.md': 'new\n' }, { listed: false });
    await vi.advanceTimersByTimeAsync(20_000 - 1);
    expect(source.count('skills/get', HIDDEN)).toBe(1);
    expect(await catalog.list('hidden')).toEqual(['SKILL.md']);
    await vi.advanceTimersByTimeAsync(1);
    expect(source.count('skills/get', HIDDEN)).toBe(2);
    expect((await catalog.list('hidden')).sort()).toEqual(['SKILL.md', 'notes.md']);
    expect(catalog.entryChangedAt(HIDDEN)).toBeDefined();

    // And again after each ttlMs, while nothing else happens; never after close.
    await vi.advanceTimersByTimeAsync(20_000);
    expect(source.count('skills/get', HIDDEN)).toBe(3);
    catalog.close();
    await vi.advanceTimersByTimeAsync(100_000);
    expect(source.count('skills/get', HIDDEN)).toBe(3);
  });

  it('keeps an entry found by path across a re-listing that lacks it, while its ttlMs holds', async () => {
    const source = serverWithUnlistedSkill({ ttlMs: 600_000, cacheScope: 'private' });
    source.hint = { ttlMs: 10_000, cacheScope: 'private' };
    const catalog = clockedCatalog(source);
    await catalog.refresh();
    await catalog.lookup('hidden');
    await vi.advanceTimersByTimeAsync(3 * 10_000);
    expect(source.count('skills/list')).toBe(4);
    // Still held: shown without asking the server again.
    expect((await catalog.list('')).sort()).toEqual(['hidden', 'listed']);
    expect((await catalog.lookup('hidden/SKILL.md')).kind).toBe('file');
    expect(source.count('skills/get', HIDDEN)).toBe(1);
    catalog.close();
  });

  it('lets a listing that does list the skill govern it from then on', async () => {
    const source = serverWithUnlistedSkill({ ttlMs: 20_000, cacheScope: 'private' });
    source.hint = { ttlMs: 10_000, cacheScope: 'private' };
    const catalog = clockedCatalog(source);
    await catalog.refresh();
    await catalog.lookup('hidden');
    source.entries.get(HIDDEN)!.listed = true;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(source.count('skills/list')).toBe(2);
    await vi.advanceTimersByTimeAsync(15_000);
    expect(source.count('skills/get', HIDDEN)).toBe(1);
    catalog.close();
  });

  it('clamps the ttlMs as a listing\'s: 0 is one skills/get per 5 s, not one per operation', async () => {
    const source = serverWithUnlistedSkill({ ttlMs: 0, cacheScope: 'private' });
    const catalog = clockedCatalog(source);
    await catalog.refresh();
    await catalog.lookup('hidden');
    for (let i = 0; i < 5; i++) await catalog.lookup('hidden/SKILL.md');
    await vi.advanceTimersByTimeAsync(LISTING_TTL_RANGE_MS.min - 1);
    expect(source.count('skills/get', HIDDEN)).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(source.count('skills/get', HIDDEN)).toBe(2);
    catalog.close();
  });

  it('drops the skill when the server answers that it no longer serves it', async () => {
    const source = serverWithUnlistedSkill({ ttlMs: 20_000, cacheScope: 'private' });
    const catalog = clockedCatalog(source);
    await catalog.refresh();
    await catalog.lookup('hidden');
    source.entries.delete(HIDDEN);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(source.count('skills/get', HIDDEN)).toBe(2);
    expect(catalog.skillRecord(HIDDEN)).toBeUndefined();
    catalog.close();
  });

  it('keeps the entry while the server cannot be reached, asking again later and less often', async () => {
    const source = serverWithUnlistedSkill({ ttlMs: 20_000, cacheScope: 'private' });
    source.hint = { ttlMs: 3_600_000, cacheScope: 'private' };
    const catalog = clockedCatalog(source);
    await catalog.refresh();
    await catalog.lookup('hidden');
    source.down = true;
    await vi.advanceTimersByTimeAsync(20_000);
    expect(source.count('skills/get', HIDDEN)).toBe(1); // the failed call is not recorded by the memory source
    expect(catalog.skillRecord(HIDDEN)).toBeDefined();
    source.down = false;
    // After one failure the next try waits twice the held time.
    await vi.advanceTimersByTimeAsync(40_000 - 1);
    expect(source.count('skills/get', HIDDEN)).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(source.count('skills/get', HIDDEN)).toBe(2);
    catalog.close();
  });

  it('accepts a server that sends no ttlMs on skills/get: held until the next re-listing, as before', async () => {
    const source = serverWithUnlistedSkill({});
    source.hint = { ttlMs: 10_000, cacheScope: 'private' };
    const catalog = clockedCatalog(source);
    await catalog.refresh();
    await catalog.lookup('hidden');
    const node = await catalog.lookup('hidden/SKILL.md');
    expect(node).toMatchObject({ kind: 'file', verified: true });
    expect((await catalog.read('hidden/SKILL.md')).bytes.toString()).toBe(skillMarkdown('hidden'));
    // No clock of its own: the re-listing drops it, and the next lookup asks again.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(source.count('skills/get', HIDDEN)).toBe(1);
    expect(catalog.skillRecord(HIDDEN)).toBeUndefined();
    expect((await catalog.lookup('hidden')).kind).toBe('directory');
    expect(source.count('skills/get', HIDDEN)).toBe(2);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(source.count('skills/get', HIDDEN)).toBe(2);
    catalog.close();
  });
});
