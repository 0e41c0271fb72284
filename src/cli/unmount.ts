// `skills-mount unmount MOUNTPOINT`: stops the daemon serving a live mount (SIGTERM, its
// clean stop), and removes a stale or hung one (abort its FUSE connection, lazy unmount).
import { access, readFile, writeFile } from 'node:fs/promises';
import { constants as fsConstants } from 'node:fs';
import { MOUNT_TYPE, canonicalMountpoint, detachMount, findMount, skillsMounts } from '../fuse/index.js';
import { DEFAULT_PROBE_TIMEOUT_MS, NotMountedError, probeMount } from './status.js';

const STOP_WAIT_MS = 5_000;
const POLL_MS = 100;
/** Per detach command: a person waits on this, so it may take longer than the daemon's own unmount. */
const DETACH_COMMAND_TIMEOUT_MS = 2_000;

/** Unmounts `dir`; resolves a one-line account of what was done. Throws NotMountedError, MountError (detaching failed) or Error. */
export async function unmount(dir: string, probeTimeoutMs = DEFAULT_PROBE_TIMEOUT_MS): Promise<string> {
  const mountpoint = await canonicalMountpoint(dir);
  const entry = (await skillsMounts()).find((mount) => mount.mountpoint === mountpoint);
  if (!entry) {
    const other = await findMount(mountpoint);
    if (other) throw new NotMountedError(`${mountpoint} is a ${other.fsType} mount, not skills-mount (${MOUNT_TYPE}); not touching it`);
    throw new NotMountedError(`nothing is mounted at ${mountpoint}`);
  }
  const probe = await probeMount(mountpoint, probeTimeoutMs);
  if (probe.state === 'ok' && probe.pid !== undefined && (await isSkillsMountProcess(probe.pid))) {
    process.kill(probe.pid, 'SIGTERM');
    if (await gone(mountpoint, STOP_WAIT_MS)) return `unmounted ${mountpoint} (stopped skills-mount, pid ${probe.pid})`;
  }
  if (probe.state === 'not-responding' || probe.state === 'ok') await abortConnection(entry.connection);
  await detachMount(mountpoint, { commandTimeoutMs: DETACH_COMMAND_TIMEOUT_MS });
  if (!(await gone(mountpoint, STOP_WAIT_MS))) throw new Error(`${mountpoint} is still mounted after fusermount -uz; try as root: umount -l ${mountpoint}`);
  const what = probe.state === 'stale' ? 'removed the stale mount' : probe.state === 'not-responding' ? 'removed the mount that was not responding' : 'unmounted';
  return `${what} ${mountpoint}`;
}

async function isSkillsMountProcess(pid: number): Promise<boolean> {
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  return cmdline.includes('skills-mount');
}

async function gone(mountpoint: string, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (!(await skillsMounts()).some((mount) => mount.mountpoint === mountpoint)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Fails every request pending on a hung daemon, so nothing stays blocked on the mount. */
async function abortConnection(connection: string): Promise<void> {
  const file = `/sys/fs/fuse/connections/${connection}/abort`;
  if (connection === '' || !(await access(file, fsConstants.W_OK).then(() => true, () => false))) return;
  await writeFile(file, '1').catch(() => undefined);
}
