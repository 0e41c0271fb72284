// Mount lifecycle: checks and recovers the mountpoint, mounts a FilesystemCore read-only through
// the libfuse 3 addon (loaded lazily, so a command that mounts nothing never loads it) and unmounts
// quickly. After mounting, this process must never touch the mountpoint itself. Reading the mount
// table is mount-table.ts's job; what the platform offers, platform.ts's.

import { execFile } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { ConfigError } from '../errors.js';
import type { FilesystemCore } from '../fs/filesystem-core.js';
import type { Log } from '../log.js';
import { MountError } from './mount-error.js';
import type { AddonAnswers, OperationObserver } from './operation-observer.js';
import { MOUNT_TYPE, canonicalMountpoint, detachMount, findMount } from './mount-table.js';
import { ADDON_BUILD_HINT, fuseUnavailable, probeAddon, systemProbes, type PlatformProbes } from './platform.js';

export interface MountOptions {
  /**
   * The per-operation deadline; the edge answers ETIMEDOUT after this. Must exceed the core's own
   * deadline (the MCP request timeout), e.g. requestTimeoutMs + 5000.
   */
  operationTimeoutMs: number;
  /** How long the kernel keeps a "no such file" answer (a skill added meanwhile shows after it). */
  negativeTimeoutSeconds?: number;
  /**
   * Let fusermount3 remove the mount when this process dies (even by SIGKILL), with a watchdog
   * beside it, instead of leaving a stale "Transport endpoint is not connected" mount.
   */
  autoUnmount?: boolean;
  /** Receives one line per unexpected error; defaults to stderr. */
  log?: Log;
  /** Give up when the kernel has not completed the mount within this time. */
  mountTimeoutMs?: number;
  /** How long the kernel keeps names and attributes (changes are invalidated at once). */
  kernelCacheSeconds?: number;
  /**
   * Bytes of opened versions kept for the next open of the same inode (beyond
   * what open handles hold). Bound it by the content cache's size, so --cache-size bounds both.
   */
  pinnedBytesLimit?: number;
  /** Log what the kernel negotiated, and which addon loaded from where. */
  verbose?: boolean;
  /**
   * Serve one more user: `allow_other`, every node owned by this uid and gid (0400/0500 with
   * default_permissions), so they and root may read and nobody else. Undefined: host-private.
   */
  allowOther?: { uid: number; gid: number };
  /** Told of every FUSE operation as it starts and ends (metrics); never changes an answer. */
  observer?: OperationObserver;
  /** Told once when the mount was taken away from outside (`umount`, `fusermount3 -u`): the daemon's cue to stop. */
  onUnmounted?: () => void;
}

/** The one FUSE edge: the project's libfuse 3 addon (fuse-native's libfuse 2 path is gone since 0.2.0). */
export type FuseBackend = 'libfuse3';
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
  /** The opens, releases and reads the addon answered without the daemon (for the metrics). */
  answeredByAddon?(): AddonAnswers;
}

const DEFAULT_CACHE_TIMEOUT_SECONDS = 1;
const DEFAULT_MOUNT_TIMEOUT_MS = 10_000;
const PROBE_TIMEOUT_MS = 2_000;
const EMPTY_DIRECTORY_HINT = 'choose an empty directory, or a path that does not exist yet (it is created with mode 0700)';

/** Checks the timeouts a mount is given: each a number of seconds >= 0 (ConfigError otherwise). */
function checkTimeouts(options: MountOptions): void {
  for (const name of ['negativeTimeoutSeconds', 'kernelCacheSeconds'] as const) {
    const value = options[name];
    if (value !== undefined && (!Number.isFinite(value) || value < 0)) {
      throw new ConfigError(`${name} must be a number of seconds >= 0, got ${String(value)}`);
    }
  }
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
  checkTimeouts(options);
  if (options.allowOther) await checkUserAllowOther();
  // Said once, by the caller's own chooseBackend (verbose): here only checked.
  await chooseBackend({});
  return mountWithLibfuse3(core, dir, options);
}

/** The libfuse3 `-o` options: read-only and inert by construction; host-private unless allowOther. */
export function buildLowLevelMountOptions(options: Pick<MountOptions, 'allowOther'> = {}): string[] {
  return ['ro', 'nosuid', 'nodev', 'noexec', 'default_permissions', ...(options.allowOther ? ['allow_other'] : []), 'fsname=skills-mount', 'subtype=skills-mount'];
}

/**
 * The FUSE edge this machine can mount with: checks the platform, the device and fusermount3, then
 * loads the libfuse 3 addon (saying from where, with verbose). Throws a ConfigError (exit 2) with
 * one line saying what this platform needs. The first thing a mount does, before any server starts.
 */
export async function chooseBackend(options: Pick<MountOptions, 'log' | 'verbose'> = {}, probes: PlatformProbes = systemProbes()): Promise<FuseBackend> {
  const unavailable = await fuseUnavailable(probes);
  if (unavailable !== undefined) throw new ConfigError(unavailable);
  const addon = await probeAddon();
  if (!addon.loaded) throw new ConfigError(`${addon.reason}; ${ADDON_BUILD_HINT}`);
  if (options.verbose) (options.log ?? defaultLog)(`libfuse 3 addon: ${addon.origin} ${addon.path}`);
  return 'libfuse3';
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
    ...(options.onUnmounted ? { onUnmounted: options.onUnmounted } : {}),
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

function defaultLog(line: string): void {
  process.stderr.write(`skills-mount: ${line}\n`);
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

/** Whether `configPath` (fusermount3's) says user_allow_other, so a user other than root may use allow_other. */
export async function userAllowOther(configPath = '/etc/fuse.conf'): Promise<boolean> {
  const text = await readFile(configPath, 'utf8').catch(() => '');
  return text.split('\n').some((line) => line.trim() === 'user_allow_other');
}

/**
 * fusermount refuses allow_other from a user other than root unless /etc/fuse.conf says
 * user_allow_other; its own message is lost with auto_unmount, so say it before mounting.
 */
export async function checkUserAllowOther(configPath = '/etc/fuse.conf'): Promise<void> {
  if (process.getuid?.() === 0) return;
  if (await userAllowOther(configPath)) return;
  throw new ConfigError(
    `--allow-user needs "user_allow_other" in ${configPath} when the daemon does not run as root ` +
      `(fusermount refuses allow_other otherwise): add that line to ${configPath} as root, or run the daemon as root; see docs/security-model.md`,
  );
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
