// Mount lifecycle: checks and recovers the mountpoint, mounts a FilesystemCore read-only
// through fuse-native (loaded lazily so a missing libfuse becomes a clear error) and
// unmounts quickly. After mounting, this process must never touch the mountpoint itself.
// Reading the mount table is mount-table.ts's job; fixing fuse-native, fuse-native-patches.ts's.

import { execFile } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type Fuse from 'fuse-native';
import { ConfigError } from '../errors.js';
import type { FilesystemCore } from '../fs/filesystem-core.js';
import { loadNativeBinding, patchFuseNative, type SkillsFuseClass } from './fuse-native-patches.js';
import type { Log } from '../log.js';
import { createFuseOperations } from './fuse-operations.js';
import { MountError } from './mount-error.js';
import type { AddonAnswers, OperationObserver } from './operation-observer.js';
import { MOUNT_TYPE, canonicalMountpoint, detachMount, findMount } from './mount-table.js';
import { startWatchdog, type Watchdog } from './watchdog.js';

export interface MountOptions {
  /**
   * fuse-native's per-operation deadline; it answers ETIMEDOUT after this. Must exceed
   * the core's own deadline (the MCP request timeout), e.g. requestTimeoutMs + 5000.
   */
  operationTimeoutMs: number;
  /**
   * How long the kernel trusts a name lookup / a node's attributes without asking again.
   * 1 s keeps `ls -l` and repeated stats in the kernel (~3 µs instead of ~140 µs per
   * stat) while a changed or removed skill shows up within a second. 0 asks every time.
   */
  entryTimeoutSeconds?: number;
  attrTimeoutSeconds?: number;
  /** How long a "no such file" answer is cached; same trade-off for newly added skills. */
  negativeTimeoutSeconds?: number;
  /**
   * Keep file pages in the kernel cache across opens unless size or mtime changed when
   * the file is opened again (libfuse `auto_cache`, checked at every open). A new content
   * version changes mtime, so it drops stale pages; `kernel_cache` would keep them and is
   * never used.
   */
  autoCache?: boolean;
  /**
   * Let fusermount remove the mount when this process dies (even by SIGKILL), instead of
   * leaving a stale "Transport endpoint is not connected" mount. Needs `fusermount`.
   */
  autoUnmount?: boolean;
  /** Receives one line per unexpected error; defaults to stderr. */
  log?: Log;
  /** Give up when the kernel has not completed the mount within this time. */
  mountTimeoutMs?: number;
  /**
   * libfuse3: the project's low-level addon (per-version inodes, kept caches, invalidation);
   * libfuse2: fuse-native, the fallback for one release. Default: libfuse3 when its addon loads.
   */
  backend?: FuseBackend;
  /** With libfuse3: how long the kernel keeps names and attributes (changes are invalidated at once). */
  kernelCacheSeconds?: number;
  /**
   * With libfuse3: bytes of opened versions kept for the next open of the same inode (beyond
   * what open handles hold). Bound it by the content cache's size, so --cache-size bounds both.
   */
  pinnedBytesLimit?: number;
  /** Log what the kernel negotiated. */
  verbose?: boolean;
  /**
   * Serve one more user: `allow_other`, every node owned by this uid and gid (0400/0500 with
   * default_permissions), so they and root may read and nobody else. Undefined: host-private.
   */
  allowOther?: { uid: number; gid: number };
  /** Told of every FUSE operation as it starts and ends (metrics); never changes an answer. */
  observer?: OperationObserver;
}


export type FuseBackend = 'libfuse3' | 'libfuse2';
/** With libfuse3 the kernel is told of every change, so it may keep names and attributes for long. */
const DEFAULT_KERNEL_CACHE_SECONDS = 600;

export interface MountHandle {
  /** Absolute path of the mountpoint. */
  readonly mountpoint: string;
  /** The `-o` argument given to libfuse (the kernel shows its own subset in /proc/mounts). */
  readonly fuseOptions: string;
  /** Which FUSE edge serves the mount. */
  readonly backend: FuseBackend;
  /** Unmounts within about 2 s, even with operations in flight; idempotent. */
  unmount(): Promise<void>;
  /** libfuse3: the opens, releases and reads its addon answered without the daemon (for the metrics). */
  answeredByAddon?(): AddonAnswers;
}

