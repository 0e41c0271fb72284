// What a mount will be, decided without a kernel mount: the `-o` options libfuse receives
// from the fuse-native instance mountFilesystem mounts (built by createFuse, never mounted),
// fuse-native's patched callbacks, and the mountpoint checks.

import { constants as fsConstants } from 'node:fs';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { constants } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import type { FilesystemCore, NodeAttributes } from '../../src/fs/filesystem-core.js';
import { MOUNT_TYPE, buildMountOptions, mountFilesystem, prepareMountpoint, type MountOptions } from '../../src/fuse/index.js';
import { buildLowLevelMountOptions, createFuse } from '../../src/fuse/mount.js';
import { makeTempDir, removeDir, withTempDir } from '../support/temp-dir.js';

const { errno } = constants;
const OPEN_HANDLE = 7;
const FILE: NodeAttributes = { kind: 'file', sizeBytes: 11, mtimeMs: 1_700_000_000_000, inode: 42 };
const PINNED: NodeAttributes = { kind: 'file', sizeBytes: 5, mtimeMs: 1_600_000_000_000, inode: 41 };

function fakeCore(): FilesystemCore {
  return {
    getattr: vi.fn(async (p: string) => (p === '/' ? { kind: 'directory' as const, sizeBytes: 0, mtimeMs: 0, inode: 1 } : FILE)),
    readdir: vi.fn(async () => ['a.md']),
    open: vi.fn(async () => OPEN_HANDLE),
    fgetattr: vi.fn((handle: number) => {
      if (handle !== OPEN_HANDLE) throw new Error(`no handle ${handle}`);
      return PINNED;
    }),
    read: vi.fn(() => Buffer.alloc(0)),
    release: vi.fn(),
    listxattr: vi.fn(async () => ['user.skills.digest']),
    getxattr: vi.fn(async () => Buffer.from('sha256:abc')),
  };
}

/** The fuse-native instance mountFilesystem would mount at `mountpoint` with these options. */
function fuseFor(options: MountOptions, core = fakeCore()) {
  return createFuse(core, '/nonexistent/skills-mount-unit', buildMountOptions(options), options);
}

/** The `-o` argument libfuse would get, as name -> value (`true` for a flag). */
async function libfuseOptions(options: Partial<MountOptions> = {}): Promise<Map<string, string | true>> {
  const argument = (await fuseFor({ operationTimeoutMs: 35_000, ...options }))._fuseOptions();
  expect(argument).toMatch(/^-o/);
  return new Map(
    argument
      .slice(2)
      .split(',')
      .map((option): [string, string | true] => {
        const equals = option.indexOf('=');
        return equals < 0 ? [option, true] : [option.slice(0, equals), option.slice(equals + 1)];
      }),
  );
}

/** Calls a patched `_op_*` and resolves with what it signalled to the native side. */
function signalled(op: (signal: (code: number, ...rest: unknown[]) => void) => void): Promise<[number, ...unknown[]]> {
  return new Promise((resolve) => op((code, ...rest) => resolve([code, ...rest])));
}

/** Reads fuse-native's stat encoding (its getStatArray: mode, uid, gid, size as two words, ..., ino at 7). */
function decodeStat(ints: unknown): { mode: number; uid: number; gid: number; sizeBytes: number; inode: number } {
  const words = ints as Uint32Array;
  return { mode: words[0]!, uid: words[1]!, gid: words[2]!, sizeBytes: words[3]! + words[4]! * 2 ** 32, inode: words[7]! };
}

