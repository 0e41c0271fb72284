// Reads a file only if, at the moment of reading, it is a regular file inside the root.
// Every byte the server sends goes through here; callers pass paths from the scanned tree only.
import type { BigIntStats } from 'node:fs';
import { sep } from 'node:path';
import { NotFoundError } from '../errors.js';
import { openWithinRoot } from './confined-open.js';
import { closeFd, readFd } from './fs-calls.js';

/** True when `path` (already real) is `root` or lies below it. */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** Identity of one version of a file: a change of content changes at least one part. */
export function versionKey(path: string, stat: BigIntStats): string {
  return `${path}\0${stat.size}\0${stat.mtimeNs}\0${stat.ino}\0${stat.dev}`;
}

/** `path` (below `realRoot`) relative to it, or NotFoundError. */
export function relativeWithin(path: string, realRoot: string): string {
  if (path === realRoot || !isWithin(path, realRoot)) throw new NotFoundError(`${path} is not below the served directory`);
  return path.slice(realRoot.endsWith(sep) ? realRoot.length : realRoot.length + 1);
}

/**
 * Exact bytes of a regular file within `realRoot`, with the stat of the opened file and where
 * it is. Opened by openWithinRoot: no link at any component, whenever swapped in, leads out.
 */
export async function readWithinRoot(path: string, realRoot: string): Promise<{ bytes: Buffer; stat: BigIntStats; realPath: string }> {
  const rel = relativeWithin(path, realRoot);
  const opened = await openWithinRoot(realRoot, rel);
  try {
    return { bytes: await readFd(opened.fd, Number(opened.stat.size)), stat: opened.stat, realPath: opened.realPath };
  } catch (error) {
    throw new NotFoundError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { cause: error });
  } finally {
    closeFd(opened.fd);
  }
}
