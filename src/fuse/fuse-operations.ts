// The FUSE callbacks: each calls one FilesystemCore method and turns its result or domain
// error into a fuse-native reply. Policy for modes, ownership and read-only lives here;
// paths, caching and verification belong to the core. Never touches the mountpoint.

import { constants as fsConstants } from 'node:fs';
import type Fuse from 'fuse-native';
import type { FilesystemCore, NodeAttributes } from '../fs/filesystem-core.js';
import { Errno, errnoForDomainError } from './errno.js';
import type { Log } from '../log.js';
import type { OperationObserver } from './operation-observer.js';

/** Receives one complete log line (no trailing newline). */

export interface FuseOperationsOptions {
  /** Where unexpected errors are reported; defaults to stderr. */
  log?: Log;
  /** Owner reported for every node; defaults to the serving process's uid/gid. */
  uid?: number;
  gid?: number;
  /** Told of every operation's start and end (metrics). */
  observer?: OperationObserver;
}

// Read-only for the owner only; `default_permissions` makes the kernel enforce them.
const FILE_MODE = fsConstants.S_IFREG | 0o400;
const DIRECTORY_MODE = fsConstants.S_IFDIR | 0o500;
const BLOCK_SIZE_BYTES = 4096;
const STAT_BLOCK_BYTES = 512;
const ACCESS_MODE_MASK = fsConstants.O_WRONLY | fsConstants.O_RDWR; // O_ACCMODE
const NAME_MAX_BYTES = 255;
const ST_RDONLY = 1;
const USER_XATTR_PREFIX = 'user.';
const ST_NOSUID = 2;

/** Builds the fuse-native operations object that serves `core` read-only. */
export function createFuseOperations(core: FilesystemCore, options: FuseOperationsOptions = {}): Fuse.Operations {
  const log = options.log ?? ((line: string) => process.stderr.write(`skills-mount: ${line}\n`));
  const uid = options.uid ?? process.getuid?.() ?? 0;
  const gid = options.gid ?? process.getgid?.() ?? 0;

  /** Maps a thrown value to a negative errno, logging what a user would need explained. */
  const fail = (op: string, path: string, error: unknown): number => {
    const mapped = errnoForDomainError(error);
    if (mapped === undefined) {
      log(`${op} ${path}: unexpected ${describeError(error)}`);
      return Errno.EIO;
    }
    // Domain failures that surface as EIO are otherwise unexplained to the user.
    if (mapped === Errno.EIO) log(`${op} ${path}: ${describeError(error)}`);
    return mapped;
  };

  const toStat = (attrs: NodeAttributes): Fuse.Stat => {
    const isDirectory = attrs.kind === 'directory';
    return {
      mode: isDirectory ? DIRECTORY_MODE : FILE_MODE,
      uid,
      gid,
      size: attrs.sizeBytes,
      nlink: isDirectory ? 2 : 1,
      ino: attrs.inode,
      blksize: BLOCK_SIZE_BYTES,
      blocks: Math.ceil(attrs.sizeBytes / STAT_BLOCK_BYTES),
      atime: attrs.mtimeMs,
      mtime: attrs.mtimeMs,
      ctime: attrs.mtimeMs,
    };
  };

  const getattr = (op: string, path: string, cb: Fuse.Reply<[Fuse.Stat?]>): void => {
    core.getattr(path).then(
      (attrs) => cb(Errno.OK, toStat(attrs)),
      (error: unknown) => cb(fail(op, path, error)),
    );
  };

  const readOnly = (cb: Fuse.Reply): void => cb(Errno.EROFS);

  const operations: Fuse.Operations = {
    getattr: (path, cb) => getattr('getattr', path, cb),
    // An open handle reports the version it pins, so libfuse's auto_cache check at open
    // compares the bytes being served, not a newer version the kernel has not seen yet.
    fgetattr(path, fd, cb) {
      try {
        cb(Errno.OK, toStat(core.fgetattr(fd)));
      } catch (error) {
        cb(fail('fgetattr', path, error));
      }
    },

    readdir(path, cb) {
      core.readdir(path).then(
        // libfuse's high-level API does not add the dot entries; POSIX readdir has them.
        (names) => cb(Errno.OK, ['.', '..', ...names]),
        (error: unknown) => cb(fail('readdir', path, error)),
      );
    },

    open(path, flags, cb) {
      if ((flags & ACCESS_MODE_MASK) !== fsConstants.O_RDONLY || (flags & fsConstants.O_TRUNC) !== 0) {
        cb(Errno.EROFS);
        return;
      }
      core.open(path).then(
        (handle) => cb(Errno.OK, handle),
        (error: unknown) => cb(fail('open', path, error)),
      );
    },

    read(path, fd, buffer, length, position, cb) {
      try {
        const bytes = core.read(fd, position, length);
        cb(bytes.copy(buffer, 0, 0, Math.min(length, buffer.length, bytes.length)));
      } catch (error) {
        cb(fail('read', path, error));
      }
    },

    release(path, fd, cb) {
      try {
        core.release(fd);
        cb(Errno.OK);
      } catch (error) {
        cb(fail('release', path, error));
      }
    },

    access(path, mode, cb) {
      if ((mode & fsConstants.W_OK) !== 0) {
        cb(Errno.EROFS);
        return;
      }
      core.getattr(path).then(
        (attrs) => cb((mode & fsConstants.X_OK) !== 0 && attrs.kind === 'file' ? Errno.EACCES : Errno.OK),
        (error: unknown) => cb(fail('access', path, error)),
      );
    },

    statfs(_path, cb) {
      // Content lives on MCP servers: no local capacity to report, nothing free to write.
      cb(Errno.OK, {
        bsize: BLOCK_SIZE_BYTES,
        frsize: BLOCK_SIZE_BYTES,
        blocks: 0,
        bfree: 0,
        bavail: 0,
        files: 0,
        ffree: 0,
        favail: 0,
        fsid: 0,
        flag: ST_RDONLY | ST_NOSUID,
        namemax: NAME_MAX_BYTES,
      });
    },

    // Buffer sizing (size probes, ERANGE) is done where the kernel buffer is visible:
    // see encodeXattrValue/encodeXattrNames and their use in fuse-native-patches.ts.
    getxattr(path, name, _position, cb) {
      // Only user.* attributes exist here. ENOTSUP for the rest (security.selinux,
      // system.posix_acl_*) tells ls to stop asking for every entry; ENODATA would not.
      if (!name.startsWith(USER_XATTR_PREFIX)) {
        cb(Errno.ENOTSUP);
        return;
      }
      core.getxattr(path, name).then(
        (value) => cb(Errno.OK, value),
        (error: unknown) => cb(fail('getxattr', path, error)),
      );
    },

    listxattr(path, cb) {
      core.listxattr(path).then(
        (names) => cb(Errno.OK, names),
        (error: unknown) => cb(fail('listxattr', path, error)),
      );
    },

    // Every write answers EROFS (the `ro` mount option stops most of them in the kernel).
    write: (_path, _fd, _buffer, _length, _position, cb) => readOnly(cb),
    create: (_path, _mode, cb) => readOnly(cb),
    truncate: (_path, _size, cb) => readOnly(cb),
    ftruncate: (_path, _fd, _size, cb) => readOnly(cb),
    unlink: (_path, cb) => readOnly(cb),
    mkdir: (_path, _mode, cb) => readOnly(cb),
    rmdir: (_path, cb) => readOnly(cb),
    rename: (_src, _dest, cb) => readOnly(cb),
    link: (_src, _dest, cb) => readOnly(cb),
    symlink: (_src, _dest, cb) => readOnly(cb),
    chmod: (_path, _mode, cb) => readOnly(cb),
    chown: (_path, _uid, _gid, cb) => readOnly(cb),
    utimens: (_path, _atime, _mtime, cb) => readOnly(cb),
    setxattr: (_path, _name, _value, _position, _flags, cb) => readOnly(cb),
    removexattr: (_path, _name, cb) => readOnly(cb),
    mknod: (_path, _mode, _dev, cb) => readOnly(cb),
  };
  return options.observer ? observed(operations, options.observer) : operations;
}

