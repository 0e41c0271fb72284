// Promise wrappers over node:fs callback calls. The server makes ~100k of these on a
// large tree, and FileHandle-based fs/promises costs about 3x more per file there.
import * as fs from 'node:fs';
import type { BigIntStats, Dirent } from 'node:fs';

const settle =
  <T>(resolve: (value: T) => void, reject: (error: unknown) => void) =>
  (error: NodeJS.ErrnoException | null, value: T): void =>
    error ? reject(error) : resolve(value);

export const lstatBig = (path: string): Promise<BigIntStats> =>
  new Promise((resolve, reject) => fs.lstat(path, { bigint: true }, settle(resolve, reject)));

export const statBig = (path: string): Promise<BigIntStats> =>
  new Promise((resolve, reject) => fs.stat(path, { bigint: true }, settle(resolve, reject)));

export const realpathNative = (path: string): Promise<string> =>
  new Promise((resolve, reject) => fs.realpath.native(path, settle(resolve, reject)));

export const readdirEntries = (path: string): Promise<Dirent[]> =>
  new Promise((resolve, reject) => fs.readdir(path, { withFileTypes: true }, settle(resolve, reject)));

export const openFd = (path: string, flags: number): Promise<number> =>
  new Promise((resolve, reject) => fs.open(path, flags, settle(resolve, reject)));


export const readlinkText = (path: string): Promise<string> =>
  new Promise((resolve, reject) => fs.readlink(path, settle(resolve, reject)));

// Calls on a descriptor already open, and readlink of /proc/self/fd/N, never wait on a disk:
// a thread-pool round trip costs more than the call itself, so these are synchronous.

/** Closes `fd`, ignoring errors (it was open for reading only). */
export function closeFd(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // EBADF cannot happen for a descriptor we own; EIO on close of a read-only fd means nothing.
  }
}

export const fstatBig = (fd: number): BigIntStats => fs.fstatSync(fd, { bigint: true });

/** Where the kernel says open descriptor `fd` is (Linux /proc). */
export const descriptorPath = (fd: number): string => fs.readlinkSync(`/proc/self/fd/${fd}`);

/** Reads an open regular file to its end; `expected` is its size at fstat. */
export const readFd = (fd: number, expected: number): Promise<Buffer> =>
  new Promise((resolve, reject) => readAll(fd, expected, (error, bytes) => (error ? reject(error) : resolve(bytes!))));

// Reads to EOF: a file that grew since fstat is read whole, one that shrank is not padded.
// The first buffer is one byte larger than expected, so the usual case is a single short read
// (a short read on a regular file means end of file).
function readAll(fd: number, expected: number, done: (error: unknown, bytes?: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let position = 0;
  let size = expected + 1;
  const step = (): void => {
    const buffer = Buffer.allocUnsafe(size);
    fs.read(fd, buffer, 0, buffer.length, position, (error, bytesRead) => {
      if (error) return done(error);
      if (bytesRead > 0) chunks.push(buffer.subarray(0, bytesRead));
      position += bytesRead;
      if (bytesRead < buffer.length) return done(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      size = 65536;
      step();
    });
  };
  step();
}
