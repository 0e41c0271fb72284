// What fuse-native 2.2.6 gets wrong or lacks, fixed in one subclass: each override below
// says which fuse-native behaviour it replaces and what a user would see without it.
// Knows nothing of skills: it adapts fuse-native, the callbacks come from fuse-operations.
import { createRequire } from 'node:module';
import path from 'node:path';
import type Fuse from 'fuse-native';
import { Errno } from './errno.js';
import { encodeXattrNames, encodeXattrValue } from './fuse-operations.js';
import { detachMount } from './mount-table.js';

/** The part of fuse-native's native module the patched unmount calls. */
export interface NativeBinding {
  fuse_native_unmount(mountpoint: string, thread: Buffer): void;
}

/** fuse-native's class, patched: takes the complete libfuse `-o` list as a constructor argument. */
export type SkillsFuseClass = new (mountpoint: string, ops: Fuse.Operations, mountOptions: readonly string[], opts: Fuse.Options) => Fuse;

/**
 * The native module fuse-native itself loaded (node caches it by path), for the patched
 * unmount. Throws as fuse-native's own load does (e.g. libfuse.so missing).
 */
export function loadNativeBinding(): NativeBinding {
  const requireFromFuse = createRequire(createRequire(import.meta.url).resolve('fuse-native'));
  const nodeGypBuild = requireFromFuse('node-gyp-build') as (dir: string) => NativeBinding;
  return nodeGypBuild(path.dirname(requireFromFuse.resolve('fuse-native')));
}

/** fuse-native's class with every patch applied. */
export function patchFuseNative(FuseClass: typeof Fuse, binding: NativeBinding): SkillsFuseClass {
  return class SkillsFuse extends FuseClass {
    readonly #mountOptions: readonly string[];

    constructor(mountpoint: string, ops: Fuse.Operations, mountOptions: readonly string[], opts: Fuse.Options) {
      super(mountpoint, ops, opts);
      this.#mountOptions = mountOptions;
    }

    // Why: fuse-native builds `-o` from its own option names only. It has none for
    // ro/nosuid/nodev/noexec/negative_timeout/use_ino (the kernel would not refuse writes
    // itself, and inode numbers would be invented), and it drops a timeout of 0 as falsy
    // (`--metadata-ttl 0` would still cache for libfuse's default second). So every option
    // comes from buildMountOptions; super still contributes `debug` (DEBUG=fuse-bindings).
    override _fuseOptions(): string {
      const base = super._fuseOptions();
      const ours = this.#mountOptions.join(',');
      return base === '' ? `-o${ours}` : `${base},${ours}`;
    }

    // Why: fuse-native copies a value into any buffer and returns its full length, so a
    // too-small buffer yields a reply longer than the kernel asked for: getfattr sees EIO,
    // not ERANGE (retry with a bigger buffer), and a size probe (empty buffer) is answered wrongly.
    override _op_getxattr(signal: Fuse.Signal, path: string, name: string, valueBuf: Buffer, position: number): void {
      this.ops.getxattr?.(path, name, position, (code, value) => {
        if (code < 0) return signal(code, valueBuf.buffer);
        signal(value === undefined ? Errno.EIO : encodeXattrValue(value, valueBuf), valueBuf.buffer);
      });
    }

    // Why: the same buffer sizing as getxattr, for the list of names.
    override _op_listxattr(signal: Fuse.Signal, path: string, listBuf: Buffer): void {
      this.ops.listxattr?.(path, (code, names) => {
        if (code < 0) return signal(code, listBuf.buffer);
        signal(names === undefined ? Errno.EIO : encodeXattrNames(names, listBuf), listBuf.buffer);
      });
    }

    // Why: fuse-native 2.2.6 drops the file handle and answers fgetattr with ops.getattr
    // (the path's newest version), so fstat on an open file and libfuse's auto_cache check
    // at open would describe bytes the handle does not serve.
    override _op_fgetattr(signal: Fuse.Signal, path: string, fd: number): void {
      const fgetattr = this.ops.fgetattr;
      if (!fgetattr) return super._op_fgetattr(signal, path, fd);
      // Reuse fuse-native's stat encoding: its _op_getattr reads nothing but `this.ops.getattr`.
      const handleView = { ops: { getattr: (statPath: string, cb: Fuse.Reply<[Fuse.Stat?]>) => fgetattr(statPath, fd, cb) } };
      FuseClass.prototype._op_getattr.call(handleView as unknown as Fuse, signal, path);
    }

    // Why: fuse-native's close skips the native cleanup when fusermount fails (e.g. the
    // mount is already gone), which keeps the event loop alive: the daemon would never exit.
    // Detach lazily (bounded), then always release the native thread.
    override _close(cb: (err: Error | null) => void): void {
      detachMount(this.mnt).then(
        () => {
          if (this._thread !== null) binding.fuse_native_unmount(this.mnt, this._thread);
          cb(null);
        },
        (error: unknown) => cb(error instanceof Error ? error : new Error(String(error))),
      );
    }
  };
}
