// What this machine offers a mount, probed without loading anything: the platform, the FUSE
// device, fusermount3, and (only when asked) the libfuse 3 addon and where it came from. Every
// probe is injectable, so the mount's refusal and doctor's checks are tested with any piece missing.
import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';

/** Set to 1, the FUSE device counts as unusable (the no-FUSE test pass; a stand-in for macOS). */
export const NO_FUSE_ENV = 'SKILLS_MOUNT_NO_FUSE';
export const FUSE_DEVICE = '/dev/fuse';
const NO_FUSE_ALTERNATIVE = 'skills-mount snapshot DIR or skills-mount link work without FUSE';

/** What the probes found about the FUSE device. */
export type DeviceState = 'usable' | 'missing' | 'no-access' | 'disabled';

/** The probes platform checks use; the defaults look at this process and machine. */
export interface PlatformProbes {
  platform: NodeJS.Platform;
  arch: string;
  env: NodeJS.ProcessEnv;
  uid: number | undefined;
  /** Whether `file` exists (fs.stat succeeds). */
  exists(file: string): Promise<boolean>;
  /** Whether this user may read and write `file`. */
  readWrite(file: string): Promise<boolean>;
  /** The first executable `name` on PATH, or undefined. */
  which(name: string): Promise<string | undefined>;
}

/** The probes of this process and machine. */
export function systemProbes(env: NodeJS.ProcessEnv = process.env): PlatformProbes {
  return {
    platform: process.platform,
    arch: process.arch,
    env,
    uid: process.getuid?.(),
    exists: (file) => stat(file).then(
      () => true,
      () => false,
    ),
    readWrite: (file) => access(file, fsConstants.R_OK | fsConstants.W_OK).then(
      () => true,
      () => false,
    ),
    which: (name) => findOnPath(name, env['PATH'] ?? ''),
  };
}

/** The FUSE device's state: a non-root user needs read and write (fusermount3 opens it as them). */
export async function deviceState(probes: PlatformProbes): Promise<DeviceState> {
  if (probes.env[NO_FUSE_ENV] === '1') return 'disabled';
  if (!(await probes.exists(FUSE_DEVICE))) return 'missing';
  if (probes.uid !== 0 && !(await probes.readWrite(FUSE_DEVICE))) return 'no-access';
  return 'usable';
}

/**
 * Why a mount cannot work here, in one line saying what to do; undefined when the platform, the
 * device and fusermount3 are in place. The addon is not loaded here (mountability comes first).
 */
export async function fuseUnavailable(probes: PlatformProbes): Promise<string | undefined> {
  if (probes.platform === 'darwin') {
    return `mounting needs FUSE, which macOS has only through macFUSE, and this release mounts on Linux only; ${NO_FUSE_ALTERNATIVE}`;
  }
  if (probes.platform === 'win32') return `mounting needs FUSE, which Windows does not have; ${NO_FUSE_ALTERNATIVE}`;
  if (probes.platform !== 'linux') return `mounting needs Linux's FUSE (this is ${probes.platform}); ${NO_FUSE_ALTERNATIVE}`;
  const device = await deviceState(probes);
  if (device === 'disabled') return `FUSE is turned off here (${NO_FUSE_ENV}=1); ${NO_FUSE_ALTERNATIVE}`;
  if (device === 'missing') {
    return `${FUSE_DEVICE} does not exist: load the module (sudo modprobe fuse), or in a container add --device /dev/fuse --cap-add SYS_ADMIN; ${NO_FUSE_ALTERNATIVE}`;
  }
  if (device === 'no-access') {
    return `this user cannot open ${FUSE_DEVICE}: it must be readable and writable (mode 0666, as Debian's udev rule sets it: sudo chmod 0666 /dev/fuse), or mount as root; ${NO_FUSE_ALTERNATIVE}`;
  }
  if ((await probes.which('fusermount3')) === undefined) {
    return `fusermount3 is not on PATH (it mounts and unmounts for the daemon): install Debian/Ubuntu's fuse3 (sudo apt-get install fuse3); ${NO_FUSE_ALTERNATIVE}`;
  }
  return undefined;
}

/** Where the libfuse 3 addon came from, or why none loads. */
export type AddonReport = { loaded: true; origin: 'override' | 'source-build' | 'prebuild'; path: string } | { loaded: false; reason: string };

/** Loads the addon (only here, lazily) and says from where; never throws. */
export async function probeAddon(): Promise<AddonReport> {
  try {
    const { loadAddonFrom } = await import('./lowlevel/addon.js');
    const { origin, path: file } = loadAddonFrom();
    return { loaded: true, origin, path: file };
  } catch (error) {
    return { loaded: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** What to do when no addon loads (no prebuild for this platform and arch, or a broken one). */
export const ADDON_BUILD_HINT =
  'build it from source: in a checkout scripts/setup.sh, in an installed package npm explore -g skills-mount -- npm run build-native (needs libfuse3-dev, pkg-config and a C compiler)';

async function findOnPath(name: string, searchPath: string): Promise<string | undefined> {
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      await access(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // Not in this PATH entry.
    }
  }
  return undefined;
}