describe('the mount libfuse is asked for', () => {
  it('is read-only in the kernel: ro, nosuid, nodev, noexec, and never rw', async () => {
    const options = await libfuseOptions();
    for (const flag of ['ro', 'nosuid', 'nodev', 'noexec']) expect(options.get(flag), flag).toBe(true);
    expect(options.has('rw')).toBe(false);
  });

  it('is private to the mounting user: no allow_other or allow_root, whatever else is asked; the kernel checks the modes', async () => {
    for (const asked of [{}, { autoCache: false, autoUnmount: false }, { entryTimeoutSeconds: 0, attrTimeoutSeconds: 0, negativeTimeoutSeconds: 0 }]) {
      const options = await libfuseOptions(asked);
      expect(options.has('allow_other')).toBe(false);
      expect(options.has('allow_root')).toBe(false);
      expect(options.get('default_permissions')).toBe(true);
    }
  });

  it('with allowOther (--allow-user): allow_other, and every node belongs to that uid and gid, still 0400 / 0500', async () => {
    const allowOther = { uid: 65533, gid: 65534 };
    const options = await libfuseOptions({ allowOther });
    expect(options.get('allow_other')).toBe(true);
    expect(options.get('default_permissions')).toBe(true);
    expect(options.has('allow_root')).toBe(false);
    const fuse = await fuseFor({ operationTimeoutMs: 35_000, allowOther });
    const [, file] = await signalled((signal) => fuse._op_getattr(signal, '/a.md'));
    expect(decodeStat(file)).toMatchObject({ mode: fsConstants.S_IFREG | 0o400, uid: 65533, gid: 65534 });
    const [, directory] = await signalled((signal) => fuse._op_getattr(signal, '/'));
    expect(decodeStat(directory)).toMatchObject({ mode: fsConstants.S_IFDIR | 0o500, uid: 65533, gid: 65534 });
    expect(buildLowLevelMountOptions({ allowOther })).toContain('allow_other');
    expect(buildLowLevelMountOptions()).not.toContain('allow_other');
    expect(buildLowLevelMountOptions()).toContain('default_permissions');
  });

  it('reports each fuse-native operation to an observer, with the errno it answered', async () => {
    const events: string[] = [];
    const fuse = await fuseFor({ operationTimeoutMs: 35_000, observer: { started: (op) => events.push(`start ${op}`), finished: (op, errno) => events.push(`end ${op} ${errno}`) } });
    await signalled((signal) => fuse._op_getattr(signal, '/a.md'));
    await new Promise<number>((resolve) => fuse.ops.unlink!('/a.md', resolve));
    expect(events).toEqual(['start getattr', 'end getattr 0', 'start unlink', `end unlink ${errno.EROFS}`]);
  });

  it('files and directories belong to the user running the daemon, read-only (0400 / 0500), with the core inode numbers', async () => {
    const options = await libfuseOptions();
    // No uid=/gid=/umask= override: stat shows what getattr answers.
    for (const override of ['uid', 'gid', 'umask']) expect(options.has(override), override).toBe(false);
    expect(options.get('use_ino')).toBe(true);
    const fuse = await fuseFor({ operationTimeoutMs: 35_000 });
    const [code, ints] = await signalled((signal) => fuse._op_getattr(signal, '/a.md'));
    expect(code).toBe(0);
    expect(decodeStat(ints)).toEqual({ mode: fsConstants.S_IFREG | 0o400, uid: process.getuid!(), gid: process.getgid!(), sizeBytes: 11, inode: 42 });
    const [, directory] = await signalled((signal) => fuse._op_getattr(signal, '/'));
    expect(decodeStat(directory).mode).toBe(fsConstants.S_IFDIR | 0o500);
  });

  it('is listed as fuse.skills-mount, the type status and unmount look for', async () => {
    const options = await libfuseOptions();
    expect(`fuse.${String(options.get('subtype'))}`).toBe(MOUNT_TYPE);
    expect(options.get('fsname')).toBe('skills-mount');
  });

  it('caches names and attributes for the seconds given (--metadata-ttl), 1 by default, and 0 means no caching', async () => {
    const byDefault = await libfuseOptions();
    expect([byDefault.get('entry_timeout'), byDefault.get('attr_timeout'), byDefault.get('negative_timeout')]).toEqual(['1', '1', '1']);
    const ttl = await libfuseOptions({ entryTimeoutSeconds: 30, attrTimeoutSeconds: 30, negativeTimeoutSeconds: 5 });
    expect([ttl.get('entry_timeout'), ttl.get('attr_timeout'), ttl.get('negative_timeout')]).toEqual(['30', '30', '5']);
    // fuse-native on its own drops a 0 (falsy) and libfuse would cache for its default second.
    const none = await libfuseOptions({ entryTimeoutSeconds: 0, attrTimeoutSeconds: 0, negativeTimeoutSeconds: 0.5 });
    expect([none.get('entry_timeout'), none.get('attr_timeout'), none.get('negative_timeout')]).toEqual(['0', '0', '0.5']);
  });

  it('keeps file pages across opens only while a file is unchanged (auto_cache, checked at every open), never kernel_cache', async () => {
    const byDefault = await libfuseOptions();
    expect(byDefault.get('auto_cache')).toBe(true);
    expect(byDefault.get('ac_attr_timeout')).toBe('0');
    expect(byDefault.has('kernel_cache')).toBe(false);
    const off = await libfuseOptions({ autoCache: false });
    expect(off.has('auto_cache')).toBe(false);
    expect(off.has('kernel_cache')).toBe(false);
  });

  it('is removed when the daemon dies (auto_unmount) unless turned off', async () => {
    expect((await libfuseOptions()).get('auto_unmount')).toBe(true);
    expect((await libfuseOptions({ autoUnmount: false })).has('auto_unmount')).toBe(false);
  });

  it('refuses bad timeouts with a ConfigError naming the option, before the mountpoint is created', async () => {
    expect(() => buildMountOptions({ operationTimeoutMs: 1, attrTimeoutSeconds: -1 })).toThrow(ConfigError);
    expect(() => buildMountOptions({ operationTimeoutMs: 1, entryTimeoutSeconds: Number.NaN })).toThrow(
      'entryTimeoutSeconds must be a number of seconds >= 0, got NaN',
    );
    await withTempDir('skills-mount-options-', async (tmp) => {
      const never = path.join(tmp, 'mnt');
      await expect(mountFilesystem(fakeCore(), never, { operationTimeoutMs: 1, negativeTimeoutSeconds: Infinity })).rejects.toThrow(
        new ConfigError('negativeTimeoutSeconds must be a number of seconds >= 0, got Infinity'),
      );
      await expect(mountFilesystem(fakeCore(), never, { operationTimeoutMs: 0 })).rejects.toThrow(
        new ConfigError('operationTimeoutMs must be a positive number, got 0'),
      );
      await expect(stat(never)).rejects.toMatchObject({ code: 'ENOENT' });
    });
  });
});