const DEFAULT_CACHE_TIMEOUT_SECONDS = 1;
const DEFAULT_MOUNT_TIMEOUT_MS = 10_000;
const PROBE_TIMEOUT_MS = 2_000;
const UNMOUNT_DEADLINE_MS = 1_200;
const INSTALL_HINT = 'install the Debian/Ubuntu packages fuse and libfuse2: sudo apt-get install fuse libfuse2 (see docs/troubleshooting.md)';
const EMPTY_DIRECTORY_HINT = 'choose an empty directory, or a path that does not exist yet (it is created with mode 0700)';

/** The libfuse `-o` options for these settings; read-only and host-private by construction. */
export function buildMountOptions(options: MountOptions): string[] {
  const seconds = (name: keyof MountOptions, value: number | undefined): string => {
    const resolved = value ?? DEFAULT_CACHE_TIMEOUT_SECONDS;
    if (!Number.isFinite(resolved) || resolved < 0) {
      throw new ConfigError(`${name} must be a number of seconds >= 0, got ${String(value)}`);
    }
    return String(resolved);
  };
  const list = [
    // The kernel refuses every write with EROFS before it reaches us.
    'ro',
    'nosuid',
    'nodev',
    'noexec',
    'fsname=skills-mount',
    'subtype=skills-mount',
    // The kernel enforces the 0400/0500 modes; without allow_other only the mounting user
    // can enter the mount at all, with it the owner every node carries (and root).
    'default_permissions',
    ...(options.allowOther ? ['allow_other'] : []),
    // Pass NodeAttributes.inode through as st_ino (libfuse otherwise invents numbers).
    'use_ino',
    `entry_timeout=${seconds('entryTimeoutSeconds', options.entryTimeoutSeconds)}`,
    `attr_timeout=${seconds('attrTimeoutSeconds', options.attrTimeoutSeconds)}`,
    `negative_timeout=${seconds('negativeTimeoutSeconds', options.negativeTimeoutSeconds)}`,
  ];
  // auto_cache with ac_attr_timeout=0: every open asks fgetattr for the version the new
  // handle pins (an in-memory answer) and keeps the page cache only if it is unchanged.
  if (options.autoCache ?? true) list.push('auto_cache', 'ac_attr_timeout=0');
  if (options.autoUnmount ?? true) list.push('auto_unmount');
  return list;
}

/**
 * Makes `dir` ready to be mounted on: creates it (mode 0700) if missing, lazily unmounts a
 * stale FUSE mount left by a dead daemon, refuses live mounts, files and non-empty
 * directories with a ConfigError. Returns the absolute mountpoint.
 */
