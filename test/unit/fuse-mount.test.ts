// Mount options and mountpoint checks that need no kernel mount.

import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { buildMountOptions, prepareMountpoint } from '../../src/fuse/mount.js';

describe('buildMountOptions', () => {
  it('is read-only, private and kernel-checked by default', () => {
    expect(buildMountOptions({ operationTimeoutMs: 35_000 })).toEqual([
      'ro',
      'nosuid',
      'nodev',
      'noexec',
      'fsname=skills-mount',
      'subtype=skills-mount',
      'default_permissions',
      'use_ino',
      'entry_timeout=1',
      'attr_timeout=1',
      'negative_timeout=1',
      'auto_cache',
      'ac_attr_timeout=0',
      'auto_unmount',
    ]);
  });

  it('passes zero timeouts through (fuse-native would drop them) and drops optional features', () => {
    const options = buildMountOptions({
      operationTimeoutMs: 1,
      entryTimeoutSeconds: 0,
      attrTimeoutSeconds: 0.5,
      negativeTimeoutSeconds: 60,
      autoCache: false,
      autoUnmount: false,
    });
    expect(options).toEqual(expect.arrayContaining(['entry_timeout=0', 'attr_timeout=0.5', 'negative_timeout=60']));
    expect(options).not.toContain('auto_cache');
    expect(options).not.toContain('auto_unmount');
    expect(options.some((option) => option.startsWith('allow_'))).toBe(false);
  });

  it('rejects negative or non-finite timeouts', () => {
    expect(() => buildMountOptions({ operationTimeoutMs: 1, attrTimeoutSeconds: -1 })).toThrow(ConfigError);
    expect(() => buildMountOptions({ operationTimeoutMs: 1, entryTimeoutSeconds: Number.NaN })).toThrow(
      'entryTimeoutSeconds must be a number of seconds >= 0',
    );
  });
});

describe('prepareMountpoint', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'skills-mount-prepare-'));
  });
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

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