describe('fuse-native, patched', () => {
  it('getxattr: an empty buffer asks for the size, a small one gets ERANGE (fuse-native would overrun it), a large one the value', async () => {
    const fuse = await fuseFor({ operationTimeoutMs: 35_000 });
    const value = Buffer.from('sha256:abc');
    const ask = (buffer: Buffer) => signalled((signal) => fuse._op_getxattr(signal, '/a.md', 'user.skills.digest', buffer, 0));
    expect((await ask(Buffer.alloc(0)))[0]).toBe(value.length);
    expect((await ask(Buffer.alloc(3)))[0]).toBe(-errno.ERANGE);
    const large = Buffer.alloc(64);
    expect((await ask(large))[0]).toBe(value.length);
    expect(large.subarray(0, value.length)).toEqual(value);
  });

  it('listxattr: the same sizing for the NUL-terminated names', async () => {
    const fuse = await fuseFor({ operationTimeoutMs: 35_000 });
    const names = Buffer.from('user.skills.digest\0');
    const list = (buffer: Buffer) => signalled((signal) => fuse._op_listxattr(signal, '/a.md', buffer));
    expect((await list(Buffer.alloc(0)))[0]).toBe(names.length);
    expect((await list(Buffer.alloc(4)))[0]).toBe(-errno.ERANGE);
    const large = Buffer.alloc(64);
    expect((await list(large))[0]).toBe(names.length);
    expect(large.subarray(0, names.length)).toEqual(names);
  });

  it('fstat on an open file describes the version the handle serves, not the path (fuse-native would answer getattr)', async () => {
    const core = fakeCore();
    const fuse = await fuseFor({ operationTimeoutMs: 35_000 }, core);
    const [code, ints] = await signalled((signal) => fuse._op_fgetattr(signal, '/a.md', OPEN_HANDLE));
    expect(code).toBe(0);
    expect(decodeStat(ints)).toMatchObject({ sizeBytes: PINNED.sizeBytes, inode: PINNED.inode });
    expect(core.fgetattr).toHaveBeenCalledWith(OPEN_HANDLE);
    expect(core.getattr).not.toHaveBeenCalled();
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