export async function prepareMountpoint(dir: string): Promise<string> {
  const mountpoint = await canonicalMountpoint(dir);
  const mounted = await findMount(mountpoint);
  if (mounted !== undefined) {
    if (!mounted.fsType.startsWith('fuse')) {
      throw new ConfigError(
        `mountpoint ${mountpoint} is already a mount point (${mounted.fsType} from ${mounted.source}); ` +
          `skills-mount mounts only on an empty directory: ${EMPTY_DIRECTORY_HINT}`,
      );
    }
    const state = await probeFuseMount(mountpoint);
    if (state !== 'dead') {
      const ours = mounted.fsType === MOUNT_TYPE;
      throw new ConfigError(
        `mountpoint ${mountpoint} is busy: already mounted (${mounted.fsType} from ${mounted.source}` +
          `${state === 'unresponsive' ? ', not responding' : ''}); ` +
          (ours
            ? `another skills-mount serves it (skills-mount status ${mountpoint} shows it); stop it with: skills-mount unmount ${mountpoint}`
            : `unmount it first (fusermount -u ${mountpoint}), or choose another directory`),
      );
    }
    await detachMount(mountpoint);
  }

  let isDirectory: boolean;
  try {
    isDirectory = (await stat(mountpoint)).isDirectory();
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') {
      await mkdir(mountpoint, { recursive: true, mode: 0o700 }).catch((mkdirError: unknown) => {
        throw new ConfigError(
          `cannot create mountpoint ${mountpoint}: ${messageOf(mkdirError)}; ` +
            'choose a path under a directory you can write to (e.g. ~/.cache/mcp-skills)',
          { cause: mkdirError },
        );
      });
      return mountpoint;
    }
    if (code === 'ENOTCONN' && mounted === undefined) {
      // A dead FUSE mount this mount namespace does not list; detaching is still right.
      await detachMount(mountpoint);
      return prepareMountpoint(mountpoint);
    }
    const hint = code === 'EACCES' ? '; choose a directory you own' : code === 'ENOTCONN' ? `; a dead FUSE mount: skills-mount unmount ${mountpoint}` : '';
    throw new ConfigError(`cannot use mountpoint ${mountpoint}: ${messageOf(error)}${hint}`, { cause: error });
  }
  if (!isDirectory) {
    throw new ConfigError(`mountpoint ${mountpoint} is not a directory; skills-mount mounts only on an empty directory: ${EMPTY_DIRECTORY_HINT}`);
  }
  if ((await readdir(mountpoint)).length > 0) {
    throw new ConfigError(`mountpoint ${mountpoint} is not empty; skills-mount mounts only on an empty directory: ${EMPTY_DIRECTORY_HINT}`);
  }
  return mountpoint;
}

/** Mounts `core` read-only at `dir` (prepared with prepareMountpoint) and resolves once the kernel is connected. */
export async function mountFilesystem(core: FilesystemCore, dir: string, options: MountOptions): Promise<MountHandle> {
  if (!Number.isFinite(options.operationTimeoutMs) || options.operationTimeoutMs <= 0) {
    throw new ConfigError(`operationTimeoutMs must be a positive number, got ${String(options.operationTimeoutMs)}`);
  }
  // Checks every timeout, whichever backend serves the mount.
  const mountOptions = buildMountOptions(options);
  if (options.allowOther) await checkUserAllowOther();
  const backend = await chooseBackend(options);
  if (backend === 'libfuse3') return mountWithLibfuse3(core, dir, options);
  const mountpoint = await prepareMountpoint(dir);
  await checkFuseDevice();
  if ((options.autoUnmount ?? true) || process.getuid?.() !== 0) await checkFusermount();
  const fuse = await createFuse(core, mountpoint, mountOptions, options);
  await mountWithin(fuse, mountpoint, options.mountTimeoutMs ?? DEFAULT_MOUNT_TIMEOUT_MS);
  const watchdog = (options.autoUnmount ?? true) ? await guardLibfuse2Mount(mountpoint, options.log ?? defaultLog) : undefined;

  let unmounting: Promise<void> | undefined;
  return {
    mountpoint,
    backend: 'libfuse2',
    fuseOptions: fuse._fuseOptions(),
    unmount() {
      unmounting ??= unmountWithin(fuse, mountpoint).finally(() => watchdog?.stop());
      return unmounting;
    },
  };
}

/** The libfuse3 `-o` options: read-only and inert by construction; host-private unless allowOther. */
export function buildLowLevelMountOptions(options: Pick<MountOptions, 'allowOther'> = {}): string[] {
  return ['ro', 'nosuid', 'nodev', 'noexec', 'default_permissions', ...(options.allowOther ? ['allow_other'] : []), 'fsname=skills-mount', 'subtype=skills-mount'];
}

/** The backend asked for, or libfuse3 when its addon loads (else libfuse2, saying why once). */
export async function chooseBackend(options: Pick<MountOptions, 'backend' | 'log'>): Promise<FuseBackend> {
  if (options.backend === 'libfuse2') return 'libfuse2';
  const { loadAddon } = await import('./lowlevel/addon.js');
  try {
    loadAddon();
    return 'libfuse3';
  } catch (error) {
    if (options.backend === 'libfuse3') {
      throw new MountError(`--fuse-backend libfuse3: the libfuse 3 addon does not load (${messageOf(error)}); run scripts/setup.sh, which installs libfuse3-dev and builds it`, { cause: error });
    }
    (options.log ?? defaultLog)(`the libfuse 3 addon does not load (${messageOf(error).split('\n')[0]}); using the libfuse 2 fallback (fuse-native)`);
    return 'libfuse2';
  }
}

