// The resolver every skills-serve read goes through: a file below the root opens, links are
// followed only to files below the root, and a link anywhere else refuses the open.
import { execFileSync } from 'node:child_process';
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { closeSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/errors.js';
import { openWithinRoot } from '../../src/server/confined-open.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

let root: string;
let outside: string;

beforeAll(async () => {
  outside = await realpath(await makeTempDir('confined-outside-'));
  root = await realpath(await makeTempDir('confined-root-'));
  await writeFile(join(outside, 'file.md'), 'OUTSIDE\n');
  await mkdir(join(root, 's/sub'), { recursive: true });
  await mkdir(join(root, 'shared/deep'), { recursive: true });
  await writeFile(join(root, 's/sub/file.md'), 'inside\n');
  await writeFile(join(root, 'shared/deep/x.md'), 'shared x\n');
  await symlink(outside, join(root, 's/outlink'));
  await symlink('sub', join(root, 's/inlink'));
  await symlink('sub/file.md', join(root, 's/relative.md'));
  await symlink(join(root, 's/sub/file.md'), join(root, 's/absolute.md'));
  await symlink('relative.md', join(root, 's/chain.md'));
  await symlink('../shared-link/deep/x.md', join(root, 's/through-dir-link.md'));
  await symlink('shared', join(root, 'shared-link'));
  await symlink(join(outside, 'file.md'), join(root, 's/out-absolute.md'));
  await symlink(join(relative(join(root, 's'), outside), 'file.md'), join(root, 's/out-relative.md'));
  await symlink('../../../../../../../../../../../../../../..' + outside + '/file.md', join(root, 's/out-dotdot.md'));
  await symlink('loop-b.md', join(root, 's/loop-a.md'));
  await symlink('loop-a.md', join(root, 's/loop-b.md'));
  execFileSync('mkfifo', [join(root, 's/fifo.md')]);
});
afterAll(async () => {
  await removeDir(root);
  await removeDir(outside);
});

async function contentOf(rel: string): Promise<{ text: string; realPath: string }> {
  const opened = await openWithinRoot(root, rel);
  try {
    return { text: readFileSync(opened.fd, 'utf8'), realPath: opened.realPath };
  } finally {
    closeSync(opened.fd);
  }
}

describe('openWithinRoot', () => {
  it('opens a regular file below the root and names where it is', async () => {
    expect(await contentOf('s/sub/file.md')).toEqual({ text: 'inside\n', realPath: join(root, 's/sub/file.md') });
  });

  it('follows a last-component link to a file below the root, relative, absolute or chained', async () => {
    for (const rel of ['s/relative.md', 's/absolute.md', 's/chain.md']) {
      expect(await contentOf(rel), rel).toEqual({ text: 'inside\n', realPath: join(root, 's/sub/file.md') });
    }
    // A link target may itself pass through a directory link, as long as all of it stays below.
    expect(await contentOf('s/through-dir-link.md')).toEqual({ text: 'shared x\n', realPath: join(root, 'shared/deep/x.md') });
  });

  it('refuses a link at an inner component of the path, to outside or even to inside', async () => {
    await expect(openWithinRoot(root, 's/outlink/file.md')).rejects.toThrow(NotFoundError);
    // The scan never serves a path through a directory link: one found at read time was swapped in.
    await expect(openWithinRoot(root, 's/inlink/file.md')).rejects.toThrow(NotFoundError);
  });

  it('refuses links whose target leaves the root, however it is spelled', async () => {
    for (const rel of ['s/out-absolute.md', 's/out-relative.md', 's/out-dotdot.md']) {
      await expect(openWithinRoot(root, rel), rel).rejects.toThrow(/outside the served directory/);
    }
  });

  it('refuses a link loop, a FIFO (without hanging), a directory and a missing file', async () => {
    await expect(openWithinRoot(root, 's/loop-a.md')).rejects.toThrow(/too many links/);
    await expect(openWithinRoot(root, 's/fifo.md')).rejects.toThrow(/not a regular file/);
    await expect(openWithinRoot(root, 's/sub')).rejects.toThrow(/not a regular file/);
    await expect(openWithinRoot(root, 's/nope.md')).rejects.toThrow(/ENOENT/);
    await expect(openWithinRoot(root, join(relative(root, outside), 'file.md'))).rejects.toThrow(/outside the served directory/);
  });
});
