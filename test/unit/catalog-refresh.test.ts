// The catalog against an in-memory SkillSource: when it re-lists (the server's ttlMs,
// clamped; the default, stretched only while change events can arrive), and what a failed
// listing leaves in place.
import { describe, expect, it, vi } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, LISTING_TTL_RANGE_MS, RELIST_BACKOFF_MAX_MS, RELIST_JITTER, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { UnavailableError } from '../../src/errors.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';

function catalogOf(source: MemorySkillSource) {
  const clock = { nowMs: 0 };
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => undefined, cache: new ContentCache(1 << 20), hideDynamic: false, now: () => clock.nowMs });
  return { catalog, clock };
}

function sourceWith(...names: string[]): MemorySkillSource {
  const source = new MemorySkillSource();
  for (const name of names) source.addSkill(name, { 'SKILL.md': skillMarkdown(name) });
  return source;
}

/** An operation after `ms`; a stale listing is refreshed in the background, so let it finish. */
async function operateAfter(catalog: ServerCatalog, clock: { nowMs: number }, ms: number): Promise<void> {
  clock.nowMs += ms;
  await catalog.list('');
  await new Promise((resolve) => setImmediate(resolve));
}

describe('catalog refresh', () => {
  it('tells its listeners of a re-listing only when the skills or their entries differ', async () => {
    const source = sourceWith('one');
    const { catalog, clock } = catalogOf(source);
    const changes = vi.fn();
    catalog.onChange(changes);
    await catalog.refresh();
    expect(changes).toHaveBeenCalledTimes(1);
    // The same listing again (the server's TTL passed): the kernel keeps what it holds.
    await operateAfter(catalog, clock, DEFAULT_CATALOG_TIMINGS.listingTtlMs + 1);
    expect(source.count('skills/list')).toBe(2);
    expect(changes).toHaveBeenCalledTimes(1);
    source.addSkill('two', { 'SKILL.md': skillMarkdown('two') });
    await operateAfter(catalog, clock, DEFAULT_CATALOG_TIMINGS.listingTtlMs + 1);
    expect(source.count('skills/list')).toBe(3);
    expect(changes).toHaveBeenCalledTimes(2);
  });

  it('re-lists after the default listing TTL when the server gives no ttlMs, on the next operation', async () => {
    const source = sourceWith('one');
    const { catalog, clock } = catalogOf(source);
    await catalog.refresh();
    await operateAfter(catalog, clock, DEFAULT_CATALOG_TIMINGS.listingTtlMs - 1);
    expect(source.count('skills/list')).toBe(1);
    source.addSkill('two', { 'SKILL.md': skillMarkdown('two') });
    await operateAfter(catalog, clock, 2);
    expect(source.count('skills/list')).toBe(2);
    expect((await catalog.list('')).sort()).toEqual(['one', 'two']);
  });

  it("honours the server's ttlMs", async () => {
    const source = sourceWith('one');
    source.hint = { ttlMs: 20_000, cacheScope: 'public' };
    const { catalog, clock } = catalogOf(source);
    await catalog.refresh();
    await operateAfter(catalog, clock, 19_000);
    expect(source.count('skills/list')).toBe(1);
    await operateAfter(catalog, clock, 2_000);
    expect(source.count('skills/list')).toBe(2);
    expect(catalog.summary().cache).toEqual({ ttlMs: 20_000, cacheScope: 'public', relistAfterMs: 20_000 });
  });

  it('clamps ttlMs to the documented range: 0 is not "re-list on every operation", a day is not a day', async () => {
    const source = sourceWith('one');
    source.hint = { ttlMs: 0 };
    const { catalog, clock } = catalogOf(source);
    await catalog.refresh();
    await operateAfter(catalog, clock, LISTING_TTL_RANGE_MS.min - 1);
    expect(source.count('skills/list')).toBe(1);
    await operateAfter(catalog, clock, 2);
    expect(source.count('skills/list')).toBe(2);
    source.hint = { ttlMs: 86_400_000 };
    await catalog.refresh();
    expect(catalog.summary().cache.relistAfterMs).toBe(LISTING_TTL_RANGE_MS.max);
  });

  it('stretches the default ten times only while a live channel can deliver change events', async () => {
    const source = sourceWith('one');
    source.featureFlags = { ...source.featureFlags, listChanged: true, liveChannel: true };
    const { catalog, clock } = catalogOf(source);
    await catalog.refresh();
    await operateAfter(catalog, clock, DEFAULT_CATALOG_TIMINGS.listingTtlMs * 5);
    expect(source.count('skills/list')).toBe(1);
    await operateAfter(catalog, clock, DEFAULT_CATALOG_TIMINGS.listingTtlMs * 6);
    expect(source.count('skills/list')).toBe(2);
  });

  it('a declared listChanged with no open channel (stateless HTTP) is re-listed at the default pace', async () => {
    const source = sourceWith('one');
    source.featureFlags = { ...source.featureFlags, listChanged: true, liveChannel: false };
    const { catalog, clock } = catalogOf(source);
    await catalog.refresh();
    await operateAfter(catalog, clock, DEFAULT_CATALOG_TIMINGS.listingTtlMs + 1);
    expect(source.count('skills/list')).toBe(2);
  });

  it('sends skills/list only to a server that declared the extension', async () => {
    const source = sourceWith('one');
    source.featureFlags = { ...source.featureFlags, extension: false };
    const { catalog } = catalogOf(source);
    await catalog.refresh();
    expect(source.count('skills/list')).toBe(0);
    expect(catalog.summary().generation).not.toBe('listing');
  });

  it('a failed listing keeps what was known, and says why', async () => {
    const source = sourceWith('one');
    const { catalog } = catalogOf(source);
    await catalog.refresh();
    source.failures.set('skills/list', new UnavailableError('no answer', { server: 'mem', method: 'skills/list' }));
    await catalog.refresh();
    expect(await catalog.list('')).toEqual(['one']);
    expect(catalog.summary().problems.join('\n')).toMatch(/discovery failed: mem: skills\/list: no answer/);
  });

  it('a storm of change notifications re-lists at most once a second, and says so once', async () => {
    vi.useFakeTimers();
    try {
      const source = sourceWith('one');
      const logs: string[] = [];
      const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: (line) => logs.push(line), cache: new ContentCache(1 << 20), hideDynamic: false });
      await catalog.refresh();
      for (let i = 0; i < 10; i++) {
        for (let j = 0; j < 100; j++) source.emit({ type: 'list-changed' });
        await vi.advanceTimersByTimeAsync(100);
      }
      // 1,000 notifications over one second: the listing at the start, at most one more queued, one after the interval.
      expect(source.count('skills/list')).toBeGreaterThanOrEqual(2);
      expect(source.count('skills/list')).toBeLessThanOrEqual(4);
      expect(logs.filter((line) => /change notifications faster than/.test(line))).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("re-listing on the daemon's own clock (no reader, no event)", () => {
  /** A catalog on fake timers: nothing but the clock can make it list again. */
  function clocked(source: MemorySkillSource, random = () => 0) {
    vi.useFakeTimers();
    return new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => undefined, cache: new ContentCache(1 << 20), hideDynamic: false, random });
  }

  it('lists again when the held time runs out, and a change no event announced reaches the tree and the listeners', async () => {
    try {
      const source = sourceWith('one');
      source.hint = { ttlMs: 0 }; // the SDK v2 server's default: held for the 5 s floor
      const catalog = clocked(source);
      const changes = vi.fn();
      catalog.onChange(changes);
      await catalog.refresh();
      expect(changes).toHaveBeenCalledTimes(1);
      source.addSkill('two', { 'SKILL.md': skillMarkdown('two') });
      await vi.advanceTimersByTimeAsync(LISTING_TTL_RANGE_MS.min - 1);
      expect(source.count('skills/list')).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(source.count('skills/list')).toBe(2);
      expect(changes).toHaveBeenCalledTimes(2);
      expect((await catalog.list('')).sort()).toEqual(['one', 'two']);
      // And on, every held time, while nothing else happens.
      await vi.advanceTimersByTimeAsync(3 * LISTING_TTL_RANGE_MS.min);
      expect(source.count('skills/list')).toBe(5);
      catalog.close();
      await vi.advanceTimersByTimeAsync(10 * LISTING_TTL_RANGE_MS.min);
      expect(source.count('skills/list')).toBe(5);
    } finally {
      vi.useRealTimers();
    }
  });

  it('starts up to 10 % early (jitter), never late', async () => {
    try {
      const source = sourceWith('one');
      source.hint = { ttlMs: 20_000 };
      const catalog = clocked(source, () => 0.999);
      await catalog.refresh();
      // random 0.999: 18,002 ms after the first listing; never before 90 % of the held time, never after it.
      await vi.advanceTimersByTimeAsync(20_000 * (1 - RELIST_JITTER) - 1);
      expect(source.count('skills/list')).toBe(1);
      await vi.advanceTimersByTimeAsync(20_000 * RELIST_JITTER + 1);
      expect(source.count('skills/list')).toBe(2);
      catalog.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('backs off while listings fail (doubling, up to 5 min), and returns to the held time once one succeeds', async () => {
    try {
      const source = sourceWith('one');
      source.hint = { ttlMs: 5_000 };
      const catalog = clocked(source);
      await catalog.refresh();
      source.failures.set('skills/list', new UnavailableError('no answer', { server: 'mem', method: 'skills/list' }));
      const listedAt: number[] = [];
      const started = Date.now();
      const before = source.count('skills/list');
      for (let second = 0; second < 1_000; second++) {
        await vi.advanceTimersByTimeAsync(1_000);
        while (source.count('skills/list') - before > listedAt.length) listedAt.push((Date.now() - started) / 1000);
      }
      // 5 s (the held time), then failures: 10, 20, 40, 80, 160, 300, 300 s apart.
      const gaps = listedAt.map((at, i) => at - (i === 0 ? 0 : listedAt[i - 1]!));
      expect(gaps.slice(0, 7)).toEqual([5, 10, 20, 40, 80, 160, RELIST_BACKOFF_MAX_MS / 1000]);
      source.failures.delete('skills/list');
      const count = source.count('skills/list');
      while (source.count('skills/list') === count) await vi.advanceTimersByTimeAsync(1_000);
      await vi.advanceTimersByTimeAsync(5_000);
      expect(source.count('skills/list')).toBe(count + 2);
      catalog.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
