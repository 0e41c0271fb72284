// A directory anchored by an open file descriptor, so that what lies below it is reached from the
// directory that was checked, never by re-resolving a path that may since name another place
// (issue 22, item 10). Node has no openat(2): on Linux `/proc/self/fd/<fd>/<relative>` starts
// the walk at the anchored directory wherever it now is. Knows nothing of the cache.
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readlink, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { PRIVATE_DIRECTORY_MODE } from '../file-modes.js';
import { errorCode, lstatOrUndefined } from '../private-files.js';

const DIRECTORY_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0) | constants.O_NOFOLLOW;

/** An open directory: `at(relative)` names a path below it for any fs call. */
export class AnchoredDirectory {
  private constructor(
    /** The path it was opened by, for messages and for stillNamed(); not used to reach anything. */
    readonly shownPath: string,
    private readonly handle: FileHandle,
    /** fstat of the anchored directory when it was opened. */
    readonly stats: Stats,
    /** `/proc/self/fd/<fd>`, or `shownPath` where /proc does not reach the fd (then stillNamed() is the only guard). */
    private readonly base: string,
  ) {}

  /**
   * Opens `dir` as it is now: O_NOFOLLOW, so a symbolic link in its place fails with ELOOP, and
   * O_DIRECTORY, so anything but a directory fails with ENOTDIR. `through` reaches it (a path
   * under another anchored directory); `dir` is how it is named.
   */
  static async open(dir: string, through: string = dir, knownProc?: boolean): Promise<AnchoredDirectory> {
    let handle: FileHandle;
    try {
      handle = await open(through, DIRECTORY_FLAGS);
    } catch (error) {
      // Linux answers O_NOFOLLOW | O_DIRECTORY on a symbolic link with ENOTDIR: say which it was.
      if (errorCode(error) === 'ENOTDIR' && (await lstat(through).catch(() => undefined))?.isSymbolicLink()) {
        throw Object.assign(new Error(`ELOOP: a symbolic link, open '${dir}'`), { code: 'ELOOP' });
      }
      throw error;
    }
    try {
      const stats = await handle.stat();
      if (!stats.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, open '${dir}'`), { code: 'ENOTDIR' });
      const proc = `/proc/self/fd/${handle.fd}`;
      // Whether /proc reaches our descriptors is known once a parent was opened: ask only for the first.
      const viaProc = knownProc === undefined ? await stat(proc).catch(() => undefined) : undefined;
      const reaches = knownProc ?? (viaProc !== undefined && viaProc.dev === stats.dev && viaProc.ino === stats.ino);
      const base = reaches ? proc : dir;
      if (base === proc) shownByFd.set(handle.fd, dir);
      return new AnchoredDirectory(dir, handle, stats, base);
    } catch (error) {
      await handle.close().catch(() => {});
      throw error;
    }
  }

  /** Whether paths below are reached through the held fd (Linux /proc), not by name. */
  get throughDescriptor(): boolean {
    return this.base !== this.shownPath;
  }

  /** A path to `relative` below the anchored directory ('' for the directory itself). */
  at(relative: string): string {
    return relative === '' ? this.base : path.join(this.base, relative);
  }

  /** The name shown for `relative` below it. */
  shown(relative: string): string {
    return relative === '' ? this.shownPath : path.join(this.shownPath, relative);
  }

  /**
   * The child directory `name` (one segment), made with mode 0700 when missing and `create`;
   * never a symbolic link (ELOOP) or anything but a directory (ENOTDIR).
   */
  async child(name: string, options: { create: boolean }): Promise<AnchoredDirectory> {
    if (options.create) {
      await mkdir(this.at(name), { mode: PRIVATE_DIRECTORY_MODE }).catch((error: unknown) => {
        if (errorCode(error) !== 'EEXIST') throw error;
      });
    }
    return AnchoredDirectory.open(this.shown(name), this.at(name), this.throughDescriptor);
  }

  /** Whether `shownPath` still names this directory (not moved away, not replaced by a link or another directory). */
  async stillNamed(): Promise<boolean> {
    const now = await lstat(this.shownPath).catch(() => undefined);
    return now !== undefined && now.isDirectory() && now.dev === this.stats.dev && now.ino === this.stats.ino;
  }

  /** Whether `name` (one segment) below it is, now, the anchored directory `child`: not renamed away or replaced. */
  async stillHolds(name: string, child: AnchoredDirectory): Promise<boolean> {
    const now = await lstatOrUndefined(this.at(name));
    return now !== undefined && now.dev === child.stats.dev && now.ino === child.stats.ino;
  }

  /** Where the anchored directory is now, as the kernel says (Linux), else the path it was opened by. */
  async currentPath(): Promise<string> {
    if (!this.throughDescriptor) return this.shownPath;
    return readlink(this.base).catch(() => this.shownPath);
  }

  /** fstat of the anchored directory now. */
  stat(): Promise<Stats> {
    return this.handle.stat();
  }

  chmod(mode: number): Promise<void> {
    return this.handle.chmod(mode);
  }

  async close(): Promise<void> {
    if (this.throughDescriptor) shownByFd.delete(this.handle.fd);
    await this.handle.close().catch(() => {});
  }
}

/** The shown path of every anchored directory reached through /proc, by fd: for messages. */
const shownByFd = new Map<number, string>();

/** `text` (an error message) with every `/proc/self/fd/<fd>` of a anchored directory replaced by the path it was opened by. */
export function withShownPaths(text: string): string {
  return text.replace(/\/proc\/self\/fd\/(\d+)/g, (whole, fd: string) => shownByFd.get(Number(fd)) ?? whole);
}
