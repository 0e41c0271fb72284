// The file operations a snapshot is built and published with, as one injectable set: the
// default is node:fs, tests pass a set whose writes fail (a full disk) at a chosen byte.
// Knows nothing of skills, catalogs or snapshots.
import { chmodSync, closeSync, constants, fchmodSync, fstatSync, linkSync, mkdirSync, openSync, readFileSync, statSync, writeSync, type Dirent, type Stats } from 'node:fs';
import { readdir, readlink, rename, rmdir, symlink, unlink } from 'node:fs/promises';
import { IntegrityError } from '../errors.js';
import { CREATE_FLAGS, lstatOrUndefined } from '../private-files.js';
import { removeReadOnlyTree } from '../read-only-tree.js';

/** Every call a snapshot store makes on the disk. */
export interface SnapshotFs {
  /** Creates one directory (its parent exists); fails when the name exists. */
  mkdir(path: string, mode: number): Promise<void>;
  /** Creates a new regular file (never through a link, never over an existing name) holding `bytes`. */
  writeFile(path: string, bytes: Uint8Array, mode: number): Promise<void>;
  /** A hard link: `newPath` names the inode of `existing`. */
  link(existing: string, newPath: string): Promise<void>;
  /** The bytes of a regular file, never through a link; fails for anything else. */
  readFile(path: string): Promise<Buffer>;
  symlink(target: string, path: string): Promise<void>;
  readlink(path: string): Promise<string>;
  rename(from: string, to: string): Promise<void>;
  chmod(path: string, mode: number): Promise<void>;
  lstat(path: string): Promise<Stats | undefined>;
  readdir(path: string): Promise<Dirent[]>;
  unlink(path: string): Promise<void>;
  rmdir(path: string): Promise<void>;
  /** Removes a tree that may hold read-only directories (made writable first); nothing when gone. */
  removeTree(path: string): Promise<void>;
}

// O_NONBLOCK: a FIFO put where a file was must not hang open().
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

// Creating, writing, linking and chmod run synchronously: a snapshot writes tens of thousands of
// small files and makes as many directories read-only, and four libuv threads shared by every one
// of them cost more than the calls do. No mount is involved, so a blocking call cannot wait on
// this process itself.
/** Per mode asked for: whether a new file or directory gets it as it is (the umask takes no bit of it), learnt from the first one. */
const modeHolds = new Map<number, boolean>();

/** node:fs, as a snapshot needs it. */
export const nodeSnapshotFs: SnapshotFs = {
  mkdir: async (path, mode) => {
    mkdirSync(path, { mode });
    if (modeHolds.get(mode) !== true) {
      if (!modeHolds.has(mode)) modeHolds.set(mode, (statSync(path).mode & 0o7777) === mode);
      chmodSync(path, mode); // whatever the umask took away
    }
  },
  writeFile: async (path, bytes, mode) => {
    const fd = openSync(path, CREATE_FLAGS, mode);
    try {
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
      if (modeHolds.get(mode) !== true) {
        if (!modeHolds.has(mode)) modeHolds.set(mode, (fstatSync(fd).mode & 0o7777) === mode);
        fchmodSync(fd, mode);
      }
    } finally {
      closeSync(fd);
    }
  },
  link: async (existing, newPath) => linkSync(existing, newPath),
  readFile: async (path) => {
    const fd = openSync(path, READ_FLAGS);
    try {
      if (!fstatSync(fd).isFile()) throw new IntegrityError(`${path} is not a regular file`);
      return readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  },
  symlink: (target, path) => symlink(target, path),
  readlink: (path) => readlink(path),
  rename: (from, to) => rename(from, to),
  chmod: async (path, mode) => chmodSync(path, mode),
  lstat: (path) => lstatOrUndefined(path),
  readdir: (path) => readdir(path, { withFileTypes: true }),
  unlink: (path) => unlink(path),
  rmdir: (path) => rmdir(path),
  removeTree: (path) => removeReadOnlyTree(path),
};

/** A set with some calls replaced (a test's failing writeFile), the rest from node:fs. */
export function snapshotFsWith(overrides: Partial<SnapshotFs> = {}): SnapshotFs {
  return { ...nodeSnapshotFs, ...overrides };
}
