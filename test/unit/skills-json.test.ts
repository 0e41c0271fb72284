// skills.json rendering: linear in the skills however many share a name, server strings
// that cannot break a line, and the held entry's state per skill; through real catalogs,
// what docs/skills-json.md promises of `integrity`, `qualifiedName` and `problems`.
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog, type CatalogSummary, type SkillSummary } from '../../src/catalog/server-catalog.js';
import { UnavailableError } from '../../src/errors.js';
import { SkillsFilesystem } from '../../src/fs/skills-filesystem.js';
import { renderSkillsJson } from '../../src/fs/skills-json.js';
import { renderStatusJson } from '../../src/fs/status-json.js';
import { INDEX_URI, type IndexEntry } from '../../src/protocol/skills-wire.js';
import { MemorySkillSource, sha256, skillMarkdown } from '../support/memory-skill-source.js';

function skill(name: string, path: string, extra: Partial<SkillSummary> = {}): SkillSummary {
  return {
    name,
    description: `about ${name}`,
    uri: `skill://${path}/SKILL.md`,
    path,
    digest: undefined,
    integrity: 'verified',
    declined: undefined,
    rejected: undefined,
    changedAt: undefined,
    resourcesDigest: `sha256:${'1'.repeat(64)}`,
    breaks: undefined,
    ...extra,
  };
}

function catalog(label: string, skills: SkillSummary[]): CatalogSummary {
  return {
    label,
    connection: { status: 'connected', protocolVersion: '2026-07-28' },
    offline: null,
    generation: 'listing',
    listingComplete: true,
    cache: { ttlMs: 30_000, cacheScope: 'private', relistAfterMs: 30_000 },
    liveChannel: true,
    listingInProgress: null,
    skills,
    problems: [],
  };
}

describe('skills.json', () => {
  it('5,000 skills of one name: each names at most 20 others and how many more; size linear in the skills', () => {
    const many = Array.from({ length: 5_000 }, (_, i) => skill('x', `team-${i}/x`));
    const text = renderSkillsJson([catalog('a', many)]);
    const document = JSON.parse(text);
    const first = document.servers[0].skills[0];
    expect(first.collidesWith).toHaveLength(21);
    expect(first.collidesWith[20]).toBe('... and 4979 more');
    // Roughly 2 KB a skill, not 5,000 names a skill.
    expect(text.length).toBeLessThan(5_000 * 3_000);
  });

  it('shows the held entry per skill: ok, rejected with why, changed with when, the set digest and rules broken', () => {
    const document = JSON.parse(
      renderSkillsJson([
        catalog('a', [
          skill('fine', 'fine'),
          skill('bad', 'bad', { rejected: 'digest mismatch: expected sha256:aa, got sha256:bb' }),
          skill('moved', 'moved', { changedAt: '2026-12-01T10:00:00.000Z' }),
          skill('long', 'long', { breaks: 'description must be at most 1024 characters' }),
        ]),
      ]),
    );
    const byName = Object.fromEntries(document.servers[0].skills.map((entry: { name: string }) => [entry.name, entry]));
    expect(byName.fine).toMatchObject({ state: 'ok', resourcesDigest: `sha256:${'1'.repeat(64)}` });
    expect(byName.bad).toMatchObject({ state: 'rejected', rejected: 'digest mismatch: expected sha256:aa, got sha256:bb' });
    expect(byName.moved).toMatchObject({ state: 'changed', changedAt: '2026-12-01T10:00:00.000Z' });
    expect(byName.long).toMatchObject({ state: 'ok', breaks: 'description must be at most 1024 characters' });
    expect(document.servers[0]).toMatchObject({ protocolVersion: '2026-07-28', liveChannel: true, cache: { ttlMs: 30_000, cacheScope: 'private' } });
  });

  it('a server string with line separators or control characters cannot start a line of its own', () => {
    const text = renderSkillsJson([catalog('a', [skill('x', 'x', { description: 'one\nline\u2028two\u2029three\u0007' })])]);
    expect(text.split('\n').some((line) => /^\s*two|^\s*three/.test(line))).toBe(false);
    expect(text).not.toMatch(/[\u2028\u2029\u0007]/);
    expect(JSON.parse(text).servers[0].skills[0].description).toBe('one\nline\u2028two\u2029three\u0007');
  });
});

/** An index-generation server: no skills extension, a skill://index.json naming each SKILL.md and its digest. */
class IndexSkillSource extends MemorySkillSource {
  constructor(label: string) {
    super(label);
    this.featureFlags = { ...this.featureFlags, extension: false };
  }

  override async readIndex() {
    this.requests.push({ method: 'resources/read', uri: INDEX_URI });
    const items: IndexEntry[] = [...this.entries.values()].map(({ entry }) => ({ url: entry.uri, digest: sha256(this.files.get(entry.uri)!), frontmatter: entry.frontmatter }));
    return { items, problems: [], complete: true, content: { uri: INDEX_URI, bytes: Buffer.from(JSON.stringify({ skills: items })), mimeType: 'application/json' } };
  }
}

function catalogFor(source: MemorySkillSource, logs: string[] = []): ServerCatalog {
  return new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: (line) => logs.push(line), cache: new ContentCache(1 << 20), hideDynamic: false });
}

interface RenderedSkill {
  name: string;
  qualifiedName: string;
  integrity: string;
  resourcesDigest: string | null;
  digest: string | null;
  collidesWith?: string[];
}

function renderedSkills(catalogs: ServerCatalog[]): RenderedSkill[] {
  return JSON.parse(renderSkillsJson(catalogs.map((catalog) => catalog.summary()))).servers.flatMap((server: { skills: RenderedSkill[] }) => server.skills);
}

