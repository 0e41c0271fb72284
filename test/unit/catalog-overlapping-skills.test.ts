// A skill whose directory is a file of another skill (issue 22 item 2): skills.json says what
// the tree does. In the listing generation the nested skill is declined, with the reason, and
// nothing of it is vouched for; in the index generation (no manifests) the index's skill holds
// the path; and a skill declined for the tree it met is laid out again once the file is gone.
import { describe, expect, it } from 'vitest';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { NotADirectoryError } from '../../src/errors.js';
import { SkillsFilesystem } from '../../src/fs/skills-filesystem.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';

interface ShownSkill {
  qualifiedName: string;
  path: string;
  integrity: string;
  state: string;
  declined?: string;
}

function catalogOf(source: MemorySkillSource): ServerCatalog {
  return new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => undefined, cache: new ContentCache(1 << 20), hideDynamic: false });
}

/** skills.json as a reader gets it, by path. */
async function shownSkills(filesystem: SkillsFilesystem): Promise<Record<string, ShownSkill>> {
  const { sizeBytes } = await filesystem.getattr('/skills.json');
  const handle = await filesystem.open('/skills.json');
  const text = filesystem.read(handle, 0, sizeBytes).toString();
  filesystem.release(handle);
  const skills: ShownSkill[] = JSON.parse(text).servers.flatMap((server: { skills: ShownSkill[] }) => server.skills);
  return Object.fromEntries(skills.map((skill) => [skill.path, skill]));
}

/** pf, whose manifest lists a file pf/q, and a skill at pf/q; `nestedFirst` lists pf/q before pf. */
function overlapping(nestedFirst = false): MemorySkillSource {
  const source = new MemorySkillSource('lab');
  const add = {
    pf: () => source.addSkill('pf', { 'SKILL.md': skillMarkdown('pf'), q: 'the file q of pf\n' }),
    q: () => source.addSkill('pf/q', { 'SKILL.md': skillMarkdown('q'), 'notes.md': 'notes of q\n' }),
  };
  if (nestedFirst) add.q();
  add.pf();
  if (!nestedFirst) add.q();
  return source;
}

describe('a skill whose directory is a file of another skill', () => {
  for (const nestedFirst of [false, true]) {
    it(`listing generation${nestedFirst ? ', the nested skill listed first' : ''}: the tree has the file, skills.json the skill declined with the reason and nothing verified`, async () => {
      const source = overlapping(nestedFirst);
      const catalog = catalogOf(source);
      await catalog.refresh();
      const filesystem = new SkillsFilesystem([catalog]);

      // The tree: pf/q is pf's file, verified against pf's manifest; nothing of the skill q is there.
      expect(await filesystem.getattr('/lab/pf/q')).toMatchObject({ kind: 'file', sizeBytes: 'the file q of pf\n'.length });
      expect((await filesystem.getxattr('/lab/pf/q', 'user.mcp.uri')).toString()).toBe('skill://pf/q');
      await expect(filesystem.getattr('/lab/pf/q/SKILL.md')).rejects.toThrow(NotADirectoryError);
      const handle = await filesystem.open('/lab/pf/q');
      expect(filesystem.read(handle, 0, 100).toString()).toBe('the file q of pf\n');
      filesystem.release(handle);

      // skills.json says the same: pf whole and verified, pf/q declined and vouched for by nothing.
      const shown = await shownSkills(filesystem);
      expect(shown['lab/pf']).toMatchObject({ state: 'ok', integrity: 'verified' });
      expect(shown['lab/pf/q']).toMatchObject({ qualifiedName: 'lab/q', state: 'declined', integrity: 'none' });
      expect(shown['lab/pf/q']!.declined).toBe(
        'its files cannot be laid out as a tree: skill://pf/q/SKILL.md needs "pf/q" to be a directory, but it is the file skill://pf/q',
      );
      expect(catalog.health()).toMatchObject({ skills: 1, declined: 1 });
      for (const file of ['SKILL.md', 'notes.md']) expect(source.count('resources/read', `skill://pf/q/${file}`)).toBe(0);
    });
  }

  it('index generation (no manifests): the index puts a skill at pf/q, and the tree and skills.json agree on it', async () => {
    const source = overlapping();
    source.generations = { listing: false, index: true };
    const catalog = catalogOf(source);
    await catalog.refresh();
    const filesystem = new SkillsFilesystem([catalog]);
    expect(await filesystem.getattr('/lab/pf/q')).toMatchObject({ kind: 'directory' });
    const handle = await filesystem.open('/lab/pf/q/SKILL.md');
    expect(filesystem.read(handle, 0, 1_000).toString()).toBe(skillMarkdown('q'));
    filesystem.release(handle);
    const shown = await shownSkills(filesystem);
    expect(shown['lab/pf']).toMatchObject({ state: 'ok', integrity: 'skill-md-verified' });
    expect(shown['lab/pf/q']).toMatchObject({ state: 'ok', integrity: 'skill-md-verified' });
    expect(shown['lab/pf/q']!.declined).toBeUndefined();
  });

  it('once a refreshed pf no longer lists the file, the skill at pf/q is laid out at once, not at the next listing', async () => {
    const source = overlapping();
    const catalog = catalogOf(source);
    await catalog.refresh();
    let nowMs = 0;
    const filesystem = new SkillsFilesystem([catalog], { now: () => nowMs });
    expect((await shownSkills(filesystem))['lab/pf/q']).toMatchObject({ state: 'declined' });

    // pf's entry now lists another file instead of q; a lookup of that file re-fetches pf's entry alone.
    source.addSkill('pf', { 'SKILL.md': skillMarkdown('pf'), 'r.md': 'r\n' });
    expect(await filesystem.getattr('/lab/pf/r.md')).toMatchObject({ kind: 'file' });
    expect(source.count('skills/list')).toBe(1);

    expect(await filesystem.getattr('/lab/pf/q')).toMatchObject({ kind: 'directory' });
    expect(await filesystem.readdir('/lab/pf/q')).toEqual(['SKILL.md', 'notes.md']);
    // skills.json is rendered at most once a second.
    nowMs += 1_001;
    const shown = await shownSkills(filesystem);
    expect(shown['lab/pf/q']).toMatchObject({ state: 'ok', integrity: 'verified' });
    expect(shown['lab/pf/q']!.declined).toBeUndefined();
    expect(catalog.health()).toMatchObject({ skills: 2, declined: 0 });
  });
});
