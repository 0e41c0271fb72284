// Paging against a hostile server over real stdio: a cursor returned forever and a
// 1,000,000-entry listing stop at the paging caps, in bounded time and memory, and say so.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { DEFAULT_PAGING_LIMITS, McpSkillSource, type PagingLimits } from '../../src/mcp/mcp-skill-source.js';
import { hostileEntry, hostileSkill } from '../support/hostile-scenario.js';
import { makeTestDir } from '../support/mount-harness.js';

const sources: McpSkillSource[] = [];
afterEach(async () => {
  await Promise.all(sources.splice(0).map((source) => source.close()));
});

async function connect(scenario: Record<string, unknown>, paging?: PagingLimits) {
  const dir = await makeTestDir();
  const entry = await hostileEntry(dir, 'paging', { listing: true, skills: [hostileSkill('ok', 'Good')], ...scenario });
  const logs: string[] = [];
  const source = new McpSkillSource('paging', { kind: 'stdio', command: entry.command, args: entry.args, env: {}, cwd: undefined }, {
    timeoutMs: 20_000,
    log: (line) => logs.push(line),
    ...(paging ? { paging } : {}),
  });
  sources.push(source);
  await source.start();
  expect(source.connection().status).toBe('connected');
  return { source, logs };
}

describe('paging against a hostile server', () => {
  it('a cursor returned forever (a fresh one every page) stops after the page cap, with what the first page said', async () => {
    const { source } = await connect({ listingFault: 'cursor-forever' });
    const startedAt = performance.now();
    const listing = await source.listSkills();
    const elapsedMs = performance.now() - startedAt;
    expect(listing.complete).toBe(false);
    expect(listing.problems).toEqual([`stopped after ${DEFAULT_PAGING_LIMITS.maxPages} pages`]);
    expect(listing.items.map((item) => item.uri)).toEqual(['skill://ok/SKILL.md']);
    console.log(`cursor forever: ${DEFAULT_PAGING_LIMITS.maxPages} pages in ${elapsedMs.toFixed(0)} ms`);
    expect(elapsedMs).toBeLessThan(20_000);
  });

  it('a 1,000,000-entry listing stops at the item cap, in bounded time and memory; the catalog says partial', async () => {
    const { source, logs } = await connect({ listingFault: 'huge', hugeEntries: 1_000_000, hugePageSize: 5_000 });
    const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: (line) => logs.push(line), cache: new ContentCache(1024 * 1024), hideDynamic: false });
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const startedAt = performance.now();
    await catalog.refresh();
    const elapsedMs = performance.now() - startedAt;
    const heapGrowthMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
    const summary = catalog.summary();
    expect(summary.listingComplete).toBe(false);
    expect(summary.skills).toHaveLength(DEFAULT_PAGING_LIMITS.maxItems);
    expect(logs.join('\n')).toMatch(new RegExp(`\\[paging\\] stopped at ${DEFAULT_PAGING_LIMITS.maxItems} entries`));
    console.log(`1,000,000-entry listing: stopped at ${DEFAULT_PAGING_LIMITS.maxItems} in ${elapsedMs.toFixed(0)} ms, heap +${heapGrowthMiB.toFixed(0)} MiB`);
    expect(elapsedMs).toBeLessThan(60_000);
    // Generous: measured ~330 MiB for the 250,000 kept; a million entries kept would be over 1.3 GiB.
    expect(heapGrowthMiB).toBeLessThan(700);
  });

  it('a listing is also bounded by the bytes of its entries', async () => {
    const { source } = await connect({ listingFault: 'huge', hugeEntries: 10_000, hugePageSize: 1_000 }, { ...DEFAULT_PAGING_LIMITS, maxEntryBytes: 64 * 1024 });
    const listing = await source.listSkills();
    expect(listing.complete).toBe(false);
    expect(listing.problems[0]).toMatch(/^stopped at \d+ entries: over 65536 bytes of entries$/);
    expect(listing.items.length).toBeGreaterThan(100);
    expect(listing.items.length).toBeLessThan(1_000);
  });

  it('a declared directoryRead that answers -32601 is NotSupported, not a crash', async () => {
    const { source } = await connect({ directoryRead: true, directories: { 'skill://ok': 'method-not-found' } });
    await expect(source.readDirectory('skill://ok')).rejects.toMatchObject({ name: 'NotSupportedError' });
    expect(path.basename((await source.readResource('skill://ok/SKILL.md')).uri)).toBe('SKILL.md');
  });
});
