// Items 4 and 12 of issue 22: a storm of list_changed (1,000 a second for 10 s) against a
// 5,000-skill catalog whose listing takes the server 150 ms, on both eras' channels (2025:
// unsolicited notifications; 2026-07-28: the subscriptions/listen stream). The source and the
// catalog run in this process, the scripted server in a child, so process.cpuUsage() is the
// daemon's side. The storm is coalesced into a re-listing at most every 2 s (a listing queued
// while one runs waits too), costs under a quarter of a core, logs one line, and a skill added
// when it ends still shows shortly after.
import { afterEach, describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { NOTIFIED_RELIST_INTERVAL_MS } from '../../src/catalog/discovery.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { McpSkillSource } from '../../src/mcp/mcp-skill-source.js';
import type { ProtocolVersionChoice } from '../../src/protocol/revisions.js';
import { delay, waitFor } from '../support/poll.js';
import { scriptedServer } from '../support/hostile-scenario.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const STORM_MS = 10_000;

async function stormAgainst(era: ProtocolVersionChoice) {
  const dir = await makeTempDir('skills-mount-storm-');
  cleanups.push(() => removeDir(dir));
  const server = await scriptedServer(dir, 'storm', {
    listing: true,
    listChanged: true,
    syntheticSkills: 5_000,
    listingDelayMs: 150,
    storm: { perSecond: 1_000, durationMs: STORM_MS, addsSkill: 'late' },
  });
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  const source = new McpSkillSource('storm', server, { timeoutMs: 10_000, protocolVersion: era, log });
  cleanups.push(() => source.close());
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log, cache: new ContentCache(1 << 24), hideDynamic: false });
  await source.start();
  expect(source.connection()).toEqual({ status: 'connected', protocolVersion: era });
  await catalog.refresh();
  expect(catalog.health().skills).toBe(5_000);

  const count = (pattern: RegExp) => lines.filter((line) => pattern.test(line)).length;
  await waitFor(() => count(/server: storm started/) === 1, 15_000, 'the storm to start');
  const cpuBefore = process.cpuUsage();
  const startedAtMs = performance.now();
  const listingsBefore = count(/server: request skills\/list$/);
  const logLinesBefore = lines.filter((line) => !line.includes('server: ')).length;
  await waitFor(() => count(/server: storm ended/) === 1, STORM_MS + 10_000, 'the storm to end');
  const endedAtMs = performance.now();
  // The skill added as the storm ends shows after one trailing re-listing.
  await waitFor(async () => (await catalog.list('')).includes('late'), 10_000, 'the skill added at the end to show');
  const visibleAfterMs = performance.now() - endedAtMs;
  // A quiet spell after it: nothing more is listed for a storm that is over.
  await delay(NOTIFIED_RELIST_INTERVAL_MS + 500);
  const cpu = process.cpuUsage(cpuBefore);
  const wallMs = performance.now() - startedAtMs;
  return {
    listings: count(/server: request skills\/list$/) - listingsBefore,
    cpuShare: (cpu.user + cpu.system) / 1_000 / wallMs,
    wallMs,
    visibleAfterMs,
    logLines: lines.filter((line) => !line.includes('server: ')).slice(logLinesBefore),
    stormLines: count(/change notifications faster than/),
  };
}

describe('a list_changed storm (1,000 a second for 10 s, 5,000 skills, 150 ms listings)', () => {
  for (const era of ['2025-11-25', '2026-07-28'] as const) {
    it(`is coalesced and cheap over ${era === '2025-11-25' ? 'the 2025 notifications' : 'the 2026-07-28 listen stream'}`, async () => {
      const result = await stormAgainst(era);
      console.log(`storm ${era}: ${result.listings} skills/list, CPU ${(result.cpuShare * 100).toFixed(1)} % of a core over ${(result.wallMs / 1000).toFixed(1)} s, change visible ${Math.round(result.visibleAfterMs)} ms after the storm`);
      // One re-listing per window at most (each window starts when the last listing ended), plus the prompt first one.
      expect(result.listings).toBeGreaterThanOrEqual(2);
      expect(result.listings).toBeLessThanOrEqual(Math.ceil(STORM_MS / NOTIFIED_RELIST_INTERVAL_MS) + 2);
      expect(result.cpuShare).toBeLessThan(0.25);
      expect(result.visibleAfterMs).toBeLessThan(NOTIFIED_RELIST_INTERVAL_MS + 2_000);
      // One line for the storm; listings that changed nothing say nothing; the one that brought "late" does.
      expect(result.stormLines).toBe(1);
      expect(result.logLines.filter((line) => /listing generation/.test(line)).length).toBeLessThanOrEqual(2);
      expect(result.logLines.length).toBeLessThanOrEqual(4);
    }, 60_000);
  }
});
