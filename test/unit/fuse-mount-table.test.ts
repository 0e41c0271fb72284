// The mount table as status, unmount and the daemon read it: entries from mountinfo text,
// our mounts among others, the topmost mount at a path, and a directory's canonical name.

import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalMountpoint, findMount, readMountTable, skillsMounts } from '../../src/fuse/index.js';
import { mountOf } from '../../src/fuse/mount-table.js';
import { makeTempDir, removeDir } from '../support/temp-dir.js';

const TABLE = [
  '22 1 0:21 / /proc rw,nosuid - proc proc rw',
  '40 22 0:50 / /tmp/a\\040b/mnt ro,nosuid,nodev,noexec - fuse.skills-mount skills-mount ro,user_id=0',
  '41 22 0:51 / /tmp/over rw - fuse.skills-mount skills-mount ro',
  '42 41 0:52 / /tmp/over rw - tmpfs tmp\\134fs rw',
  '43 22 0:53 / /tmp/sshfs rw - fuse.sshfs host: rw',
  '',
].join('\n');

describe('mount table', () => {
  it('reads every entry: mountpoint and source unescaped, type, FUSE connection, options', async () => {
    const entries = await readMountTable(TABLE);
    expect(entries).toHaveLength(5);
    expect(entries[1]).toEqual({ id: '40', parentId: '22', device: '0:50', mountpoint: '/tmp/a b/mnt', fsType: 'fuse.skills-mount', source: 'skills-mount', connection: '50', options: 'ro,nosuid,nodev,noexec' });
    expect(entries[3]).toMatchObject({ mountpoint: '/tmp/over', fsType: 'tmpfs', source: 'tmp\\fs' });
  });

  it('finds the mount a path lies on: the longest mountpoint containing it, the topmost there', async () => {
    expect((await mountOf('/tmp/over/x/y', TABLE))?.fsType).toBe('tmpfs');
    expect((await mountOf('/tmp/a b/mnt', TABLE))?.connection).toBe('50');
    expect((await mountOf('/tmp/overload', TABLE))?.mountpoint).not.toBe('/tmp/over');
  });

  it('lists skills-mount mounts only where they are topmost, sorted by path', async () => {
    expect((await skillsMounts(TABLE)).map((entry) => entry.mountpoint)).toEqual(['/tmp/a b/mnt']);
  });

  it('finds the topmost mount at exactly a path, of any type, and nothing at other paths', async () => {
    expect(await findMount('/tmp/over', TABLE)).toMatchObject({ fsType: 'tmpfs' });
    expect(await findMount('/tmp/sshfs', TABLE)).toMatchObject({ fsType: 'fuse.sshfs', source: 'host:' });
    expect(await findMount('/tmp/a b', TABLE)).toBeUndefined();
    expect(await findMount('/tmp', TABLE)).toBeUndefined();
  });

  it("reads this process's table by default", async () => {
    expect(await findMount('/proc')).toMatchObject({ fsType: 'proc' });
  });
});

describe('canonicalMountpoint', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir('skills-mount-canonical-');
    await mkdir(path.join(dir, 'real'));
    await symlink(path.join(dir, 'real'), path.join(dir, 'link'));
  });
  afterAll(() => removeDir(dir));

  it("resolves the parent's symlinks and relative paths, as the table names mounts", async () => {
    const real = await canonicalMountpoint(path.join(dir, 'real'));
    expect(await canonicalMountpoint(path.join(dir, 'link', 'mnt'))).toBe(path.join(real, 'mnt'));
    expect(await canonicalMountpoint(path.relative(process.cwd(), path.join(dir, 'real', 'mnt')))).toBe(path.join(real, 'mnt'));
  });

  it('never resolves the mountpoint itself (it may be a dead mount), and accepts a parent that does not exist', async () => {
    expect(await canonicalMountpoint(path.join(dir, 'link'))).toBe(path.join(await canonicalMountpoint(dir), 'link'));
    expect(await canonicalMountpoint('/nonexistent/parent/mnt')).toBe('/nonexistent/parent/mnt');
  });
});
