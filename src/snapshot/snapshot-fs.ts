// The file operations a snapshot is built and published with, as one injectable set: the
// default is node:fs, tests pass a set whose writes fail (a full disk) at a chosen byte.
// Knows nothing of skills, catalogs or snapshots.
import { constants, type Dirent, type Stats } from 'node:fs';
import { chmod, link, lstat, mkdir, open, readdir, readlink, rename, rm, rmdir, symlink, unlink } from 'node:fs/promises';
import { errorCode } from '../private-files.js';

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

const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
// O_NONBLOCK: a FIFO put where a file was must not hang open().
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** node:fs, as a snapshot needs it. */
export const nodeSnapshotFs: SnapshotFs = {
  mkdir: async (path, mode) => {
    await mkdir(path, { mode });
    await chmod(path, mode); // whatever the umask
  },
  writeFile: async (path, bytes, mode) => {
    const handle = await open(path, CREATE_FLAGS, 0o600);
    try {
      await handle.writeFile(bytes);
      await handle.chmod(mode);
    } finally {
      await handle.close();
    }
  },
  link: (existing, newPath) => link(existing, newPath),
  readFile: async (path) => {
    const handle = await open(path, READ_FLAGS);
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: 'EINVAL' });
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  },
  symlink: (target, path) => symlink(target, path),
  readlink: (path) => readlink(path),
  rename: (from, to) => rename(from, to),
  chmod: (path, mode) => chmod(path, mode),
  lstat: async (path) => {
    try {
      return await lstat(path);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw error;
    }
  },
  readdir: (path) => readdir(path, { withFileTypes: true }),
  unlink: (path) => unlink(path),
  rmdir: (path) => rmdir(path),
  removeTree: (path) => removeTree(path),
};

/** A set with some calls replaced (a test's failing writeFile), the rest from node:fs. */
export function snapshotFsWith(overrides: Partial<SnapshotFs> = {}): SnapshotFs {
  return { ...nodeSnapshotFs, ...overrides };
}

/** rm -rf for a snapshot: its directories are 0555, so each is made writable before it is emptied. */
async function removeTree(path: string): Promise<void> {
  let stats: Stats;
  try {
    stats = await lstat(path);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if (!stats.isDirectory()) {
    await unlink(path).catch((error: unknown) => {
      if (errorCode(error) !== 'ENOENT') throw error;
    });
    return;
  }
  await chmod(path, 0o700);
  for (const entry of await readdir(path, { withFileTypes: true })) await removeTree(`${path}/${entry.name}`);
  await rm(path, { recursive: true, force: true });
}