describe('skills.json against real catalogs', () => {
  it('integrity says which files a reader finds verified: verified (every file), skill-md-verified (index: only SKILL.md), dynamic (none)', async () => {
    const listed = new MemorySkillSource('listed');
    listed.addSkill('full', { 'SKILL.md': skillMarkdown('full'), 'ref.md': 'reference\n' });
    listed.addSkill('live', { 'SKILL.md': skillMarkdown('live'), 'data.txt': 'generated\n' }).resources = 'dynamic';
    const indexed = new IndexSkillSource('indexed');
    indexed.addSkill('seed', { 'SKILL.md': skillMarkdown('seed'), 'notes.md': 'notes\n' });
    const catalogs = [catalogFor(listed), catalogFor(indexed)];
    for (const catalog of catalogs) await catalog.refresh();
    expect(catalogs.map((catalog) => catalog.summary().generation)).toEqual(['listing', 'index']);

    const byName = Object.fromEntries(renderedSkills(catalogs).map((skill) => [skill.qualifiedName, skill]));
    expect(Object.keys(byName).sort()).toEqual(['indexed/seed', 'listed/full', 'listed/live']);
    expect(byName['listed/full']).toMatchObject({ integrity: 'verified', digest: sha256(skillMarkdown('full')), resourcesDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(byName['indexed/seed']).toMatchObject({ integrity: 'skill-md-verified', digest: sha256(skillMarkdown('seed')), resourcesDigest: null });
    expect(byName['listed/live']).toMatchObject({ integrity: 'dynamic', digest: null, resourcesDigest: null });

    // What each value promises, file by file, as the reader sees it in user.mcp.verified.
    const filesystem = new SkillsFilesystem(catalogs);
    const verified = async (path: string) => (await filesystem.getxattr(path, 'user.mcp.verified')).toString();
    expect([await verified('/listed/full/SKILL.md'), await verified('/listed/full/ref.md')]).toEqual(['true', 'true']);
    expect([await verified('/indexed/seed/SKILL.md'), await verified('/indexed/seed/notes.md')]).toEqual(['true', 'false']);
    expect([await verified('/listed/live/SKILL.md'), await verified('/listed/live/data.txt')]).toEqual(['false', 'false']);
  });

  it('a name that repeats within one server is qualified by its path (<label>/<path>), a unique one by its name; all unique across the mount', async () => {
    const lab = new MemorySkillSource('lab');
    lab.addSkill('team-a/x', { 'SKILL.md': skillMarkdown('x') });
    lab.addSkill('team-b/x', { 'SKILL.md': skillMarkdown('x') });
    lab.addSkill('tools/y', { 'SKILL.md': skillMarkdown('y') });
    const other = new MemorySkillSource('other');
    other.addSkill('deep/x', { 'SKILL.md': skillMarkdown('x') });
    const catalogs = [catalogFor(lab), catalogFor(other)];
    for (const catalog of catalogs) await catalog.refresh();

    const skills = renderedSkills(catalogs);
    expect(skills.map((skill) => [skill.name, skill.qualifiedName])).toEqual([
      ['x', 'lab/team-a/x'],
      ['x', 'lab/team-b/x'],
      ['y', 'lab/y'],
      // Unique within its own server: the same name on another server does not lengthen it.
      ['x', 'other/x'],
    ]);
    // The repeat is never resolved silently: each names the others, on any server.
    expect(skills.find((skill) => skill.qualifiedName === 'lab/team-a/x')!.collidesWith).toEqual(['lab/team-b/x', 'other/x']);
    expect(skills.find((skill) => skill.qualifiedName === 'other/x')!.collidesWith).toEqual(['lab/team-a/x', 'lab/team-b/x']);
    expect(skills.find((skill) => skill.qualifiedName === 'lab/y')!.collidesWith).toBeUndefined();
  });

  it('problems holds the last 50 dropped entries with why, oldest first; the log names every one', async () => {
    const source = new MemorySkillSource('lab');
    source.addSkill('good', { 'SKILL.md': skillMarkdown('good') });
    const problemOf = (i: number) => {
      const dir = `bad-${String(i).padStart(2, '0')}`;
      return `skill skill://${dir}/SKILL.md: frontmatter name "wrong" differs from its directory "${dir}"`;
    };
    for (let i = 0; i < 60; i++) source.addSkill(`bad-${String(i).padStart(2, '0')}`, { 'SKILL.md': skillMarkdown('wrong') }, { frontmatter: { name: 'wrong', description: 'x' } });
    const logs: string[] = [];
    const catalog = catalogFor(source, logs);
    await catalog.refresh();

    const server = () => JSON.parse(renderSkillsJson([catalog.summary()])).servers[0];
    expect(server().skills.map((skill: { name: string }) => skill.name)).toEqual(['good']);
    expect(server().problems).toEqual(Array.from({ length: 50 }, (_, i) => problemOf(i + 10)));
    expect(JSON.parse(renderStatusJson([catalog.health()])).servers[0].problems).toBe(50);
    for (let i = 0; i < 60; i++) expect(logs).toContain(`[lab] ${problemOf(i)}`);
    expect(logs).toContain('[lab] listing generation: 1 skills, 60 problems');

    // A new problem pushes out the oldest: it is the last 50, not the first.
    source.failures.set('skills/list', new UnavailableError('no answer within 10000 ms', { server: 'lab', method: 'skills/list' }));
    await catalog.refresh();
    const problems: string[] = server().problems;
    expect(problems).toHaveLength(50);
    expect(problems[0]).toBe(problemOf(11));
    expect(problems[49]).toBe('discovery failed: lab: skills/list: no answer within 10000 ms');
  });
});
