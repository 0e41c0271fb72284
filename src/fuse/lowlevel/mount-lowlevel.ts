// Mounting through the libfuse 3 addon: the session (via fusermount3, so a user who is not root
// can mount), the wait for the kernel's INIT, the watchdog (watchdog.ts) that detaches the mount if
// this process dies without unmounting, and an unmount that answers every request still in flight.
import type { FilesystemCore } from '../../fs/filesystem-core.js';
import type { Log } from '../../log.js';
import { MountError } from '../mount-error.js';
import { MOUNT_TYPE, findMount } from '../mount-table.js';
import { startWatchdog, type Watchdog } from '../watchdog.js';
import { loadAddon, type Addon, type Session } from './addon.js';
import { LowLevelEdge, type Negotiated } from './lowlevel-edge.js';
import type { Ownership } from './inode-table.js';
import type { OperationObserver } from '../operation-observer.js';

export interface LowLevelMountOptions {
  log: Log;
  owner: Ownership;
  entryTimeoutSeconds: number;
  attrTimeoutSeconds: number;
  negativeTimeoutSeconds: number;
  mountTimeoutMs: number;
  /** libfuse -o options (ro, nosuid, ..., fsname, subtype); auto_unmount is added by autoUnmount. */
  fuseOptions: readonly string[];
  pinnedBytesLimit?: number;
  maxBackground?: number;
  operationTimeoutMs: number;
  /** See LowLevelEdgeOptions.zeroMessageOpen. */
  zeroMessageOpen?: boolean;
  /** See LowLevelEdgeOptions.addonTableEntries. */
  addonTableEntries?: number;
  /** See LowLevelEdgeOptions.addonCopyOpens. */
  addonCopyOpens?: boolean;
  /** Detach the mount if this process dies (fusermount3's auto_unmount and the watchdog). */
  autoUnmount: boolean;
  verbose?: boolean;
  observer?: OperationObserver;
  /** Told once when the session ended because the mount was taken away from outside. */
  onUnmounted?: () => void;
}

export interface LowLevelMount {
  readonly negotiated: Negotiated;
  readonly edge: LowLevelEdge;
  /** Answers what is in flight, stops the session and detaches the mount; idempotent. */
  unmount(): Promise<void>;
}

const DEFAULT_PINNED_BYTES = 256 * 2 ** 20;
const DEFAULT_MAX_BACKGROUND = 64;

/** Mounts `core` at `mountpoint` (already prepared) through the libfuse 3 low-level addon. */
export async function mountLowLevel(core: FilesystemCore, mountpoint: string, options: LowLevelMountOptions, addon: Addon = loadAddon()): Promise<LowLevelMount> {
  const edge = new LowLevelEdge(addon, core, {
    log: options.log,
    owner: options.owner,
    entryTimeoutSeconds: options.entryTimeoutSeconds,
    attrTimeoutSeconds: options.attrTimeoutSeconds,
    negativeTimeoutSeconds: options.negativeTimeoutSeconds,
    pinnedBytesLimit: options.pinnedBytesLimit ?? DEFAULT_PINNED_BYTES,
    operationTimeoutMs: options.operationTimeoutMs,
    zeroMessageOpen: options.zeroMessageOpen ?? false,
    ...(options.addonTableEntries === undefined ? {} : { addonTableEntries: options.addonTableEntries }),
    ...(options.addonCopyOpens === undefined ? {} : { addonCopyOpens: options.addonCopyOpens }),
    ...(options.verbose === undefined ? {} : { verbose: options.verbose }),
    ...(options.observer ? { observer: options.observer } : {}),
  }, await core.getattr('/'));
  const wants = edge.wants();
  let session: Session;
  try {
    const fuseOptions = options.autoUnmount ? [...options.fuseOptions, 'auto_unmount'] : options.fuseOptions;
    session = addon.mount(mountpoint, ['-o', fuseOptions.join(',')], wants.on, wants.off, options.maxBackground ?? DEFAULT_MAX_BACKGROUND, edge.handle);
  } catch (error) {
    throw new MountError(`mounting ${mountpoint} failed: ${(error as Error).message}${mountHint(error)}`, { cause: error });
  }
  let unmounting: Promise<void> | undefined;
  let watchdog: Watchdog | undefined;
  const unmount = (): Promise<void> => {
    unmounting ??= Promise.resolve().then(() => {
      addon.unmount(session);
      edge.close();
      watchdog?.stop();
    });
    return unmounting;
  };
  const negotiated = await new Promise<Negotiated>((resolve, reject) => {
    const timer = setTimeout(() => {
      void unmount();
      reject(new MountError(`mounting ${mountpoint} did not complete within ${options.mountTimeoutMs} ms (the kernel sent no INIT)`));
    }, options.mountTimeoutMs);
    edge.attach(session, {
      init: (result) => {
        clearTimeout(timer);
        resolve(result);
      },
      exit: () => {
        if (unmounting) return;
        options.log(`${mountpoint} was unmounted from outside; the FUSE session ended`);
        void unmount().then(() => options.onUnmounted?.());
      },
    });
  });
  if (options.autoUnmount && !unmounting) {
    // After INIT the mount is in the table: the watchdog learns which one is this daemon's.
    const entry = await findMount(mountpoint);
    if (entry?.fsType === MOUNT_TYPE) {
      // An unmount meanwhile said its "stop" to nobody; a watchdog started now would still find no mount to detach.
      if (!unmounting) watchdog = startWatchdog(entry);
    } else options.log(`${mountpoint} is not in the mount table after INIT; no watchdog (fusermount3's auto_unmount remains)`);
  }
  if (options.verbose) options.log(`libfuse3: ${describeNegotiated(negotiated)}`);
  return { negotiated, edge, unmount };
}

/** One line on what the kernel granted, and what falls back. */
export function describeNegotiated(negotiated: Negotiated): string {
  const part = (on: boolean, yes: string, no: string) => (on ? yes : no);
  return [
    ...(negotiated.kernelProtocol ? [`kernel FUSE protocol ${negotiated.kernelProtocol}`] : []),
    part(negotiated.zeroMessageOpen, 'zero-message open', 'opens counted: the first pins the version, the addon answers the rest with keep_cache'),
    part(negotiated.zeroMessageOpendir, 'zero-message opendir', 'opendir answered with cache_readdir (kernel lacks NO_OPENDIR_SUPPORT)'),
    part(negotiated.readdirPlus, 'readdirplus', 'plain readdir (kernel lacks READDIRPLUS)'),
    part(negotiated.autoInvalData, 'auto_inval_data', 'no auto_inval_data'),
  ].join(', ');
}

function mountHint(error: unknown): string {
  const message = (error as Error).message ?? '';
  if (/fusermount3?: .*not found|No such file/.test(message)) return '; install the Debian/Ubuntu package fuse3 (sudo apt-get install fuse3)';
  if (/Permission denied|Operation not permitted/.test(message)) return '; see docs/troubleshooting.md (a non-root user mounts through the setuid fusermount3)';
  return '';
}
