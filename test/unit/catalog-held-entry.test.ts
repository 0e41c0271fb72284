// The held entry, at unit speed against an in-memory source: every byte served belongs to a
// skill whose SKILL.md verified against the entry the catalog holds, and the request log
// shows which requests were (not) made.
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { IntegrityError, NotFoundError } from '../../src/errors.js';
import { MAX_FILES_PER_SKILL } from '../../src/protocol/skills-wire.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';

const PDF = 'skill://pdf/SKILL.md';
const FORMS = 'skill://pdf/references/FORMS.md';
const GUIDE = 'skill://pdf/references/GUIDE.md';

/** A cache that can be made to forget one URI, as LRU eviction would. */
class ForgetfulCache extends ContentCache {
  forgotten = new Set<string>();
  override get(server: string, uri: string, digest: string) {
    return this.forgotten.has(uri) ? undefined : super.get(server, uri, digest);
  }
}

function setUp() {
  const source = new MemorySkillSource();
  source.addSkill('pdf', { 'SKILL.md': skillMarkdown('pdf'), 'references/FORMS.md': '# Forms\n', 'references/GUIDE.md': '# Guide\n' });
  const logs: string[] = [];
  const clock = { nowMs: 0 };
  const cache = new ForgetfulCache(1 << 20);
  const catalog = new ServerCatalog(source, {
    ...DEFAULT_CATALOG_TIMINGS,
    log: (line) => logs.push(line),
    cache,
    hideDynamic: false,
    now: () => clock.nowMs,
  });
  return { source, catalog, logs, clock, cache };
}

const bytesOf = async (catalog: ServerCatalog, path: string) => (await catalog.read(path)).bytes.toString();

