// The catalog over a durable store (docs/cache.md): verified bytes go to it and come back from
// it with no request; the last complete listing is kept only when it changed, and shown,
// offline, when the server cannot be reached at start.
import { describe, expect, it } from 'vitest';
import type { DurableStore } from '../../src/catalog/durable-store.js';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { sha256Digest } from '../../src/format/digest.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';

/** A durable store in memory that counts what the catalog asks of it. */
class MemoryDurableStore implements DurableStore {
  readonly files = new Map<string, Buffer>();
  listing: { savedAt: string; document: unknown } | undefined;
  saves = 0;
  // As the contract says (and DiskCache does): only bytes whose sha256 is `digest` come out.
  async get(uri: string, digest: string): Promise<Buffer | undefined> {
    const bytes = this.files.get(`${uri} ${digest}`);
    return bytes && sha256Digest(bytes) === digest ? bytes : undefined;
  }
  async put(uri: string, digest: string, bytes: Uint8Array): Promise<boolean> {
    this.files.set(`${uri} ${digest}`, Buffer.from(bytes));
    return true;
  }
  async saveListing(document: unknown): Promise<boolean> {
    this.saves += 1;
    this.listing = { savedAt: '2026-12-01T00:00:00.000Z', document: JSON.parse(JSON.stringify(document)) };
    return true;
  }
  async loadListing() {
    return this.listing;
  }
}

function catalogOver(source: MemorySkillSource, durable: DurableStore, nowMs = () => 1_000) {
  return new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => {}, cache: new ContentCache(1 << 20), hideDynamic: false, durable, now: nowMs });
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the catalog over a durable store', () => {
  it('keeps the listing only when it changed', async () => {
    const source = new MemorySkillSource();
    source.addSkill('pdf', { 'SKILL.md': skillMarkdown('pdf'), 'ref.md': 'one\n' });
    const durable = new MemoryDurableStore();
    const catalog = catalogOver(source, durable);
    await catalog.refresh();
    await catalog.refresh();
    await settle();
    expect(durable.saves).toBe(1);
    source.changeFile('skill://pdf/ref.md', 'two\n');
    await catalog.refresh();
    await settle();
    expect(durable.saves).toBe(2);
  });

  it('a second catalog, its server unreachable, shows the kept listing offline and serves verified bytes with no request', async () => {
    const source = new MemorySkillSource();
    source.addSkill('pdf', { 'SKILL.md': skillMarkdown('pdf'), 'ref.md': 'one\n', 'never.md': 'not read\n' });
    const durable = new MemoryDurableStore();
    const first = catalogOver(source, durable);
    await first.refresh();
    expect((await first.read('pdf/ref.md')).bytes.toString()).toBe('one\n');
    await settle();

    const down = new MemorySkillSource();
    down.status = { status: 'failed', reason: 'cannot connect: no such command' };
    const second = catalogOver(down, durable, () => 5_000);
    expect(second.offline()).toBeNull();
    expect(await second.restoreKeptListing()).toBe(true);
    expect(second.offline()).toEqual({ since: new Date(5_000).toISOString(), listingSavedAt: '2026-12-01T00:00:00.000Z' });
    expect(await second.list('pdf')).toEqual(['SKILL.md', 'never.md', 'ref.md']);
    expect((await second.read('pdf/ref.md')).bytes.toString()).toBe('one\n');
    expect(down.requests.filter((request) => request.method === 'resources/read')).toEqual([]);
    await expect(second.read('pdf/never.md')).rejects.toThrow(/not connected/);
  });

  it('without a kept listing nothing is shown and the server is failed, not offline', async () => {
    const down = new MemorySkillSource();
    down.status = { status: 'failed', reason: 'cannot connect' };
    const catalog = catalogOver(down, new MemoryDurableStore());
    expect(await catalog.restoreKeptListing()).toBe(false);
    expect(catalog.offline()).toBeNull();
  });
});