/** Each operation reports its start, and its end with the errno of its answer, to `observer`. */
function observed(operations: Fuse.Operations, observer: OperationObserver): Fuse.Operations {
  const wrapped: Record<string, unknown> = {};
  for (const [op, handler] of Object.entries(operations) as Array<[string, (...args: unknown[]) => void]>) {
    wrapped[op] = (...args: unknown[]) => {
      const reply = args[args.length - 1] as (code: number, ...rest: unknown[]) => void;
      const startedAt = performance.now();
      observer.started(op);
      args[args.length - 1] = (code: number, ...rest: unknown[]) => {
        // read answers a byte count; every other operation 0 or a negative errno.
        observer.finished(op, code < 0 ? -code : 0, (performance.now() - startedAt) / 1000);
        reply(code, ...rest);
      };
      try {
        handler(...args);
      } catch (error) {
        observer.finished(op, -Errno.EIO, (performance.now() - startedAt) / 1000);
        throw error;
      }
    };
  }
  return wrapped as Fuse.Operations;
}

/**
 * getxattr(2) reply for a kernel buffer: a zero-length buffer is a size probe (answer the
 * size), a too-small one gets ERANGE, otherwise the value is copied and its length returned.
 */
export function encodeXattrValue(value: Buffer, target: Buffer): number {
  if (target.length === 0) return value.length;
  if (value.length > target.length) return Errno.ERANGE;
  return value.copy(target);
}

/** listxattr(2) reply: NUL-terminated names, with the same probe and ERANGE rules. */
export function encodeXattrNames(names: readonly string[], target: Buffer): number {
  const encoded = Buffer.concat(names.map((name) => Buffer.from(`${name}\0`, 'utf8')));
  return encodeXattrValue(encoded, target);
}

/** An error for a log line: its class, message, and server and URI where the message lacks them. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const context = error as Error & { server?: string; uri?: string };
  // Domain errors usually name their server and URI already; add them only when missing.
  const missing = [context.server && !error.message.includes(context.server) && `server ${context.server}`, context.uri && !error.message.includes(context.uri) && context.uri];
  const where = missing.filter(Boolean).join(' ');
  return `${error.name}: ${error.message}${where ? ` (${where})` : ''}`;
}
