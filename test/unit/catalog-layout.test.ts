// Manifests as a tree: a file two entries vouch for differently verifies against neither, and
// a skill whose files cannot be laid out as a tree is declined whole, never half-mounted.
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { IntegrityError, NotFoundError } from '../../src/errors.js';
import { MemorySkillSource, sha256, skillMarkdown } from '../support/memory-skill-source.js';

function catalogOf(source: MemorySkillSource) {
  return new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => undefined, cache: new ContentCache(1 << 20), hideDynamic: false });
}

describe('manifests as a tree', () => {
  it('a file the enclosing and the nested entry list with different digests is served by neither, and nothing is asked', async () => {
    const source = new MemorySkillSource();
    const outer = source.addSkill('outer', { 'SKILL.md': skillMarkdown('outer'), 'inner/SKILL.md': skillMarkdown('inner'), 'inner/notes.md': 'outer version\n' });
    source.addSkill('outer/inner', { 'SKILL.md': skillMarkdown('inner'), 'notes.md': 'inner version\n' });
    // The server serves the nested entry's bytes; the enclosing entry lists other ones.
    expect((outer.resources as Array<{ uri: string; digest: string }>).find((file) => file.uri.endsWith('inner/notes.md'))!.digest).toBe(sha256('outer version\n'));
    const catalog = catalogOf(source);
    await catalog.refresh();
    await expect(catalog.read('outer/inner/notes.md')).rejects.toThrow(IntegrityError);
    await expect(catalog.read('outer/inner/notes.md')).rejects.toThrow(/listed by skill:\/\/outer\/SKILL.md as sha256:\w+ \(14 bytes\) and by skill:\/\/outer\/inner\/SKILL.md as sha256:\w+ \(14 bytes\)/);
    expect(source.count('resources/read', 'skill://outer/inner/notes.md')).toBe(0);
    // Files both entries agree on are served.
    expect((await catalog.read('outer/inner/SKILL.md')).verified).toBe(true);
  });

  it('a skill listing a file x and a file x/y.md is declined whole, with the reason', async () => {
    const source = new MemorySkillSource();
    source.addSkill('broken', { 'SKILL.md': skillMarkdown('broken'), docs: 'a file\n', 'docs/guide.md': 'under the file\n' });
    source.addSkill('fine', { 'SKILL.md': skillMarkdown('fine') });
    const catalog = catalogOf(source);
    await catalog.refresh();
    expect((await catalog.list('')).sort()).toEqual(['fine']);
    await expect(catalog.lookup('broken/SKILL.md')).rejects.toThrow(NotFoundError);
    const broken = catalog.summary().skills.find((skill) => skill.name === 'broken')!;
    expect(broken.declined).toMatch(/cannot be laid out as a tree: skill:\/\/broken\/docs\/guide.md needs "broken\/docs" to be a directory/);
    expect(source.count('resources/read')).toBe(0);
  });

  it('a skill whose directory is a file of another skill is declined, the other one stays whole', async () => {
    const source = new MemorySkillSource();
    source.addSkill('base', { 'SKILL.md': skillMarkdown('base'), child: 'a file called child\n' });
    source.addSkill('base/child', { 'SKILL.md': skillMarkdown('child') });
    const catalog = catalogOf(source);
    await catalog.refresh();
    expect((await catalog.list('base')).sort()).toEqual(['SKILL.md', 'child']);
    expect((await catalog.read('base/child')).bytes.toString()).toBe('a file called child\n');
    const child = catalog.summary().skills.find((skill) => skill.name === 'child')!;
    expect(child.declined).toMatch(/cannot be laid out as a tree/);
  });

  it('a skill nobody listed, found by path, that cannot be laid out is declined the same way, and nothing of it is read', async () => {
    const source = new MemorySkillSource();
    source.addSkill('fine', { 'SKILL.md': skillMarkdown('fine') });
    source.addSkill('solo', { 'SKILL.md': skillMarkdown('solo'), x: 'a file\n', 'x/y.md': 'under it\n' }, { listed: false });
    const catalog = catalogOf(source);
    await catalog.refresh();
    await expect(catalog.lookup('solo/SKILL.md')).rejects.toThrow(NotFoundError);
    expect(source.count('skills/get', 'skill://solo/SKILL.md')).toBe(1);
    expect(catalog.summary().skills.find((skill) => skill.name === 'solo')?.declined).toMatch(/cannot be laid out as a tree/);
    for (const file of ['SKILL.md', 'x', 'x/y.md']) expect(source.count('resources/read', `skill://solo/${file}`)).toBe(0);
    expect(await catalog.list('')).toEqual(['fine']);
  });
});

