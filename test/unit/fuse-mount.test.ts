// What a mount will be, decided without a kernel mount: the `-o` options libfuse 3 receives,
// the timeouts refused before anything is created, the one line a platform without FUSE gets
// (with each missing piece simulated through injected probes), and the mountpoint checks.

import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import type { FilesystemCore } from '../../src/fs/filesystem-core.js';
import { MOUNT_TYPE, chooseBackend, mountFilesystem, prepareMountpoint } from '../../src/fuse/index.js';
import { buildLowLevelMountOptions } from '../../src/fuse/mount.js';
import { linuxProbes } from '../support/platform-probes.js';
import { makeTempDir, removeDir, withTempDir } from '../support/temp-dir.js';

/** Never called: every case here fails before the core is touched. */
const NO_CORE = {} as FilesystemCore;

const probes = linuxProbes;

describe('the mount libfuse 3 is asked for', () => {
  it('is read-only and inert in the kernel: ro, nosuid, nodev, noexec, never rw', () => {
    const options = buildLowLevelMountOptions();
    for (const flag of ['ro', 'nosuid', 'nodev', 'noexec']) expect(options, flag).toContain(flag);
    expect(options).not.toContain('rw');
  });

  it('is private to the mounting user unless allowOther (--allow-user); the kernel checks the modes', () => {
    expect(buildLowLevelMountOptions()).not.toContain('allow_other');
    expect(buildLowLevelMountOptions()).not.toContain('allow_root');
    expect(buildLowLevelMountOptions()).toContain('default_permissions');
    expect(buildLowLevelMountOptions({ allowOther: { uid: 65533, gid: 65534 } })).toContain('allow_other');
  });

  it('is listed as fuse.skills-mount, the type status and unmount look for', () => {
    const options = buildLowLevelMountOptions();
    expect(options).toContain('fsname=skills-mount');
    expect(`fuse.${options.find((o) => o.startsWith('subtype='))!.slice('subtype='.length)}`).toBe(MOUNT_TYPE);
  });

  it('refuses bad timeouts with a ConfigError naming the option, before the mountpoint is created', async () => {
    await withTempDir('skills-mount-options-', async (tmp) => {
      const never = path.join(tmp, 'mnt');
      await expect(mountFilesystem(NO_CORE, never, { operationTimeoutMs: 1, negativeTimeoutSeconds: Infinity })).rejects.toThrow(
        new ConfigError('negativeTimeoutSeconds must be a number of seconds >= 0, got Infinity'),
      );
      await expect(mountFilesystem(NO_CORE, never, { operationTimeoutMs: 1, kernelCacheSeconds: -1 })).rejects.toThrow(
        new ConfigError('kernelCacheSeconds must be a number of seconds >= 0, got -1'),
      );
      await expect(mountFilesystem(NO_CORE, never, { operationTimeoutMs: 0 })).rejects.toThrow(
        new ConfigError('operationTimeoutMs must be a positive number, got 0'),
      );
      await expect(stat(never)).rejects.toMatchObject({ code: 'ENOENT' });
    });
  });
});

describe('a platform without FUSE: one line saying what it needs, a ConfigError (exit 2)', () => {
  it.each([
    ['macOS', probes({ platform: 'darwin' }), /^mounting needs FUSE, which macOS has only through macFUSE, and this release mounts on Linux only; skills-mount snapshot DIR or skills-mount link work without FUSE$/],
    ['Windows', probes({ platform: 'win32' }), /^mounting needs FUSE, which Windows does not have; skills-mount snapshot DIR or skills-mount link/],
    ['Linux without /dev/fuse', probes({ exists: async () => false }), /^\/dev\/fuse does not exist: load the module \(sudo modprobe fuse\), or in a container add --device \/dev\/fuse/],
    ['Linux with SKILLS_MOUNT_NO_FUSE=1', probes({ env: { SKILLS_MOUNT_NO_FUSE: '1' } }), /^FUSE is turned off here \(SKILLS_MOUNT_NO_FUSE=1\)/],
    ['a user who cannot open /dev/fuse', probes({ readWrite: async () => false }), /^this user cannot open \/dev\/fuse: .*sudo chmod 0666 \/dev\/fuse/],
    ['no fusermount3 on PATH', probes({ which: async () => undefined }), /^fusermount3 is not on PATH .*sudo apt-get install fuse3/],
  ])('%s', async (_what, machine, message) => {
    const refused = await chooseBackend({}, machine).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toMatch(message);
    expect((refused as Error).message).not.toContain('\n');
  });

  it('root may open /dev/fuse whatever its mode', async () => {
    const refused = await chooseBackend({}, probes({ uid: 0, readWrite: async () => false, which: async () => undefined })).catch((error: unknown) => error as Error);
    // Past the device: what is missing now is fusermount3.
    expect(String(refused)).toContain('fusermount3 is not on PATH');
  });
});

describe('prepareMountpoint', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await makeTempDir('skills-mount-prepare-');
  });
  afterEach(() => removeDir(tmp));

  it('creates a missing mountpoint (and parents) with mode 0700', async () => {
    const target = path.join(tmp, 'a', 'b', 'mnt');
    expect(await prepareMountpoint(target)).toBe(target);
    expect((await stat(target)).mode & 0o777).toBe(0o700);
  });

  it('accepts an empty directory and returns its absolute path', async () => {
    await mkdir(path.join(tmp, 'empty'));
    const relative = path.relative(process.cwd(), path.join(tmp, 'empty'));
    expect(await prepareMountpoint(relative)).toBe(path.join(tmp, 'empty'));
  });

  it('refuses a non-empty directory with a clear message', async () => {
    const target = path.join(tmp, 'full');
    await mkdir(target);
    await writeFile(path.join(target, 'mine.txt'), 'keep me');
    await expect(prepareMountpoint(target)).rejects.toThrow(
      new ConfigError(
        `mountpoint ${target} is not empty; skills-mount mounts only on an empty directory: ` +
          'choose an empty directory, or a path that does not exist yet (it is created with mode 0700)',
      ),
    );
  });

  it('refuses a file', async () => {
    const target = path.join(tmp, 'file');
    await writeFile(target, 'x');
    await expect(prepareMountpoint(target)).rejects.toThrow(`mountpoint ${target} is not a directory`);
  });

  it('refuses a mount point of another filesystem', async () => {
    await expect(prepareMountpoint('/proc')).rejects.toThrow('/proc is already a mount point (proc from proc)');
  });
});