async function mountWithLibfuse3(core: FilesystemCore, dir: string, options: MountOptions): Promise<MountHandle> {
  const { mountLowLevel } = await import('./lowlevel/mount-lowlevel.js');
  const mountpoint = await prepareMountpoint(dir);
  await checkFuseDevice();
  if (process.getuid?.() !== 0) await checkDeviceOpenable();
  const fuseOptions = buildLowLevelMountOptions(options);
  const cacheSeconds = options.kernelCacheSeconds ?? DEFAULT_KERNEL_CACHE_SECONDS;
  const owner = options.allowOther ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const mounted = await mountLowLevel(core, mountpoint, {
    log: options.log ?? defaultLog,
    owner: { ...owner, fileMode: fsConstants.S_IFREG | 0o400, directoryMode: fsConstants.S_IFDIR | 0o500 },
    ...(options.observer ? { observer: options.observer } : {}),
    entryTimeoutSeconds: cacheSeconds,
    attrTimeoutSeconds: cacheSeconds,
    negativeTimeoutSeconds: options.negativeTimeoutSeconds ?? DEFAULT_CACHE_TIMEOUT_SECONDS,
    mountTimeoutMs: options.mountTimeoutMs ?? DEFAULT_MOUNT_TIMEOUT_MS,
    fuseOptions,
    operationTimeoutMs: options.operationTimeoutMs,
    ...(options.pinnedBytesLimit === undefined ? {} : { pinnedBytesLimit: options.pinnedBytesLimit }),
    autoUnmount: options.autoUnmount ?? true,
    // SKILLS_MOUNT_ZERO_MESSAGE_OPEN=1: the benchmark's comparison of the two open models.
    zeroMessageOpen: process.env['SKILLS_MOUNT_ZERO_MESSAGE_OPEN'] === '1',
    // SKILLS_MOUNT_ADDON_TABLE=N: the names the addon answers from (0: none, every lookup in JS), for the benchmark's comparison and the tests.
    ...addonTableEntries(process.env['SKILLS_MOUNT_ADDON_TABLE']),
    // SKILLS_MOUNT_ADDON_COPIES=0: every open of a disk-cached file in JS, for the benchmark's comparison and the tests.
    addonCopyOpens: process.env['SKILLS_MOUNT_ADDON_COPIES'] !== '0',
    ...(options.verbose === undefined ? {} : { verbose: options.verbose }),
  });
  let unmounting: Promise<void> | undefined;
  return {
    mountpoint,
    backend: 'libfuse3',
    fuseOptions: [...fuseOptions, ...((options.autoUnmount ?? true) ? ['auto_unmount'] : [])].join(','),
    answeredByAddon: () => mounted.edge.answeredByAddon(),
    unmount() {
      unmounting ??= mounted.unmount().catch((error: unknown) => {
        throw new MountError(`unmounting ${mountpoint} failed: ${messageOf(error)}`, { cause: error });
      });
      return unmounting;
    },
  };
}

/** SKILLS_MOUNT_ADDON_TABLE as the edge's option: a whole number of names, else the default. */
function addonTableEntries(text: string | undefined): { addonTableEntries?: number } {
  const entries = Number(text);
  return text !== undefined && text !== '' && Number.isInteger(entries) && entries >= 0 ? { addonTableEntries: entries } : {};
}

/**
 * libfuse 2 keeps fusermount's auto_unmount socket open without FD_CLOEXEC, so every child
 * spawned later would hold it: mark our descriptors close-on-exec (with the libfuse 3 addon's
 * help, where it loads), then start the watchdog that detaches the mount if this process dies.
 */
