// Digests are computed once per file version: listing twice, or many sessions listing
// at once, reads each file once; a changed file is read again, an unchanged one is not.
import { utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sha256 } from '../support/digest.mjs';
import { writeSkill } from '../support/skill-builder.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const reads = vi.hoisted(() => new Map<string, number>());
vi.mock('../../src/server/safe-read.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/server/safe-read.js')>();
  return {
    ...actual,
    readWithinRoot: (path: string, root: string) => {
      reads.set(path, (reads.get(path) ?? 0) + 1);
      return actual.readWithinRoot(path, root);
    },
  };
});

const { SkillTree } = await import('../../src/server/skill-tree.js');

describe('digest cache', () => {
  let root: string;
  beforeAll(async () => {
    root = await makeTempDir('skills-serve-digests-');
    await writeSkill(root, 'd', { files: { 'a.txt': 'a\n', 'b/c.txt': 'c\n' } });
  });
  afterAll(() => removeDir(root));

  it('reads each file once across repeated and concurrent listings', async () => {
    const tree = await SkillTree.open({ root, watch: false });
    try {
      const skill = tree.snapshot.skills[0]!;
      await Promise.all([tree.entry(skill), tree.entry(skill), ...skill.files.map((f) => tree.describe(f))]);
      await tree.rescan();
      await tree.entry(tree.snapshot.skills[0]!);
      const count = (rel: string) => reads.get(join(tree.realRoot, rel)) ?? 0;
      expect([count('d/SKILL.md'), count('d/a.txt'), count('d/b/c.txt')]).toEqual([1, 1, 1]);

      await writeFile(join(root, 'd/a.txt'), 'z\n');
      // Same size, new mtime: the version key must still tell the versions apart.
      await utimes(join(root, 'd/a.txt'), new Date(), new Date(Date.now() + 5000));
      await tree.rescan();
      const entry = await tree.entry(tree.snapshot.skills[0]!);
      const resources = entry.resources === 'dynamic' ? [] : entry.resources;
      expect(resources.find((r) => r.uri === 'skill://d/a.txt')!.digest).toBe(sha256('z\n'));
      expect([count('d/SKILL.md'), count('d/a.txt'), count('d/b/c.txt')]).toEqual([1, 2, 1]);
    } finally {
      tree.close();
    }
  });
});
