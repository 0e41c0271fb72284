// Types for the part of fuse-native 2.2.6 (an untyped CommonJS module) that src/fuse uses.
// Callbacks take a result code first: 0 or a count on success, a negative errno on failure.

declare module 'fuse-native' {
  namespace Fuse {
    /** Reply callback: `code` is 0 (or a byte count) on success, a negative errno on failure. */
    type Reply<T extends unknown[] = []> = (code: number, ...result: T) => void;

    interface Stat {
      mode: number;
      uid: number;
      gid: number;
      size: number;
      nlink: number;
      /** Passed to the kernel only with the `use_ino` mount option; truncated to 32 bits. */
      ino: number;
      blksize: number;
      blocks: number;
      /** Milliseconds since the epoch (or a Date). */
      atime: number | Date;
      mtime: number | Date;
      ctime: number | Date;
      dev?: number;
      rdev?: number;
    }

    interface Statfs {
      bsize: number;
      frsize: number;
      blocks: number;
      bfree: number;
      bavail: number;
      files: number;
      ffree: number;
      favail: number;
      fsid: number;
      flag: number;
      namemax: number;
    }

    interface Operations {
      init?(cb: Reply): void;
      getattr?(path: string, cb: Reply<[Stat?]>): void;
      fgetattr?(path: string, fd: number, cb: Reply<[Stat?]>): void;
      readdir?(path: string, cb: Reply<[string[]?]>): void;
      open?(path: string, flags: number, cb: Reply<[number?]>): void;
      read?(path: string, fd: number, buffer: Buffer, length: number, position: number, cb: Reply): void;
      release?(path: string, fd: number, cb: Reply): void;
      access?(path: string, mode: number, cb: Reply): void;
      statfs?(path: string, cb: Reply<[Statfs?]>): void;
      getxattr?(path: string, name: string, position: number, cb: Reply<[Buffer?]>): void;
      listxattr?(path: string, cb: Reply<[string[]?]>): void;
      write?(path: string, fd: number, buffer: Buffer, length: number, position: number, cb: Reply): void;
      create?(path: string, mode: number, cb: Reply<[number?]>): void;
      truncate?(path: string, size: number, cb: Reply): void;
      ftruncate?(path: string, fd: number, size: number, cb: Reply): void;
      unlink?(path: string, cb: Reply): void;
      mkdir?(path: string, mode: number, cb: Reply): void;
      rmdir?(path: string, cb: Reply): void;
      rename?(src: string, dest: string, cb: Reply): void;
      link?(src: string, dest: string, cb: Reply): void;
      symlink?(src: string, dest: string, cb: Reply): void;
      chmod?(path: string, mode: number, cb: Reply): void;
      chown?(path: string, uid: number, gid: number, cb: Reply): void;
      utimens?(path: string, atime: number, mtime: number, cb: Reply): void;
      setxattr?(path: string, name: string, value: Buffer, position: number, flags: number, cb: Reply): void;
      removexattr?(path: string, name: string, cb: Reply): void;
      mknod?(path: string, mode: number, dev: number, cb: Reply): void;
    }

    interface Options {
      /** Per-operation deadline in ms after which fuse-native answers ETIMEDOUT; false disables. */
      timeout?: number | false;
      force?: boolean;
      mkdir?: boolean;
      debug?: boolean;
    }

    /** The internal reply function handed to `_op_*` methods (result, then the detached buffer). */
    type Signal = (code: number, ...result: unknown[]) => void;
  }

  class Fuse {
    constructor(mountpoint: string, ops: Fuse.Operations, opts?: Fuse.Options);
    readonly mnt: string;
    readonly ops: Fuse.Operations;
    /** Native thread state; handed to the binding's unmount. */
    _thread: Buffer | null;
    mount(cb: (err: Error | null) => void): void;
    unmount(cb: (err: Error | null) => void): void;
    /** Builds the `-o...` argument passed to libfuse. */
    _fuseOptions(): string;
    _close(cb: (err: Error | null) => void): void;
    _op_getxattr(signal: Fuse.Signal, path: string, name: string, valueBuf: Buffer, position: number): void;
    _op_listxattr(signal: Fuse.Signal, path: string, listBuf: Buffer): void;
    _op_fgetattr(signal: Fuse.Signal, path: string, fd: number): void;
    _op_getattr(signal: Fuse.Signal, path: string): void;
    static unmount(mountpoint: string, cb: (err: Error | null) => void): void;
  }

  export = Fuse;
}
