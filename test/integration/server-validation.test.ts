// Which skills are served: each broken rule keeps its skill out (with a warning that
// names the file and the rule) while the rest is served; length limits too, unless --lenient.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectInMemory,
  errorOf,
  GetResult,
  listAllSkills,
  ListResult,
  readBytes,
  readDirectoryAll,
  type Connected,
} from '../support/server-harness.js';
import { skillMd, writeTree } from '../support/skill-builder.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const longDescription = 'x'.repeat(1100);
const longCompatibility = 'y'.repeat(501);

const invalid: Record<string, { files: Record<string, string>; rule: RegExp }> = {
  'no-frontmatter': { files: { 'no-frontmatter/SKILL.md': '# Just markdown\n' }, rule: /no frontmatter/ },
  'bad-yaml': { files: { 'bad-yaml/SKILL.md': '---\nname: bad-yaml\ndescription: [unclosed\n---\n' }, rule: /not valid YAML/ },
  'Bad_Name': { files: { 'Bad_Name/SKILL.md': skillMd('Bad_Name') }, rule: /a-z, 0-9/ },
  'mismatch': { files: { 'mismatch/SKILL.md': skillMd('other-name') }, rule: /must equal the directory name "mismatch"/ },
  'no-description': { files: { 'no-description/SKILL.md': '---\nname: no-description\n---\nbody\n' }, rule: /description is required/ },
  'unclosed': { files: { 'unclosed/SKILL.md': '---\nname: unclosed\ndescription: d\n' }, rule: /not closed/ },
  'nested-metadata': {
    files: { 'nested-metadata/SKILL.md': skillMd('nested-metadata', 'd', 'metadata:\n  version: 2\n  tags: [a]\n') },
    rule: /metadata must map strings to strings/,
  },
  'long-description': { files: { 'long-description/SKILL.md': skillMd('long-description', longDescription) }, rule: /1024.*--lenient/ },
  'long-compat': { files: { 'long-compat/SKILL.md': skillMd('long-compat', 'fine', `compatibility: ${longCompatibility}\n`) }, rule: /compatibility.*--lenient/ },
};

