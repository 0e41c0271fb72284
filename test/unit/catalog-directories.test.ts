// Directory reads at unit speed: a failure is never remembered as an answer, and what the
// listings put in a directory stays visible when the server refuses or fails to read it.
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import type { DurableStore } from '../../src/catalog/durable-store.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { NotFoundError, UnavailableError } from '../../src/errors.js';
import { frontmatterBinding } from '../../src/catalog/content-fetcher.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';

function setUp(durable?: DurableStore) {
  const source = new MemorySkillSource();
  source.featureFlags = { ...source.featureFlags, directoryRead: true };
  const logs: string[] = [];
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: (line) => logs.push(line), cache: new ContentCache(1 << 20), hideDynamic: false, ...(durable ? { durable } : {}) });
  return { source, catalog, logs };
}

/**
 * A disk cache that holds a copy of every file (and asks nothing of it): only copyPath matters
 * here. Stored under no binding, as an earlier version stored a SKILL.md, unless `bindings` has it.
 */
function copiesEverywhere(bindings: string[] = []): DurableStore {
  return {
    get: async () => undefined,
    put: async () => true,
    saveListing: async () => true,
    loadListing: async () => undefined,
    copyPath: (uri, digest, binding) =>
      binding === undefined || bindings.includes(binding) ? `/copies/${uri.slice('skill://'.length)}@${digest.slice('sha256:'.length, 'sha256:'.length + 8)}` : undefined,
  };
}

