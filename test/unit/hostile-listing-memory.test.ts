// What a hostile listing inside the paging caps costs the daemon's memory (issue 22 item 3),
// at a quarter of the 200,000 x 1 KiB scale the bound is stated for (docs/robustness.md):
// the listing is not written to the disk cache whole (its text would cost twice its size for a
// file the cache never reads back), and skills.json, read through while open, holds what its
// skills show, not its bytes.
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import type { DurableStore } from '../../src/catalog/durable-store.js';
import { MAX_KEPT_LISTING_BYTES } from '../../src/catalog/kept-listing.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { SkillsFilesystem } from '../../src/fs/skills-filesystem.js';
import { MemorySkillSource, sha256 } from '../support/memory-skill-source.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/**
 * Live JS heap plus Buffers, after full collections with a turn of the event loop between:
 * one collection alone sometimes left ~16 MiB of garbage that a second frees (Node 24, 1 run in 4).
 */
const liveBytes = async () => {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
};
const MiB = 2 ** 20;

const ENTRIES = 50_000;
const FRONTMATTER_BYTES = 1_024;

/** The hostile server's "huge" listing (test/support/hostile-server.mjs): ~1 KiB of frontmatter each, half description, half metadata. */
function hostileSource(): MemorySkillSource {
  const source = new MemorySkillSource('huge');
  for (let i = 0; i < ENTRIES; i++) {
    const name = `s${i}`;
    const uri = `skill://huge/${name}/SKILL.md`;
    const description = `skill ${i} `.padEnd(FRONTMATTER_BYTES / 2, 'd');
    const frontmatter = { name, description, metadata: { notes: `${i}`.padEnd(FRONTMATTER_BYTES - description.length, 'm') } };
    source.entries.set(uri, { entry: { uri, frontmatter, resources: [{ uri, digest: sha256(Buffer.from(name)), size: name.length }] }, listed: true });
  }
  return source;
}

/** A disk cache's listing side, as src/cache keeps it: the text written, parsed again when read. */
class ListingOnDisk implements DurableStore {
  savedText: string | undefined;
  async get(): Promise<Buffer | undefined> {
    return undefined;
  }
  async put(): Promise<boolean> {
    return true;
  }
  async saveListing(document: unknown): Promise<boolean> {
    this.savedText = JSON.stringify({ savedAt: '2026-12-01T00:00:00.000Z', document });
    return true;
  }
  async loadListing() {
    return this.savedText === undefined ? undefined : (JSON.parse(this.savedText) as { savedAt: string; document: unknown });
  }
}

function catalogOver(source: MemorySkillSource, durable: DurableStore, log: string[]): ServerCatalog {
  return new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: (line) => log.push(line), cache: new ContentCache(1 << 20), hideDynamic: false, durable });
}

describe('a hostile listing inside the paging caps', () => {
  it('is not kept on disk whole; offline, the mount says it was too large to keep instead of showing an older one', async () => {
    const durable = new ListingOnDisk();
    const log: string[] = [];
    const catalog = catalogOver(hostileSource(), durable, log);
    await catalog.refresh();
    await new Promise((resolve) => setImmediate(resolve));
    expect(catalog.health().skills).toBe(ENTRIES);
    // 50,000 entries of ~1.1 KiB: ~55 MiB of JSON, over what the cache would ever read back.
    expect(durable.savedText!.length).toBeLessThan(1_024);

    const down = new MemorySkillSource('huge');
    down.status = { status: 'failed', reason: 'cannot connect' };
    const offline = catalogOver(down, durable, log);
    expect(await offline.restoreKeptListing()).toBe(false);
    expect(log.join('\n')).toMatch(/the kept listing cannot be used: the server's last listing was too large to keep \(50000 entries, over the 56 MiB kept at most\)/);
    expect(MAX_KEPT_LISTING_BYTES).toBe(56 * MiB);
  });

  it('costs under 4 KiB a skill with skills.json read through and open: 800 MiB at 200,000 (was 1.4 GiB)', async () => {
    // The fake server's own copy of the listing is not the daemon's.
    const source = hostileSource();
    const before = await liveBytes();
    const durable = new ListingOnDisk();
    const catalog = catalogOver(source, durable, []);
    await catalog.refresh();
    await new Promise((resolve) => setImmediate(resolve));
    // The catalog keeps each skill's resourcesDigest once a summary asked for it: that is its, not the document's.
    catalog.summary();
    const listed = await liveBytes();
    const filesystem = new SkillsFilesystem([catalog], { metadataTtlMs: 0 });
    const { sizeBytes } = await filesystem.getattr('/skills.json');
    const handle = await filesystem.open('/skills.json');
    let read = 0;
    let first = '';
    let last = '';
    for (let position = 0; position < sizeBytes; position += 128 * 1024) {
      const bytes = filesystem.read(handle, position, 128 * 1024);
      if (position === 0) first = bytes.toString('utf8', 0, 100);
      last = bytes.toString();
      read += bytes.length;
    }
    const open = await liveBytes();
    filesystem.release(handle);
    expect(read).toBe(sizeBytes);
    expect(first).toMatch(/^\{\n {2}"servers": \[/);
    expect(last.trimEnd().endsWith('}')).toBe(true);
    // ~1 KiB of JSON a skill: ~47 MiB of skills.json.
    expect(sizeBytes).toBeGreaterThan(ENTRIES * 900);
    // The open document holds what each skill shows (~400 bytes of objects), not its text.
    expect((open - listed) / ENTRIES).toBeLessThan(512);
    // The whole: listing held, its kept copy written, skills.json open. Heap and Buffers only
    // (RSS adds the runtime and freed pages: 766 MiB peak measured at 200,000).
    expect((open - before) / ENTRIES).toBeLessThan(4 * 1_024);
  });
});
