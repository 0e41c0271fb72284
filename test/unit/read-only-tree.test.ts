// Read-only trees (link's entry objects, snapshots): sealed, every folder 0555 with the files'
// modes kept, and removed whole; a link where the tree was is removed, never followed.
import { chmod, lstat, mkdir, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { READ_ONLY_DIRECTORY_MODE, READ_ONLY_EXEC_MODE, READ_ONLY_FILE_MODE } from '../../src/file-modes.js';
import { removeReadOnlyTree, sealReadOnlyTree } from '../../src/read-only-tree.js';
import { makeTempDir } from '../support/temp-dir.js';

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await removeReadOnlyTree(dir);
});

async function tempDir(): Promise<string> {
  const dir = await makeTempDir('read-only-tree-');
  made.push(dir);
  return dir;
}

/** tree/a.txt, tree/x/run.sh, tree/x/y/b.txt, with the modes a published tree's files have. */
async function writeTree(tree: string): Promise<void> {
  await mkdir(path.join(tree, 'x/y'), { recursive: true });
  await writeFile(path.join(tree, 'a.txt'), 'a', { mode: READ_ONLY_FILE_MODE });
  await writeFile(path.join(tree, 'x/run.sh'), '#!/bin/sh\n', { mode: READ_ONLY_EXEC_MODE });
  await writeFile(path.join(tree, 'x/y/b.txt'), 'b', { mode: READ_ONLY_FILE_MODE });
  await chmod(path.join(tree, 'x/run.sh'), READ_ONLY_EXEC_MODE);
}

const modeOf = async (at: string) => (await lstat(at)).mode & 0o7777;

describe('read-only trees', () => {
  it('sealed: every folder 0555, deepest included, and each file keeps its mode', async () => {
    const tree = path.join(await tempDir(), 'tree');
    await writeTree(tree);
    await sealReadOnlyTree(tree);
    for (const dir of [tree, path.join(tree, 'x'), path.join(tree, 'x/y')]) expect(await modeOf(dir)).toBe(0o555);
    expect(await modeOf(path.join(tree, 'a.txt'))).toBe(0o444);
    expect(await modeOf(path.join(tree, 'x/run.sh'))).toBe(0o555);
  });

  it('a sealed tree is removed whole; removing it again, or a path never there, does nothing', async () => {
    const dir = await tempDir();
    const tree = path.join(dir, 'tree');
    await writeTree(tree);
    await sealReadOnlyTree(tree);
    await removeReadOnlyTree(tree);
    expect(await readdir(dir)).toEqual([]);
    await expect(removeReadOnlyTree(tree)).resolves.toBeUndefined();
    await expect(removeReadOnlyTree(path.join(dir, 'never/there'))).resolves.toBeUndefined();
  });

  it('a link where the tree was: the link goes, the folder it points to keeps its files and its mode 0555', async () => {
    const dir = await tempDir();
    const target = path.join(dir, 'target');
    await writeTree(target);
    await sealReadOnlyTree(target);
    await symlink(target, path.join(dir, 'link'));
    await removeReadOnlyTree(path.join(dir, 'link'));
    expect((await readdir(dir)).sort()).toEqual(['target']);
    expect(await modeOf(target)).toBe(READ_ONLY_DIRECTORY_MODE);
    expect((await stat(path.join(target, 'x/y/b.txt'))).size).toBe(1);
  });

  it('a file where the tree was is removed', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'file'), 'f', { mode: READ_ONLY_FILE_MODE });
    await removeReadOnlyTree(path.join(dir, 'file'));
    expect(await readdir(dir)).toEqual([]);
  });
});
