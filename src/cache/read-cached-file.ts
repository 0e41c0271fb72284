// Reading one cached file back and verifying it before a byte is used (SEP-2640, "Cache
// integrity": the digest is computed again on every access): a regular file, of the expected
// size, whose bytes hash to the digest. Knows paths and digests, not the index or the layout.
import { closeSync, constants, fstatSync, futimesSync, openSync, readSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { sha256Digest } from '../format/digest.js';
import { errorCode, errorMessage, kindOf } from '../private-files.js';
import { withShownPaths } from './anchored-directory.js';

/** O_NOFOLLOW: a link is never followed; O_NONBLOCK: a FIFO must not hang open(). */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/**
 * Files up to this size are read back with synchronous calls: a few microseconds each from the
 * page cache, where four thread-pool round trips (open, fstat, read, the end-of-file read) cost
 * a read after a restart more than the rest of its way through the mount. Larger files keep the
 * thread pool, so one big cold read never holds up the event loop.
 */
const SYNC_READ_MAX_BYTES = 256 * 1024;

/** What reading back one cached file found: its verified bytes, nothing there, or why it must be discarded. */
export type CachedRead = { bytes: Buffer } | { missing: true } | { problem: string };

/**
 * The file at `absolute` read back and checked: a regular file of `expectedBytes` (when known),
 * no larger than `limitBytes`, hashing to `digest`. Small files of known size are read synchronously.
 * Recency survives a restart through the mtime (set after the bytes are read; content is untouched).
 */
export function readCachedFile(absolute: string, digest: string, expectedBytes: number | undefined, limitBytes: number): CachedRead | Promise<CachedRead> {
  if (expectedBytes !== undefined && expectedBytes <= SYNC_READ_MAX_BYTES) return verified(readSmallFile(absolute, expectedBytes, limitBytes), digest);
  return readOnThreadPool(absolute, expectedBytes, limitBytes).then((read) => verified(read, digest));
}

function verified(read: CachedRead, digest: string): CachedRead {
  if ('bytes' in read && sha256Digest(read.bytes) !== digest) return { problem: 'content does not match its digest' };
  return read;
}

/** Why a cached file's descriptor cannot be trusted before reading it, if it cannot. */
function cachedFileProblem(stats: Stats, expected: number | undefined, limitBytes: number): string | undefined {
  if (!stats.isFile()) return `${kindOf(stats)}, not a regular file`;
  if (expected !== undefined && stats.size !== expected) return `${stats.size} bytes where ${expected} are expected (truncated or replaced)`;
  // Never read a file into memory that the cache could not have stored.
  if (stats.size > limitBytes) return `${stats.size} bytes, more than the cache limit`;
  return undefined;
}

/** Why opening a file of the cache failed, or that it is simply not there. */
export function openFailure(error: unknown): { missing: true } | { problem: string } {
  const code = errorCode(error);
  if (code === 'ENOENT' || code === 'ENOTDIR') return { missing: true };
  // O_NOFOLLOW refuses a symlink with ELOOP (EMLINK on FreeBSD).
  return { problem: code === 'ELOOP' || code === 'EMLINK' ? 'a symbolic link, not a regular file' : `cannot be opened (${withShownPaths(errorMessage(error))})` };
}

/** The read on the thread pool; the mtime is set and the file closed after the bytes are returned. */
async function readOnThreadPool(absolute: string, expected: number | undefined, limitBytes: number): Promise<CachedRead> {
  let handle: FileHandle;
  try {
    handle = await open(absolute, READ_FLAGS);
  } catch (error) {
    return openFailure(error);
  }
  let closeLater = false;
  try {
    const stats = await handle.stat();
    const problem = cachedFileProblem(stats, expected, limitBytes);
    if (problem !== undefined) return { problem };
    const bytes = await readExactly(handle, stats.size);
    if (bytes === undefined) return { problem: 'changed size while being read' };
    closeLater = true;
    const now = new Date();
    void handle
      .utimes(now, now)
      .catch(() => {})
      .finally(() => handle.close().catch(() => {}));
    return { bytes };
  } finally {
    if (!closeLater) await handle.close().catch(() => {});
  }
}

/** The same read with synchronous calls, for small files (SYNC_READ_MAX_BYTES). */
function readSmallFile(absolute: string, expected: number, limitBytes: number): CachedRead {
  let fd: number;
  try {
    fd = openSync(absolute, READ_FLAGS);
  } catch (error) {
    return openFailure(error);
  }
  try {
    const stats = fstatSync(fd);
    const problem = cachedFileProblem(stats, expected, limitBytes);
    if (problem !== undefined) return { problem };
    const bytes = Buffer.allocUnsafe(stats.size);
    let offset = 0;
    while (offset < stats.size) {
      const bytesRead = readSync(fd, bytes, offset, stats.size - offset, offset);
      if (bytesRead === 0) return { problem: 'changed size while being read' };
      offset += bytesRead;
    }
    if (readSync(fd, Buffer.alloc(1), 0, 1, stats.size) !== 0) return { problem: 'changed size while being read' };
    const now = new Date();
    try {
      futimesSync(fd, now, now);
    } catch {
      // Recency is a hint: a file whose mtime cannot be set is still served.
    }
    return { bytes };
  } finally {
    closeSync(fd);
  }
}

/** Exactly `sizeBytes` from the start of the file, and then its end; undefined when it has another size now. */
export async function readExactly(handle: FileHandle, sizeBytes: number): Promise<Buffer | undefined> {
  const buffer = Buffer.alloc(sizeBytes);
  let offset = 0;
  while (offset < sizeBytes) {
    const { bytesRead } = await handle.read(buffer, offset, sizeBytes - offset, offset);
    if (bytesRead === 0) return undefined;
    offset += bytesRead;
  }
  const { bytesRead } = await handle.read(Buffer.alloc(1), 0, 1, sizeBytes);
  return bytesRead === 0 ? buffer : undefined;
}
