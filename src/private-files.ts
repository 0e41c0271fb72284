// Files only this user may write, written so a crash never leaves half of one: what the disk
// cache and the approvals store both need. Knows nothing of what the files hold.
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, open, rename, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { PRIVATE_FILE_MODE } from './file-modes.js';

/** A new file that must not exist yet and must not be reached through a link. */
export const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Writes `name` in `dir` atomically: a temp file (`<tempPrefix><pid>-<random>`, O_EXCL,
 * O_NOFOLLOW, 0600) in the same directory, written, fsynced, renamed into place, then the
 * directory fsynced. `durable: false` skips both fsyncs: readers see the old file or the whole
 * new one, but a crash may leave the new name on a torn or empty file, so only data that is
 * checked on every read (the disk cache hashes each file it reads back) may use it.
 */
export async function writeAtomically(dir: string, name: string, data: string | Uint8Array, tempPrefix: string, options: { durable?: boolean; mode?: number } = {}): Promise<void> {
  const durable = options.durable ?? true;
  const mode = options.mode ?? PRIVATE_FILE_MODE;
  const temp = path.join(dir, `${tempPrefix}${process.pid}-${randomBytes(6).toString('hex')}`);
  const handle = await open(temp, CREATE_FLAGS, mode);
  try {
    try {
      await handle.chmod(mode); // whatever the umask
      await handle.writeFile(data);
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path.join(dir, name));
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
  if (durable) await syncDirectory(dir);
}

/** Makes a rename durable; platforms that cannot fsync a directory just skip it. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, constants.O_RDONLY | (constants.O_DIRECTORY ?? 0));
    await handle.sync();
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EBADF') throw error;
  } finally {
    await handle?.close().catch(() => {});
  }
}

export async function lstatOrUndefined(file: string): Promise<Stats | undefined> {
  try {
    return await lstat(file);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** "a symbolic link", "a directory", ...: for messages about what stands where a file should. */
export function kindOf(entry: { isSymbolicLink(): boolean; isDirectory(): boolean; isFile(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (entry.isSymbolicLink()) return 'a symbolic link';
  if (entry.isDirectory()) return 'a directory';
  if (entry.isFile()) return 'a regular file';
  if (entry.isFIFO()) return 'a FIFO';
  if (entry.isSocket()) return 'a socket';
  return 'a device';
}

/** Whether a process runs (a lock's holder); EPERM: it exists but belongs to someone else. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM';
  }
}

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