describe('skill validation', () => {
  let root: string;

  beforeAll(async () => {
    root = await makeTempDir('skills-serve-validation-');
    const files: Record<string, string> = {
      'good/SKILL.md': skillMd('good'),
      'good/ref.md': 'ref\n',
      'string-metadata/SKILL.md': skillMd('string-metadata', 'd', 'metadata:\n  version: "2"\n'),
      'too-many/SKILL.md': skillMd('too-many'),
      // An invalid enclosing skill does not hide a valid nested one.
      'outer/SKILL.md': skillMd('wrong-outer-name'),
      'outer/private.md': 'not served: its skill is invalid\n',
      'outer/inner/SKILL.md': skillMd('inner'),
    };
    for (let i = 0; i < 512; i++) files[`too-many/files/f${i}.txt`] = `${i}\n`;
    for (const { files: extra } of Object.values(invalid)) Object.assign(files, extra);
    await writeTree(root, files);
  });
  afterAll(() => removeDir(root));

  describe('default', () => {
    let connected: Connected;
    beforeAll(async () => {
      connected = await connectInMemory({ root, watch: false });
    });
    afterAll(() => connected.close());

    it('serves only the valid skills', async () => {
      const uris = (await listAllSkills(connected.client)).skills.map((s) => s.uri);
      expect(uris).toEqual(['skill://good/SKILL.md', 'skill://outer/inner/SKILL.md', 'skill://string-metadata/SKILL.md']);
      // Nothing the tree serves is dropped by the SDK's own re-validation.
      expect(connected.logs.filter((l) => l.includes('dropped'))).toEqual([]);
    });

    it.each(Object.entries(invalid))('refuses %s with a warning naming the file and the rule', async (dir, { rule }) => {
      const warning = connected.logs.find((line) => line.includes(`${dir}/SKILL.md`));
      expect(warning).toMatch(/^warning: .*not served/);
      expect(warning).toMatch(rule);
      const error = await errorOf(connected.client.readResource({ uri: `skill://${dir}/SKILL.md` }));
      expect(error.code).toBe(-32602);
      const get = await errorOf(connected.client.request({ method: 'skills/get', params: { uri: `skill://${dir}/SKILL.md` } }, GetResult));
      expect(get.code).toBe(-32602);
    });


    it('refuses a skill of 513 files (over the 512 limit), with a warning', async () => {
      expect(connected.logs.some((l) => l.includes('too-many/SKILL.md') && l.includes('513 files'))).toBe(true);
      expect((await errorOf(connected.client.readResource({ uri: 'skill://too-many/files/f1.txt' }))).code).toBe(-32602);
      expect((await errorOf(connected.client.request({ method: 'skills/get', params: { uri: 'skill://too-many/SKILL.md' } }, GetResult))).code).toBe(-32602);
      expect((await errorOf(connected.client.request({ method: 'resources/directory/read', params: { uri: 'skill://too-many' } }, GetResult))).code).toBe(-32602);
    });

    it('serves a valid skill nested in an invalid one, and not the invalid one\'s other files', async () => {
      expect((await errorOf(connected.client.readResource({ uri: 'skill://outer/private.md' }))).code).toBe(-32602);
      expect(await readDirectoryAll(connected.client, 'skill://outer')).toEqual([
        { uri: 'skill://outer/inner', name: 'inner', mimeType: 'inode/directory' },
      ]);
    });
  });

  it.each(['legacy', 'modern'] as const)('--lenient serves over-long descriptions and compatibility, with the warning (%s)', async (era) => {
    const connected = await connectInMemory({ root, watch: false, lenient: true, era });
    try {
      const uris = (await listAllSkills(connected.client)).skills.map((s) => s.uri);
      expect(uris).toEqual([
        'skill://good/SKILL.md',
        'skill://long-compat/SKILL.md',
        'skill://long-description/SKILL.md',
        'skill://outer/inner/SKILL.md',
        'skill://string-metadata/SKILL.md',
      ]);
      expect(connected.logs.some((l) => l.includes('long-description/SKILL.md') && l.includes('served although') && l.includes('1024'))).toBe(true);
      expect(connected.logs.some((l) => l.includes('long-compat/SKILL.md') && l.includes('compatibility'))).toBe(true);
      // Other rules stay: --lenient is about length limits only.
      expect(uris).not.toContain('skill://nested-metadata/SKILL.md');
      const got = await connected.client.request({ method: 'skills/get', params: { uri: 'skill://long-description/SKILL.md' } }, GetResult);
      expect((got.skill as { frontmatter: { description: string } }).frontmatter.description).toBe(longDescription);
      // The own listing handlers add the cache hints on 2026-07-28 only, as the SDK does.
      const page = await connected.client.request({ method: 'skills/list', params: {} }, ListResult);
      if (era === 'modern') {
        expect(page).toMatchObject({ ttlMs: 30_000, cacheScope: 'private' });
        expect(got).toMatchObject({ ttlMs: 30_000, cacheScope: 'private' });
      } else {
        expect(page).not.toHaveProperty('ttlMs');
        expect(got).not.toHaveProperty('cacheScope');
      }
      expect((await readBytes(connected.client, 'skill://long-description/SKILL.md')).bytes.toString()).toContain(longDescription);
    } finally {
      await connected.close();
    }
  });

  it('lists a nested skill\'s files in both its own and the enclosing skill\'s manifest', async () => {
    const nestedRoot = await makeTempDir('skills-serve-nested-');
    try {
      await writeTree(nestedRoot, {
        'pdf/SKILL.md': skillMd('pdf'),
        'pdf/guide.md': 'guide\n',
        'pdf/forms/SKILL.md': skillMd('forms'),
        'pdf/forms/fields.md': 'fields\n',
      });
      const connected = await connectInMemory({ root: nestedRoot, watch: false });
      try {
        const { skills } = await listAllSkills(connected.client);
        const uris = (uri: string) => skills.find((s) => s.uri === uri)!.resources.map((r) => r.uri).sort();
        expect(uris('skill://pdf/SKILL.md')).toEqual(
          ['skill://pdf/SKILL.md', 'skill://pdf/forms/SKILL.md', 'skill://pdf/forms/fields.md', 'skill://pdf/guide.md'].sort(),
        );
        expect(uris('skill://pdf/forms/SKILL.md')).toEqual(['skill://pdf/forms/SKILL.md', 'skill://pdf/forms/fields.md']);
      } finally {
        await connected.close();
      }
    } finally {
      await removeDir(nestedRoot);
    }
  });
});
