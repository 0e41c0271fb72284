// skills-serve in its default, conformant mode serves every skill of the generated corpus:
// no warnings, complete manifests matching the bytes on disk, in both protocol eras.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../support/digest.mjs';
import { connectInMemory, listAllSkills, readBytes, type ClientEra, type Connected, type Entry } from '../support/server-harness.js';
import { TEST_CORPUS_LANDMARKS as L, testCorpusDir } from '../support/test-corpus.mjs';

async function filesUnder(root: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(join(root, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await filesUnder(root, rel)));
    else if (entry.isFile()) out.push(rel);
  }
  return out.sort();
}

const uriOf = (rel: string): string => `skill://${rel.split('/').map(encodeURIComponent).join('/')}`;

for (const era of ['legacy', 'modern'] as ClientEra[]) {
  describe(`skills-serve on the generated corpus (${era} client)`, () => {
    let root: string;
    let connected: Connected;
    let files: string[];
    let skillDirs: string[];
    let entries: Entry[];

    beforeAll(async () => {
      root = await testCorpusDir();
      files = await filesUnder(root);
      skillDirs = files.filter((f) => f.endsWith('/SKILL.md')).map((f) => f.slice(0, -'/SKILL.md'.length));
      connected = await connectInMemory({ root, watch: false, era });
      entries = (await listAllSkills(connected.client)).skills;
    });
    afterAll(async () => {
      await connected?.close();
    });

    it('lists one entry per SKILL.md and logs no warning', () => {
      expect(skillDirs.length).toBeGreaterThanOrEqual(12);
      expect(entries.map((e) => e.uri).sort()).toEqual(skillDirs.map((dir) => uriOf(`${dir}/SKILL.md`)).sort());
      expect(connected.logs.filter((line) => /warn/i.test(line))).toEqual([]);
      expect(connected.logs.some((line) => line.includes(`serving ${skillDirs.length} skills`))).toBe(true);
    });

    it('publishes complete manifests (nested skills included) whose digests and sizes match the disk', async () => {
      for (const entry of entries) {
        const dir = skillDirs.find((d) => uriOf(`${d}/SKILL.md`) === entry.uri)!;
        const mine = files.filter((f) => f.startsWith(`${dir}/`));
        expect(entry.resources.map((r) => r.uri).sort(), dir).toEqual(mine.map(uriOf).sort());
        for (const resource of entry.resources) {
          const rel = mine.find((f) => uriOf(f) === resource.uri)!;
          const bytes = await readFile(join(root, rel));
          expect(resource.size, rel).toBe(bytes.length);
          expect(resource.digest, rel).toBe(sha256(bytes));
        }
      }
      const parent = entries.find((e) => e.uri === uriOf(`${L.nestedParent}/SKILL.md`))!;
      expect(parent.resources.map((r) => r.uri)).toContain(uriOf(`${L.nestedSkill}/SKILL.md`));
    });

    it('serves the skills at the per-skill limits', () => {
      const total = (dir: string) => entries.find((e) => e.uri === uriOf(`${dir}/SKILL.md`))!.resources;
      expect(total(L.maxFilesSkill.dir)).toHaveLength(512);
      expect(total(L.justUnderBytesSkill.dir).reduce((sum, r) => sum + r.size, 0)).toBe(16 * 1024 * 1024 - 1);
      expect(total(L.atBytesSkill.dir).reduce((sum, r) => sum + r.size, 0)).toBe(16 * 1024 * 1024);
    });

    it('reads binaries back as blobs and odd-named text as text, byte-identical', async () => {
      const cases: Array<[string, 'blob' | 'text']> = [
        [L.png, 'blob'],
        [L.pdf, 'blob'],
        ...L.fonts.map((rel): [string, 'blob'] => [rel, 'blob']),
        ...L.nonAsciiFiles.map((rel): [string, 'text'] => [rel, 'text']),
        [L.spacedFile, 'text'],
        [L.deepFile, 'text'],
        [L.largeMarkdown, 'text'],
        [L.oneByteFile, 'text'],
      ];
      for (const [rel, kind] of cases) {
        const read = await readBytes(connected.client, uriOf(rel));
        expect(read.kind, rel).toBe(kind);
        expect(read.bytes.equals(await readFile(join(root, rel))), rel).toBe(true);
      }
    });
  });
}
