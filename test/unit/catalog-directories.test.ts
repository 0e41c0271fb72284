// Directory reads at unit speed: a failure is never remembered as an answer, and what the
// listings put in a directory stays visible when the server refuses or fails to read it.
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { NotFoundError, UnavailableError } from '../../src/errors.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';

function setUp() {
  const source = new MemorySkillSource();
  source.featureFlags = { ...source.featureFlags, directoryRead: true };
  const logs: string[] = [];
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: (line) => logs.push(line), cache: new ContentCache(1 << 20), hideDynamic: false });
  return { source, catalog, logs };
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
});