async function guardLibfuse2Mount(mountpoint: string, log: Log): Promise<Watchdog | undefined> {
  const { loadAddon } = await import('./lowlevel/addon.js');
  try {
    loadAddon().closeOnExecAll();
  } catch {
    // No addon: a child may hold the socket; the watchdog still detaches a dead mount.
  }
  const entry = await findMount(mountpoint);
  if (entry?.fsType !== MOUNT_TYPE) {
    log(`${mountpoint} is not in the mount table after mounting; no watchdog (fusermount's auto_unmount remains)`);
    return undefined;
  }
  return startWatchdog(entry);
}

function defaultLog(line: string): void {
  process.stderr.write(`skills-mount: ${line}\n`);
}

/**
 * The fuse-native instance mountFilesystem mounts, not mounted yet: `core`'s callbacks,
 * libfuse options `mountOptions` (from buildMountOptions). Exported for tests.
 */
export async function createFuse(core: FilesystemCore, mountpoint: string, mountOptions: readonly string[], options: MountOptions): Promise<Fuse> {
  const { SkillsFuse } = await loadFuseNative();
  const ops = createFuseOperations(core, {
    ...(options.log === undefined ? {} : { log: options.log }),
    ...(options.allowOther ?? {}),
    ...(options.observer ? { observer: options.observer } : {}),
  });
  return new SkillsFuse(mountpoint, ops, mountOptions, { timeout: options.operationTimeoutMs });
}

// ---- fuse-native, loaded on first mount ------------------------------------------------

let loaded: Promise<{ SkillsFuse: SkillsFuseClass }> | undefined;

function loadFuseNative(): Promise<{ SkillsFuse: SkillsFuseClass }> {
  loaded ??= (async () => {
    try {
      const FuseClass = (await import('fuse-native')).default;
      return { SkillsFuse: patchFuseNative(FuseClass, loadNativeBinding()) };
    } catch (error) {
      loaded = undefined;
      const message = messageOf(error);
      if (/libfuse\.so/.test(message)) throw new MountError(`cannot load libfuse: ${message}; ${INSTALL_HINT}`);
      throw new MountError(`cannot load fuse-native: ${message}`, { cause: error });
    }
  })();
  return loaded;
}

function mountWithin(fuse: Fuse, mountpoint: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      detachMount(mountpoint).catch(() => undefined);
      reject(new MountError(`mounting ${mountpoint} did not complete within ${timeoutMs} ms`));
    }, timeoutMs);
    fuse.mount((error) => {
      clearTimeout(timer);
      if (error === null || error === undefined) return resolve();
      mountFailure(mountpoint, error).then(reject, reject);
    });
  });
}

function unmountWithin(fuse: Fuse, mountpoint: string): Promise<void> {
  const viaFuse = new Promise<void>((resolve, reject) => fuse.unmount((error) => (error ? reject(error) : resolve())));
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), UNMOUNT_DEADLINE_MS);
  });
  return Promise.race([viaFuse, deadline])
    .then(async (outcome) => {
      if (outcome === 'late' && (await findMount(mountpoint)) !== undefined) await detachMount(mountpoint);
    })
    .catch((error: unknown) => {
      throw new MountError(`unmounting ${mountpoint} failed: ${messageOf(error)}`, { cause: error });
    })
    .finally(() => clearTimeout(timer));
}

async function mountFailure(mountpoint: string, error: Error): Promise<MountError> {
  if (error.message !== 'fuse failed') {
    return new MountError(`mounting ${mountpoint} failed: ${error.message}`, { cause: error });
  }
  // libfuse says nothing more than "fuse failed" (and, with auto_unmount, fusermount's
  // own message is discarded), so name the usual causes.
  const deviceUsable = await access('/dev/fuse', fsConstants.R_OK | fsConstants.W_OK).then(
    () => true,
    () => false,
  );
  const cause =
    process.getuid?.() === 0
      ? 'not permitted: the kernel refused the FUSE mount; in a container, run it with --device /dev/fuse --cap-add SYS_ADMIN ' +
        '(and, under AppArmor, --security-opt apparmor:unconfined)'
      : deviceUsable
        ? 'not permitted: a non-root user mounts through fusermount, which must be setuid root ' +
          '(Debian\'s fuse package installs it so: ls -l "$(command -v fusermount)" shows -rwsr-xr-x) ' +
          'and the mountpoint must be a directory you own; or mount as root'
        : 'not permitted: this user cannot open /dev/fuse; grant read/write access to it (mode 0666, as Debian ships it) or mount as root';
  return new MountError(`mounting ${mountpoint} failed: ${cause} (see docs/troubleshooting.md)`, { cause: error });
}

