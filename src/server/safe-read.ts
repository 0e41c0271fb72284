// Reads a file only if, at the moment of reading, it is a regular file inside the root.
// Every byte the server sends goes through here; callers pass paths from the scanned tree only.
import { constants, type BigIntStats } from 'node:fs';
import { sep } from 'node:path';
import { NotFoundError } from '../errors.js';
import { readOpened, realpathNative } from './fs-calls.js';

/** True when `path` (already real) is `root` or lies below it. */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** Identity of one version of a file: a change of content changes at least one part. */
export function versionKey(path: string, stat: BigIntStats): string {
  return `${path}\0${stat.size}\0${stat.mtimeNs}\0${stat.ino}\0${stat.dev}`;
}

/** Exact bytes of a regular file within `realRoot`, with the stat of the opened file. */
export async function readWithinRoot(path: string, realRoot: string): Promise<{ bytes: Buffer; stat: BigIntStats; realPath: string }> {
  let real: string;
  try {
    real = await realpathNative(path);
  } catch (error) {
    throw new NotFoundError(`cannot resolve ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { cause: error });
  }
  // Re-checked at read time: a symlink or directory swapped in after the scan must not leak.
  if (!isWithin(real, realRoot)) throw new NotFoundError(`${path} resolves outside the served directory`);
  try {
    // O_NOFOLLOW: the resolved path's last component must not have become a link since realpath.
    // O_NONBLOCK: a FIFO swapped in must not hang the server.
    const { bytes, stat } = await readOpened(real, constants.O_NOFOLLOW | constants.O_NONBLOCK, (stat) => {
      if (!stat.isFile()) throw new NotFoundError(`${path} is not a regular file`);
    });
    return { bytes, stat, realPath: real };
  } catch (error) {
    if (error instanceof NotFoundError) throw error;
    throw new NotFoundError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { cause: error });
  }
}
