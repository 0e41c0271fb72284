// The FUSE callbacks against a fake FilesystemCore, without a kernel.

import { constants as fsConstants } from 'node:fs';
import { constants } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { IntegrityError, NotFoundError } from '../../src/errors.js';
import type { FilesystemCore, NodeAttributes } from '../../src/fs/filesystem-core.js';
import { createFuseOperations, encodeXattrNames, encodeXattrValue } from '../../src/fuse/fuse-operations.js';

const { errno } = constants;
const MTIME_MS = 1_700_000_000_123;
const FILE_BYTES = Buffer.from('hello, fuse');

const nodes: Record<string, NodeAttributes> = {
  '/': { kind: 'directory', sizeBytes: 0, mtimeMs: MTIME_MS, inode: 1 },
  '/a.md': { kind: 'file', sizeBytes: 1025, mtimeMs: MTIME_MS, inode: 42 },
};

function fakeCore(overrides: Partial<FilesystemCore> = {}): FilesystemCore {
  return {
    getattr: vi.fn(async (path: string) => {
      const node = nodes[path];
      if (!node) throw new NotFoundError(`no ${path}`);
      return node;
    }),
    readdir: vi.fn(async () => ['a.md']),
    open: vi.fn(async () => 7),
    fgetattr: vi.fn(() => nodes['/a.md']!),
    read: vi.fn((_handle: number, position: number, length: number) => FILE_BYTES.subarray(position, position + length)),
    release: vi.fn(),
    listxattr: vi.fn(async () => ['user.a']),
    getxattr: vi.fn(async () => Buffer.from('value')),
    ...overrides,
  };
}

/** Calls a callback-style operation and resolves with the callback's arguments. */
function call(fn: ((...args: never[]) => void) | undefined, ...args: unknown[]): Promise<unknown[]> {
  if (!fn) throw new Error('operation not implemented');
  return new Promise((resolve) => (fn as (...a: unknown[]) => void)(...args, (...reply: unknown[]) => resolve(reply)));
}

