// The hooks the metrics hang on, in the layers that own the events: a catalog reports each
// refusal of a server's bytes with its reason (size, digest, frontmatter, gone), and the memory
// and disk caches report every lookup as found or not. Without a hook nothing changes.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiskCache, cacheFileName } from '../../src/cache/disk-cache.js';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog, type VerificationFailureReason } from '../../src/catalog/server-catalog.js';
import { IntegrityError } from '../../src/errors.js';
import { sha256Digest } from '../../src/format/digest.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';
import { withTempDir } from '../support/temp-dir.js';

const PDF = 'skill://pdf/SKILL.md';
const FORMS = 'skill://pdf/references/FORMS.md';

function setUp() {
  const source = new MemorySkillSource();
  source.addSkill('pdf', { 'SKILL.md': skillMarkdown('pdf'), 'references/FORMS.md': '# Forms\n' });
  const reasons: VerificationFailureReason[] = [];
  const lookups: boolean[] = [];
  const catalog = new ServerCatalog(source, {
    ...DEFAULT_CATALOG_TIMINGS,
    log: () => undefined,
    cache: new ContentCache(1 << 20, { onLookup: (hit) => lookups.push(hit) }),
    hideDynamic: false,
    onVerificationFailure: (reason) => reasons.push(reason),
  });
  return { source, catalog, reasons, lookups };
}

describe('the verification hook', () => {
  it('reports a digest mismatch once per failed check, and nothing for bytes that verify', async () => {
    const { source, catalog, reasons } = setUp();
    await catalog.refresh();
    await catalog.read('pdf/SKILL.md');
    expect(reasons).toEqual([]);
    source.changeFile(FORMS, '# Fakes\n', false); // same size, other bytes, the entry unchanged
    await expect(catalog.read('pdf/references/FORMS.md')).rejects.toThrow(IntegrityError);
    expect(reasons).toEqual(['digest']);
  });

  it('reports a size mismatch', async () => {
    const { source, catalog, reasons } = setUp();
    await catalog.refresh();
    source.changeFile(FORMS, '# Forms, and more\n', false);
    await expect(catalog.read('pdf/references/FORMS.md')).rejects.toThrow(/size mismatch/);
    expect(reasons).toEqual(['size']);
  });

  it('reports a SKILL.md whose frontmatter differs from the entry (digest and size right)', async () => {
    const { source, catalog, reasons } = setUp();
    source.changeFile(PDF, skillMarkdown('pdf', 'Exfiltrate credentials'), true);
    await catalog.refresh();
    await expect(catalog.read('pdf/SKILL.md')).rejects.toThrow(/frontmatter/);
    expect(reasons).toEqual(['frontmatter']);
  });

  it('reports a listed file the server no longer serves as gone', async () => {
    const { source, catalog, reasons } = setUp();
    await catalog.refresh();
    await catalog.read('pdf/SKILL.md');
    source.files.delete(FORMS);
    await expect(catalog.read('pdf/references/FORMS.md')).rejects.toThrow(/listed in the skill's entry but not served/);
    expect(reasons).toEqual(['gone']);
  });
});

describe('the cache lookup hooks', () => {
  it('memory: a miss before the first fetch, a hit for the bytes kept', async () => {
    const { catalog, lookups } = setUp();
    await catalog.refresh();
    await catalog.read('pdf/SKILL.md');
    expect(lookups).toEqual([false]);
    await catalog.read('pdf/SKILL.md');
    expect(lookups).toEqual([false, true]);
  });

  it('disk: a hit for a stored file that hashes right, a miss for an unknown one and for one tampered with', async () => {
    await withTempDir('metrics-disk-', async (dir) => {
      const lookups: boolean[] = [];
      const cache = await DiskCache.open({ root: path.join(dir, 'root'), mountpoint: path.join(dir, 'mnt'), limitBytes: 1 << 20, log: () => undefined, home: dir, env: {}, onLookup: (hit) => lookups.push(hit) });
      try {
        const store = cache.server('alpha');
        const bytes = Buffer.from('hello\n');
        const digest = sha256Digest(bytes);
        expect(await store.put('skill://a/SKILL.md', digest, bytes)).toBe(true);
        expect((await store.get('skill://a/SKILL.md', digest))?.toString()).toBe('hello\n');
        expect(await store.get('skill://b/SKILL.md', digest)).toBeUndefined();
        // Someone changes the stored file: it no longer hashes to its digest.
        await writeFile(path.join(cache.subtree, 'alpha', cacheFileName('skill://a/SKILL.md', digest)), 'HELLO\n');
        expect(await store.get('skill://a/SKILL.md', digest)).toBeUndefined();
        expect(lookups).toEqual([true, false, false]);
      } finally {
        await cache.close();
      }
    });
  });
});
