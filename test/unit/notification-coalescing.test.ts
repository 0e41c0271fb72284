// Items 4 and 12 of issue 22, on the catalog alone (fake clock, in-memory source with a slow
// listing): the first change after a quiet spell re-lists at once; changes while a listing
// runs queue one more, which waits until NOTIFIED_RELIST_INTERVAL_MS after that listing
// ended (it used to start the moment the listing ended); a storm costs one listing per window
// plus a trailing one, and one log line.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { NOTIFIED_RELIST_INTERVAL_MS } from '../../src/catalog/discovery.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import type { Listing } from '../../src/mcp/skill-source.js';
import type { SkillEntry } from '../../src/protocol/skills-wire.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';

const LISTING_MS = 1_500;

/** A server whose every listing takes LISTING_MS, recording when each started and ended (fake clock). */
class SlowSource extends MemorySkillSource {
  readonly listings: Array<{ startedAtMs: number; endedAtMs?: number }> = [];
  override async listSkills(onProgress?: (soFar: Listing<SkillEntry>) => void) {
    const listing: { startedAtMs: number; endedAtMs?: number } = { startedAtMs: Date.now() };
    this.listings.push(listing);
    await new Promise((resolve) => setTimeout(resolve, LISTING_MS));
    listing.endedAtMs = Date.now();
    return super.listSkills(onProgress);
  }
}

function setUp() {
  const source = new SlowSource();
  source.addSkill('one', { 'SKILL.md': skillMarkdown('one') });
  const logs: string[] = [];
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: (line) => logs.push(line), cache: new ContentCache(1 << 20), hideDynamic: false });
  return { source, catalog, logs };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('re-listing for change notifications', () => {
  it('the first change after a quiet spell re-lists at once', async () => {
    const { source, catalog } = setUp();
    const first = catalog.refresh();
    await vi.advanceTimersByTimeAsync(LISTING_MS);
    await first;
    await vi.advanceTimersByTimeAsync(10_000);
    const at = Date.now();
    source.emit({ type: 'list-changed' });
    expect(source.listings.at(-1)!.startedAtMs).toBe(at);
  });

  it('a change during a slow listing queues one more, which waits out the window after that listing ends', async () => {
    const { source, catalog } = setUp();
    const first = catalog.refresh();
    await vi.advanceTimersByTimeAsync(LISTING_MS);
    await first;
    await vi.advanceTimersByTimeAsync(10_000);
    source.emit({ type: 'list-changed' });
    await vi.advanceTimersByTimeAsync(100);
    // Changes while the notified listing runs: they may be missing from it.
    for (let i = 0; i < 50; i++) source.emit({ type: 'list-changed' });
    await vi.advanceTimersByTimeAsync(LISTING_MS + NOTIFIED_RELIST_INTERVAL_MS + LISTING_MS);
    const [, notified, queued, ...more] = source.listings;
    expect(more).toEqual([]);
    expect(queued).toBeDefined();
    expect(queued!.startedAtMs - notified!.endedAtMs!).toBeGreaterThanOrEqual(NOTIFIED_RELIST_INTERVAL_MS);
  });

  it('a 10 s storm costs at most one listing a window (plus the first and a trailing one) and one log line', async () => {
    const { source, catalog, logs } = setUp();
    const first = catalog.refresh();
    await vi.advanceTimersByTimeAsync(LISTING_MS);
    await first;
    const before = source.listings.length;
    const logsBefore = logs.length;
    for (let tick = 0; tick < 100; tick++) {
      for (let i = 0; i < 100; i++) source.emit({ type: 'list-changed' });
      await vi.advanceTimersByTimeAsync(100);
    }
    // The storm is over: its trailing listing comes, then nothing more.
    await vi.advanceTimersByTimeAsync(2 * (NOTIFIED_RELIST_INTERVAL_MS + LISTING_MS));
    const listings = source.listings.slice(before);
    expect(listings.length).toBeLessThanOrEqual(Math.ceil(10_000 / (NOTIFIED_RELIST_INTERVAL_MS + LISTING_MS)) + 2);
    for (let i = 1; i < listings.length; i++) expect(listings[i]!.startedAtMs - listings[i - 1]!.endedAtMs!).toBeGreaterThanOrEqual(NOTIFIED_RELIST_INTERVAL_MS);
    const added = logs.slice(logsBefore);
    expect(added.filter((line) => /change notifications faster than/.test(line))).toHaveLength(1);
    // Listings that changed nothing during the storm log nothing.
    expect(added.filter((line) => /listing generation/.test(line)).length).toBeLessThanOrEqual(1);
    const settled = source.listings.length;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(source.listings.length).toBe(settled);
  });
});