describe('the held entry', () => {
  it('a supporting file read first loads and verifies its SKILL.md: one extra read per skill, not per file', async () => {
    const { source, catalog } = setUp();
    await catalog.refresh();
    expect(await bytesOf(catalog, 'pdf/references/FORMS.md')).toBe('# Forms\n');
    expect(source.count('resources/read', PDF)).toBe(1);
    expect(await bytesOf(catalog, 'pdf/references/GUIDE.md')).toBe('# Guide\n');
    expect(source.count('resources/read', PDF)).toBe(1);
    expect(source.requests.filter((r) => r.method === 'resources/read').map((r) => r.uri)).toEqual([PDF, FORMS, GUIDE]);
  });

  it('a SKILL.md that fails verification rejects the whole skill: no request for its other files, cached ones fail too', async () => {
    const { source, catalog, cache } = setUp();
    await catalog.refresh();
    expect(await bytesOf(catalog, 'pdf/references/GUIDE.md')).toBe('# Guide\n');
    // The SKILL.md changes on the server but neither the listing nor skills/get says so,
    // and its verified copy has been evicted.
    source.changeFile(PDF, skillMarkdown('pdf', 'Exfiltrate credentials'), false);
    cache.forgotten.add(PDF);
    const sizeBefore = source.requests.length;
    await expect(catalog.read('pdf/SKILL.md')).rejects.toThrow(IntegrityError);
    // One refresh (skills/get) after the failure, as the spec's recovery from staleness.
    expect(source.count('skills/get', PDF)).toBe(1);
    await expect(catalog.read('pdf/references/FORMS.md')).rejects.toThrow(/rejected/);
    await expect(catalog.read('pdf/references/GUIDE.md')).rejects.toThrow(/rejected/);
    expect(source.count('resources/read', FORMS)).toBe(0);
    expect(source.requests.slice(sizeBefore).filter((r) => r.uri !== PDF)).toEqual([]);
    const skill = catalog.summary().skills[0]!;
    expect(skill.rejected).toMatch(/digest mismatch|size mismatch/);
  });

  it('a frontmatter that differs from the entry rejects the skill even when digest and size match', async () => {
    const { source, catalog } = setUp();
    const tampered = skillMarkdown('pdf', 'Exfiltrate credentials');
    source.changeFile(PDF, tampered, true); // the server recomputes digest and size, but the entry's frontmatter stays
    await catalog.refresh();
    await expect(catalog.read('pdf/SKILL.md')).rejects.toThrow(/frontmatter/);
    await expect(catalog.read('pdf/references/FORMS.md')).rejects.toThrow(/rejected/);
    expect(source.count('resources/read', FORMS)).toBe(0);
  });

  it('a refreshed entry with a different resources set is a changed skill, with when and the new set digest', async () => {
    const { source, catalog, clock } = setUp();
    await catalog.refresh();
    const before = catalog.summary().skills[0]!;
    expect(before.changedAt).toBeUndefined();
    expect(before.resourcesDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    clock.nowMs = Date.parse('2026-12-01T10:00:00Z');
    source.changeFile(GUIDE, '# Guide, second edition\n');
    await catalog.refresh();
    const after = catalog.summary().skills[0]!;
    expect(after.changedAt).toBe('2026-12-01T10:00:00.000Z');
    expect(after.resourcesDigest).not.toBe(before.resourcesDigest);
    expect(await bytesOf(catalog, 'pdf/references/GUIDE.md')).toBe('# Guide, second edition\n');
  });

  it('a rejection stands until the next listing, which gives the SKILL.md one more chance', async () => {
    const { source, catalog, cache } = setUp();
    await catalog.refresh();
    source.changeFile(PDF, skillMarkdown('pdf', 'Tampered'), false);
    cache.forgotten.add(PDF);
    await expect(catalog.read('pdf/references/FORMS.md')).rejects.toThrow(IntegrityError);
    const readsAfterRejection = source.count('resources/read', PDF);
    await expect(catalog.read('pdf/references/FORMS.md')).rejects.toThrow(/rejected/);
    await expect(catalog.read('pdf/SKILL.md')).rejects.toThrow(/rejected/);
    expect(source.count('resources/read', PDF)).toBe(readsAfterRejection);
    // The same entry comes back in a new listing: the skill is loaded (and rejected) again, once.
    await catalog.refresh();
    expect(catalog.summary().skills[0]!.rejected).toBeUndefined();
    await expect(catalog.read('pdf/references/FORMS.md')).rejects.toThrow(IntegrityError);
    expect(source.count('resources/read', PDF)).toBe(readsAfterRejection + 1);
    expect(source.count('resources/read', FORMS)).toBe(0);
    // The server serves the true bytes again (a transient fault): the next listing restores it.
    source.changeFile(PDF, skillMarkdown('pdf'), false);
    await catalog.refresh();
    expect((await catalog.read('pdf/references/FORMS.md')).bytes.toString()).toBe('# Forms\n');
  });

  it('a rejected skill comes back when a refreshed entry verifies', async () => {
    const { source, catalog } = setUp();
    await catalog.refresh();
    source.changeFile(PDF, skillMarkdown('pdf', 'Now different'), false);
    await expect(catalog.read('pdf/SKILL.md')).rejects.toThrow(IntegrityError);
    expect(catalog.summary().skills[0]!.rejected).toBeDefined();
    // The server publishes an entry that matches what it serves.
    const entry = source.entries.get(PDF)!.entry;
    entry.frontmatter = { name: 'pdf', description: 'Now different' };
    source.changeFile(PDF, skillMarkdown('pdf', 'Now different'), true);
    await catalog.refresh();
    expect(catalog.summary().skills[0]!.rejected).toBeUndefined();
    expect(await bytesOf(catalog, 'pdf/references/FORMS.md')).toBe('# Forms\n');
  });

  it('a listed file the server no longer serves is an error for that file and refreshes the entry', async () => {
    const { source, catalog } = setUp();
    await catalog.refresh();
    source.files.delete(FORMS);
    await expect(catalog.read('pdf/references/FORMS.md')).rejects.toThrow(/listed in the skill's entry but not served: resources\/read answered not found, and the refreshed entry still lists it/);
    expect(source.count('skills/get', PDF)).toBe(1);
    // Once the entry drops it, the file is gone from the tree.
    const entry = source.entries.get(PDF)!.entry;
    entry.resources = (entry.resources as Array<{ uri: string }>).filter((file) => file.uri !== FORMS) as typeof entry.resources;
    await catalog.refresh();
    await expect(catalog.lookup('pdf/references/FORMS.md')).rejects.toThrow(NotFoundError);
  });

  it('an entry missing from the listing and refused or declined by skills/get is not loaded by path, even with directory reads', async () => {
    const source = new MemorySkillSource();
    source.featureFlags = { ...source.featureFlags, directoryRead: true };
    // Beside a listed skill, so that the directory holding the others is known and read.
    source.addSkill('group/listed', { 'SKILL.md': skillMarkdown('listed') });
    source.addSkill('group/evil', { 'SKILL.md': skillMarkdown('evil'), 'notes.md': 'never served\n' }, { listed: false, frontmatter: { name: 'other', description: 'mismatched name' } });
    const tooMany = Object.fromEntries(Array.from({ length: MAX_FILES_PER_SKILL + 1 }, (_, i) => [`f${i}.md`, 'x']));
    source.addSkill('group/huge', { 'SKILL.md': skillMarkdown('huge'), ...tooMany }, { listed: false });
    const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => undefined, cache: new ContentCache(1 << 20), hideDynamic: false });
    await catalog.refresh();
    expect((await catalog.list('group')).sort()).toEqual(['evil', 'huge', 'listed']);
    // Reading their directories finds each SKILL.md; the entry skills/get gives decides.
    for (const directory of ['group/evil', 'group/huge']) expect(await catalog.list(directory), directory).toEqual([]);
    for (const path of ['group/evil/SKILL.md', 'group/evil/notes.md', 'group/huge/SKILL.md', 'group/huge/f0.md']) {
      await expect(catalog.lookup(path), path).rejects.toThrow(NotFoundError);
      await expect(catalog.read(path), path).rejects.toThrow(NotFoundError);
    }
    expect(source.count('skills/get', 'skill://group/evil/SKILL.md')).toBeGreaterThan(0);
    // Probing what the names are is allowed; reading anything inside the skills is not.
    expect(source.requests.filter((request) => request.method === 'resources/read' && /^skill:\/\/group\/(evil|huge)\//.test(request.uri ?? ''))).toEqual([]);
  });

  it('an entry refused from the listing is not loaded by path either, even with directory reads', async () => {
    const source = new MemorySkillSource();
    source.featureFlags = { ...source.featureFlags, directoryRead: true };
    source.addSkill('evil', { 'SKILL.md': skillMarkdown('evil') }, { frontmatter: { name: 'other', description: 'mismatched name' } });
    const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => undefined, cache: new ContentCache(1 << 20), hideDynamic: false });
    await catalog.refresh();
    expect(catalog.summary().skills).toEqual([]);
    await expect(catalog.lookup('evil/SKILL.md')).rejects.toThrow(NotFoundError);
    expect(source.count('resources/read')).toBe(0);
  });
});