// ---- environment checks -----------------------------------------------------------------

async function checkFuseDevice(): Promise<void> {
  // Existence only: a non-root user mounts through the setuid fusermount, which opens
  // /dev/fuse as root, so the device's permissions are not ours to judge.
  try {
    await stat('/dev/fuse');
  } catch (error) {
    throw new MountError(
      `/dev/fuse is not available (${errorCode(error) ?? messageOf(error)}): FUSE is not usable on this machine; ` +
        'load the kernel module (sudo modprobe fuse), or in a container give it the device ' +
        '(docker run --device /dev/fuse --cap-add SYS_ADMIN); see docs/troubleshooting.md',
      { cause: error },
    );
  }
}

/** fusermount3 opens /dev/fuse as the calling user (its setuid is for mount(2) alone). */
async function checkDeviceOpenable(): Promise<void> {
  try {
    await access('/dev/fuse', fsConstants.R_OK | fsConstants.W_OK);
  } catch (error) {
    throw new MountError(
      `this user cannot open /dev/fuse (${errorCode(error) ?? messageOf(error)}): fusermount3 opens it as the calling user, ` +
        'so it must be readable and writable by them, mode 0666 as Debian\'s udev rule sets it (sudo chmod 0666 /dev/fuse); or mount as root; see docs/troubleshooting.md',
      { cause: error },
    );
  }
}

/**
 * fusermount refuses allow_other from a user other than root unless /etc/fuse.conf says
 * user_allow_other; its own message is lost with auto_unmount, so say it before mounting.
 */
export async function checkUserAllowOther(configPath = '/etc/fuse.conf'): Promise<void> {
  if (process.getuid?.() === 0) return;
  const text = await readFile(configPath, 'utf8').catch(() => '');
  if (text.split('\n').some((line) => line.trim() === 'user_allow_other')) return;
  throw new ConfigError(
    `--allow-user needs "user_allow_other" in ${configPath} when the daemon does not run as root ` +
      `(fusermount refuses allow_other otherwise): add that line to ${configPath} as root, or run the daemon as root; see docs/security-model.md`,
  );
}

async function checkFusermount(): Promise<void> {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    try {
      await access(path.join(dir, 'fusermount'), fsConstants.X_OK);
      return;
    } catch {
      // Not in this PATH entry.
    }
  }
  throw new MountError(`fusermount is not on PATH (it mounts and unmounts FUSE filesystems); ${INSTALL_HINT}`);
}

// ---- the mount already at the mountpoint ------------------------------------------------

/**
 * 'dead' when the daemon is gone (ENOTCONN), 'unresponsive' when it does not answer in time.
 * Asks with statfs, which the kernel always sends to the daemon: a stat may be answered from the
 * attributes the kernel holds (for minutes on libfuse 3), long after the daemon died. From a
 * child process, killed at the deadline: a call blocked in FUSE would keep a thread of ours.
 */
function probeFuseMount(mountpoint: string): Promise<'live' | 'dead' | 'unresponsive'> {
  return new Promise((resolve) => {
    execFile('stat', ['-f', '--', mountpoint], { timeout: PROBE_TIMEOUT_MS, killSignal: 'SIGKILL', env: { ...process.env, LC_ALL: 'C' } }, (error, _stdout, stderr) => {
      if (error === null) return resolve('live');
      if (error.killed) return resolve('unresponsive');
      resolve(/not connected|aborted/i.test(stderr) ? 'dead' : 'live');
    });
  });
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