describe('createFuseOperations', () => {
  it('reports files as 0400 and directories as 0500, owned by the given user', async () => {
    const ops = createFuseOperations(fakeCore(), { uid: 1234, gid: 5678 });
    const [code, stat] = await call(ops.getattr, '/a.md');
    expect(code).toBe(0);
    expect(stat).toEqual({
      mode: fsConstants.S_IFREG | 0o400,
      uid: 1234,
      gid: 5678,
      size: 1025,
      nlink: 1,
      ino: 42,
      blksize: 4096,
      blocks: 3,
      atime: MTIME_MS,
      mtime: MTIME_MS,
      ctime: MTIME_MS,
    });
    const [, dir] = await call(ops.getattr, '/');
    expect(dir).toMatchObject({ mode: fsConstants.S_IFDIR | 0o500, nlink: 2, ino: 1 });
  });

  it('defaults the owner to the serving process', async () => {
    const [, stat] = await call(createFuseOperations(fakeCore()).getattr, '/a.md');
    expect(stat).toMatchObject({ uid: process.getuid?.(), gid: process.getgid?.() });
  });

  it('maps domain errors quietly and unknown errors to EIO with one log line', async () => {
    const log = vi.fn();
    const ops = createFuseOperations(
      fakeCore({
        open: async () => {
          throw new RangeError('kaput');
        },
      }),
      { log },
    );
    expect(await call(ops.getattr, '/missing')).toEqual([-errno.ENOENT]);
    expect(log).not.toHaveBeenCalled();
    expect(await call(ops.open, '/a.md', fsConstants.O_RDONLY)).toEqual([-errno.EIO]);
    expect(log).toHaveBeenCalledExactlyOnceWith('open /a.md: unexpected RangeError: kaput');
  });

  it('logs domain errors that reach the user as EIO, with their context', async () => {
    const log = vi.fn();
    const ops = createFuseOperations(
      fakeCore({
        read: () => {
          throw new IntegrityError('size mismatch', { server: 'docs', uri: 'skill://docs/a.md' });
        },
      }),
      { log },
    );
    expect(await call(ops.read, '/a.md', 7, Buffer.alloc(16), 16, 0)).toEqual([-errno.EIO]);
    expect(log).toHaveBeenCalledExactlyOnceWith(
      'read /a.md: IntegrityError: size mismatch (server docs skill://docs/a.md)',
    );
  });

  it('adds the dot entries to directory listings', async () => {
    expect(await call(createFuseOperations(fakeCore()).readdir, '/')).toEqual([0, ['.', '..', 'a.md']]);
  });

  it.each([
    ['O_WRONLY', fsConstants.O_WRONLY],
    ['O_RDWR', fsConstants.O_RDWR],
    ['O_RDONLY|O_TRUNC', fsConstants.O_RDONLY | fsConstants.O_TRUNC],
    ['O_WRONLY|O_CREAT|O_APPEND', fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_APPEND],
  ])('refuses open with %s as EROFS without asking the core', async (_name, flags) => {
    const core = fakeCore();
    expect(await call(createFuseOperations(core).open, '/a.md', flags)).toEqual([-errno.EROFS]);
    expect(core.open).not.toHaveBeenCalled();
  });

  it('opens read-only, reads into the kernel buffer and releases the handle', async () => {
    const core = fakeCore();
    const ops = createFuseOperations(core);
    expect(await call(ops.open, '/a.md', fsConstants.O_RDONLY | fsConstants.O_NONBLOCK)).toEqual([0, 7]);
    const buffer = Buffer.alloc(8);
    expect(await call(ops.read, '/a.md', 7, buffer, 8, 0)).toEqual([8]);
    expect(buffer.toString()).toBe('hello, f');
    const tail = Buffer.alloc(8);
    expect(await call(ops.read, '/a.md', 7, tail, 8, 8)).toEqual([3]);
    expect(tail.subarray(0, 3).toString()).toBe('use');
    expect(await call(ops.release, '/a.md', 7)).toEqual([0]);
    expect(core.release).toHaveBeenCalledWith(7);
  });

  it('answers access: writes EROFS, execute on files EACCES, otherwise existence', async () => {
    const ops = createFuseOperations(fakeCore());
    const { R_OK, W_OK, X_OK, F_OK } = fsConstants;
    expect(await call(ops.access, '/a.md', W_OK)).toEqual([-errno.EROFS]);
    expect(await call(ops.access, '/a.md', R_OK | X_OK)).toEqual([-errno.EACCES]);
    expect(await call(ops.access, '/', X_OK)).toEqual([0]);
    expect(await call(ops.access, '/a.md', R_OK)).toEqual([0]);
    expect(await call(ops.access, '/missing', F_OK)).toEqual([-errno.ENOENT]);
  });

  it('reports a read-only statfs', async () => {
    const [code, statfs] = await call(createFuseOperations(fakeCore()).statfs, '/');
    expect(code).toBe(0);
    expect(statfs).toMatchObject({ bsize: 4096, bavail: 0, namemax: 255, flag: 1 | 2 });
  });

  it('passes extended attributes through', async () => {
    const ops = createFuseOperations(fakeCore());
    expect(await call(ops.listxattr, '/a.md')).toEqual([0, ['user.a']]);
    expect(await call(ops.getxattr, '/a.md', 'user.a', 0)).toEqual([0, Buffer.from('value')]);
  });

  it('answers EROFS to every write operation', async () => {
    const ops = createFuseOperations(fakeCore());
    const writes: [keyof typeof ops, unknown[]][] = [
      ['write', ['/a.md', 7, Buffer.from('x'), 1, 0]],
      ['create', ['/b', 0o644]],
      ['truncate', ['/a.md', 0]],
      ['ftruncate', ['/a.md', 7, 0]],
      ['unlink', ['/a.md']],
      ['mkdir', ['/d', 0o755]],
      ['rmdir', ['/']],
      ['rename', ['/a.md', '/b']],
      ['link', ['/a.md', '/b']],
      ['symlink', ['/a.md', '/b']],
      ['chmod', ['/a.md', 0o644]],
      ['chown', ['/a.md', 0, 0]],
      ['utimens', ['/a.md', 0, 0]],
      ['setxattr', ['/a.md', 'user.a', Buffer.from('v'), 0, 0]],
      ['removexattr', ['/a.md', 'user.a']],
      ['mknod', ['/f', 0o10644, 0]],
    ];
    for (const [name, args] of writes) {
      expect([name, await call(ops[name] as (...a: never[]) => void, ...args)]).toEqual([name, [-errno.EROFS]]);
    }
  });
});

describe('xattr reply encoding', () => {
  it('answers a size probe (zero-length buffer) with the value size', () => {
    expect(encodeXattrValue(Buffer.from('12345'), Buffer.alloc(0))).toBe(5);
  });

  it('answers ERANGE when the buffer is too small, without writing', () => {
    const target = Buffer.alloc(4);
    expect(encodeXattrValue(Buffer.from('12345'), target)).toBe(-errno.ERANGE);
    expect(target.equals(Buffer.alloc(4))).toBe(true);
  });

  it('copies the value and returns its length', () => {
    const target = Buffer.alloc(8);
    expect(encodeXattrValue(Buffer.from('12345'), target)).toBe(5);
    expect(target.subarray(0, 5).toString()).toBe('12345');
  });

  it('encodes names NUL-terminated with exact sizes', () => {
    expect(encodeXattrNames(['user.a', 'user.bé'], Buffer.alloc(0))).toBe(16);
    const target = Buffer.alloc(16);
    expect(encodeXattrNames(['user.a', 'user.bé'], target)).toBe(16);
    expect(target.toString()).toBe('user.a\0user.bé\0');
    expect(encodeXattrNames(['user.a'], Buffer.alloc(3))).toBe(-errno.ERANGE);
    expect(encodeXattrNames([], Buffer.alloc(0))).toBe(0);
  });
});
