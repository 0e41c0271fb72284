// Item 11 of issue 22: a 2026-07-28 server that acknowledges every subscriptions/listen and
// ends it 20 ms later. The reopen backoff (1 s doubling to 30 s) starts over only after a
// stream stayed open 30 s, and reopening re-lists at most once in 30 s: over 12 s that is 4
// listens (0, 1, 3, 7 s) and 2 listings (the first, and one for the first gap), where the old
// code made a listen and a full skills/list every second. A second case shows the trailing
// re-listing that later gaps within the window share, with shorter configured windows.
import { afterEach, describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import type { ListenTimings } from '../../src/mcp/change-listener.js';
import { McpSkillSource } from '../../src/mcp/mcp-skill-source.js';
import { scriptedServer } from '../support/hostile-scenario.js';
import { delay } from '../support/poll.js';
import { skillMd } from '../support/skill-builder.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function flappingListen(listen?: ListenTimings) {
  const dir = await makeTempDir('skills-mount-listen-');
  cleanups.push(() => removeDir(dir));
  const uri = 'skill://flap/SKILL.md';
  const server = await scriptedServer(dir, 'flap', {
    listing: true,
    listChanged: true,
    listenEndsAfterMs: 20,
    skills: [{ uri, frontmatter: { name: 'flap', description: 'a skill' }, files: { [uri]: { text: skillMd('flap', 'a skill') } } }],
  });
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  const source = new McpSkillSource('flap', server, { timeoutMs: 5_000, protocolVersion: '2026-07-28', log, ...(listen ? { listen } : {}) });
  cleanups.push(() => source.close());
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log, cache: new ContentCache(1 << 20), hideDynamic: false });
  await source.start();
  expect(source.connection()).toEqual({ status: 'connected', protocolVersion: '2026-07-28' });
  await catalog.refresh();
  const count = (pattern: RegExp) => lines.filter((line) => pattern.test(line)).length;
  return { listens: () => count(/server: request subscriptions\/listen$/), listings: () => count(/server: request skills\/list$/), catalog };
}

describe('a listen stream the server ends 20 ms after acknowledging it', () => {
  it('is reopened with a backoff that does not start over, and does not re-list on every reopen (default timings, 12 s)', async () => {
    const { listens, listings, catalog } = await flappingListen();
    await delay(12_000);
    console.log(`listen flapping over 12 s: ${listens()} listens, ${listings()} skills/list`);
    expect(listens()).toBeGreaterThanOrEqual(3);
    expect(listens()).toBeLessThanOrEqual(5);
    expect(listings()).toBeLessThanOrEqual(2);
    expect(await catalog.list('')).toEqual(['flap']);
  }, 30_000);

  it('later gaps within the re-listing window share one trailing re-listing (shorter windows)', async () => {
    const { listens, listings } = await flappingListen({ minReopenMs: 50, maxReopenMs: 400, stableAfterMs: 5_000, relistIntervalMs: 1_000 });
    await delay(2_600);
    // Reopens at 0.05, 0.15, 0.35, 0.75, 1.15, 1.55, ... s: the first re-lists at once, the rest once a second.
    expect(listens()).toBeGreaterThanOrEqual(6);
    expect(listings()).toBeGreaterThanOrEqual(3);
    expect(listings()).toBeLessThanOrEqual(4);
  }, 30_000);
});