describe('directory reads', () => {
  it('a prefix directory the server will not read (as the SDK answers: "not a directory resource") shows what listings put there, logged once', async () => {
    const { source, catalog, logs } = setUp();
    source.addSkill('acme/billing/refunds', { 'SKILL.md': skillMarkdown('refunds') });
    source.readDirectory = async (uri) => {
      source.requests.push({ method: 'resources/directory/read', uri });
      throw new NotFoundError(`${uri} is not a directory resource`, { server: 'mem', method: 'resources/directory/read', uri });
    };
    await catalog.refresh();
    expect(await catalog.list('acme')).toEqual(['billing']);
    expect(await catalog.list('acme/billing')).toEqual(['refunds']);
    expect(await catalog.list('acme')).toEqual(['billing']);
    expect(logs.filter((line) => line.includes('resources/directory/read skill://acme failed'))).toHaveLength(1);
  });

  it('a failed directory read is an error for what it alone would show, asked again next time, never an empty answer', async () => {
    const { source, catalog } = setUp();
    source.addSkill('acme/billing/refunds', { 'SKILL.md': skillMarkdown('refunds') });
    source.files.set('skill://acme/loose/notes.md', Buffer.from('notes\n'));
    await catalog.refresh();
    source.failures.set('resources/directory/read', new UnavailableError('no answer', { server: 'mem', method: 'resources/directory/read' }));
    // Only a directory read could show acme/loose: its failure is the answer, every time.
    await expect(catalog.lookup('acme/loose')).rejects.toThrow(UnavailableError);
    await expect(catalog.lookup('acme/loose')).rejects.toThrow(UnavailableError);
    // What the listing put in acme stays visible meanwhile.
    expect(await catalog.list('acme')).toEqual(['billing']);
    const asked = source.count('resources/directory/read');
    expect(asked).toBeGreaterThanOrEqual(3);
    source.failures.delete('resources/directory/read');
    expect((await catalog.lookup('acme/loose')).kind).toBe('directory');
    expect((await catalog.list('acme')).sort()).toEqual(['billing', 'loose']);
    expect(await catalog.list('acme/loose')).toEqual(['notes.md']);
  });

  it('a SKILL.md seen only through a directory read is served only under an entry skills/get confirms; an invalid one serves nothing', async () => {
    const { source, catalog } = setUp();
    source.addSkill('acme/billing/refunds', { 'SKILL.md': skillMarkdown('refunds') });
    // Unlisted skills: one honest, one whose entry names another skill, one the server does not call a skill.
    source.addSkill('acme/honest', { 'SKILL.md': skillMarkdown('honest'), 'notes.md': 'notes\n' }, { listed: false });
    source.addSkill('acme/liar', { 'SKILL.md': skillMarkdown('liar'), 'notes.md': 'lies\n' }, { listed: false, frontmatter: { name: 'other', description: 'not its directory' } });
    source.files.set('skill://acme/plain/SKILL.md', Buffer.from(skillMarkdown('plain')));
    await catalog.refresh();
    expect((await catalog.list('acme')).sort()).toEqual(['billing', 'honest', 'liar', 'plain']);
    expect((await catalog.read('acme/honest/notes.md')).bytes.toString()).toBe('notes\n');
    await expect(catalog.list('acme/liar')).resolves.toEqual([]);
    await expect(catalog.lookup('acme/liar/SKILL.md')).rejects.toThrow(NotFoundError);
    await expect(catalog.lookup('acme/liar/notes.md')).rejects.toThrow(NotFoundError);
    expect(source.count('resources/read', 'skill://acme/liar/SKILL.md')).toBe(0);
    expect(source.count('resources/read', 'skill://acme/liar/notes.md')).toBe(0);
    // A SKILL.md the server does not call a skill is an ordinary file.
    expect((await catalog.read('acme/plain/SKILL.md')).verified).toBe(false);
  });

  it('heldChildren gives what lookup would, from what is held: complete inside a manifest, names only where list would ask the server', async () => {
    const { source, catalog } = setUp();
    source.addSkill('acme/billing/refunds', { 'SKILL.md': skillMarkdown('refunds'), 'references/a.md': 'aa\n', 'references/b.md': 'bbbb\n' });
    source.files.set('skill://acme/loose/notes.md', Buffer.from('notes\n'));
    await catalog.refresh();
    const asked = source.requests.length;
    const shape = (path: string) => {
      const held = catalog.heldChildren(path);
      return held && { complete: held.complete, children: held.children.map(({ name, stat }) => [name, stat?.kind, stat?.sizeBytes, stat?.digest !== undefined]) };
    };
    expect(shape('acme/billing/refunds')).toEqual({
      complete: true,
      children: [
        ['SKILL.md', 'file', skillMarkdown('refunds').length, true],
        ['references', 'directory', 0, false],
      ],
    });
    expect(shape('acme/billing/refunds/references')).toEqual({ complete: true, children: [['a.md', 'file', 3, true], ['b.md', 'file', 5, true]] });
    // acme is outside any manifest: list would ask the server (directoryRead), so its names serve lookups only.
    expect(shape('acme')).toEqual({ complete: false, children: [['billing', 'directory', 0, false]] });
    // Nothing held: only a directory read could show acme/loose; a file is no directory.
    expect(shape('acme/loose')).toBeUndefined();
    expect(shape('acme/billing/refunds/SKILL.md')).toBeUndefined();
    expect(source.requests.length).toBe(asked);
    // What heldChildren says is what list and lookup say.
    expect(await catalog.list('acme/billing/refunds/references')).toEqual(['a.md', 'b.md']);
    expect((await catalog.lookup('acme/billing/refunds/references/b.md')).sizeBytes).toBe(5);
  });

  it("heldChildren names a file's stored copy for the addon only once its skill's SKILL.md verified here, never a SKILL.md's stored under no frontmatter, and none without a disk cache", async () => {
    const { source, catalog } = setUp(copiesEverywhere());
    source.addSkill('acme/refunds', { 'SKILL.md': skillMarkdown('refunds'), 'references/a.md': 'aa\n', 'notes.md': 'notes\n' });
    source.files.set('skill://acme/loose/notes.md', Buffer.from('notes\n'));
    await catalog.refresh();
    const copies = (path: string) => {
      const held = catalog.heldChildren(path)!;
      return { pending: held.copiesPending, copies: Object.fromEntries(held.children.map(({ name, copy }) => [name, copy?.path])) };
    };
    expect(copies('acme/refunds')).toEqual({ pending: true, copies: { 'SKILL.md': undefined, 'notes.md': undefined, references: undefined } });
    expect(copies('acme/refunds/references')).toEqual({ pending: true, copies: { 'a.md': undefined } });
    await catalog.read('acme/refunds/SKILL.md');
    const a = copies('acme/refunds/references');
    expect(a.pending).toBe(false);
    expect(a.copies['a.md']).toMatch(/^\/copies\/acme\/refunds\/references\/a\.md@[0-9a-f]{8}$/);
    expect(catalog.heldChildren('acme/refunds/references')!.children[0]!.copy!.digest).toMatch(/^[0-9a-f]{64}$/);
    const skill = copies('acme/refunds');
    expect({ skillMd: skill.copies['SKILL.md'], notes: skill.copies['notes.md'] !== undefined, pending: skill.pending }).toEqual({ skillMd: undefined, notes: true, pending: false });
    // No copy without a disk cache.
    const bare = setUp();
    bare.source.addSkill('acme/refunds', { 'SKILL.md': skillMarkdown('refunds'), 'references/a.md': 'aa\n' });
    await bare.catalog.refresh();
    await bare.catalog.read('acme/refunds/SKILL.md');
    expect(bare.catalog.heldChildren('acme/refunds/references')!.children[0]!.copy).toBeUndefined();
  });
  it("a SKILL.md stored under the frontmatter listed now is the addon's to open, and its skill's other copies wait for nothing; under another frontmatter, neither", async () => {
    const stored: string[] = [];
    const { source, catalog } = setUp(copiesEverywhere(stored));
    source.featureFlags = { ...source.featureFlags, subscribe: true };
    const entry = source.addSkill('acme/refunds', { 'SKILL.md': skillMarkdown('refunds'), 'references/a.md': 'aa\n' });
    // As a run before this one stored it, after it verified against the entry's frontmatter.
    stored.push(frontmatterBinding(entry.frontmatter));
    await catalog.refresh();
    const skill = catalog.heldChildren('acme/refunds')!;
    const skillMd = skill.children.find(({ name }) => name === 'SKILL.md')!.copy;
    expect(skillMd?.path).toMatch(/^\/copies\/acme\/refunds\/SKILL\.md@[0-9a-f]{8}$/);
    expect(skill.copiesPending).toBe(false);
    expect(catalog.heldChildren('acme/refunds/references')!.children[0]!.copy?.path).toMatch(/a\.md@/);
    // No read of the skill may reach the catalog now, so offering its copies subscribes to it; nothing is read.
    expect(source.requests.filter(({ method }) => method !== 'skills/list').map(({ method, uri }) => `${method} ${uri}`)).toEqual(['resources/subscribe skill://acme/refunds/SKILL.md']);

    // The server now lists another description: the stored SKILL.md agreed with the old one only.
    source.entries.get(entry.uri)!.entry.frontmatter = { ...entry.frontmatter, description: 'refunds, revised' };
    await catalog.refresh();
    expect(catalog.heldChildren('acme/refunds')!.children.find(({ name }) => name === 'SKILL.md')!.copy).toBeUndefined();
    expect(catalog.heldChildren('acme/refunds/references')!.copiesPending).toBe(true);
  });
});
