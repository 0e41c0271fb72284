// The kernel's mount table as skills-mount sees it: which mounts exist (/proc/self/mountinfo),
// the path a directory has there, and taking a mount off it lazily. Reads the table, never
// a mount, so nothing here can hang on a dead daemon. Shared by the daemon and the CLI.
import { execFile } from 'node:child_process';
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { MountError } from './mount-error.js';

/** The filesystem type the kernel reports for our mounts (fsname subtype=skills-mount). */
export const MOUNT_TYPE = 'fuse.skills-mount';

/** How long `fusermount -uz` / `umount -l` may take by default; the daemon's unmount budget is about 2 s. */
const DEFAULT_DETACH_COMMAND_TIMEOUT_MS = 500;

export interface MountTableEntry {
  /** The kernel's id of this mount (mountinfo's first field): unique while it is mounted. */
  id: string;
  /** The id of the mount it sits on. */
  parentId: string;
  /** major:minor of its filesystem; for FUSE, minor is the connection number. */
  device: string;
  mountpoint: string;
  fsType: string;
  /** What was mounted ("skills-mount" for ours, a device or a host for others), for messages. */
  source: string;
  /** The FUSE connection number (the device minor), for /sys/fs/fuse/connections/N/abort. */
  connection: string;
  options: string;
}

/** Every mount in the table, topmost last; `table` is mountinfo text (default: this process's). */
export async function readMountTable(table?: string): Promise<MountTableEntry[]> {
  const text = table ?? (await readFile('/proc/self/mountinfo', 'utf8'));
  const entries: MountTableEntry[] = [];
  for (const line of text.split('\n')) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (separator < 0) continue;
    entries.push({
      id: fields[0] ?? '',
      parentId: fields[1] ?? '',
      device: fields[2] ?? '',
      mountpoint: unescapeField(fields[4] ?? ''),
      fsType: fields[separator + 1] ?? '',
      source: unescapeField(fields[separator + 2] ?? ''),
      connection: (fields[2] ?? '').split(':')[1] ?? '',
      options: fields[5] ?? '',
    });
  }
  return entries;
}

/**
 * The topmost mount at exactly `mountpoint` (a canonicalMountpoint), of any type; undefined
 * when there is none, or when the table cannot be read (no /proc): then nothing is known mounted.
 */
export async function findMount(mountpoint: string, table?: string): Promise<MountTableEntry | undefined> {
  const entries = await readMountTable(table).catch(() => []);
  return entries.filter((entry) => entry.mountpoint === mountpoint).at(-1);
}

/** The mount a path lies on (the topmost at the longest mountpoint that contains it); undefined without a table. */
export async function mountOf(file: string, table?: string): Promise<MountTableEntry | undefined> {
  const entries = await readMountTable(table).catch(() => []);
  let found: MountTableEntry | undefined;
  for (const entry of entries) {
    const inside = entry.mountpoint === '/' || file === entry.mountpoint || file.startsWith(`${entry.mountpoint}/`);
    if (inside && (found === undefined || entry.mountpoint.length >= found.mountpoint.length)) found = entry;
  }
  return found;
}

/** The skills-mount mounts, one per mountpoint (the topmost), sorted by path. */
export async function skillsMounts(table?: string): Promise<MountTableEntry[]> {
  const topmost = new Map<string, MountTableEntry>();
  for (const entry of await readMountTable(table)) topmost.set(entry.mountpoint, entry);
  return [...topmost.values()].filter((entry) => entry.fsType === MOUNT_TYPE).sort((a, b) => a.mountpoint.localeCompare(b.mountpoint));
}

/**
 * `dir` as the mount table spells it: absolute, with the parent's symlinks resolved. The
 * mountpoint itself is never resolved (or touched): it may be a dead or hung mount.
 */
export async function canonicalMountpoint(dir: string): Promise<string> {
  const absolute = path.resolve(dir);
  const parent = await realpath(path.dirname(absolute)).catch(() => path.dirname(absolute));
  return path.join(parent, path.basename(absolute));
}

export interface DetachOptions {
  /** How long each of `fusermount -uz` and `umount -l` may run. */
  commandTimeoutMs?: number;
}

/**
 * Lazy unmount: `fusermount -uz` (any user's own FUSE mount), else `umount -l` (root).
 * Succeeds when nothing is mounted there any more; else throws MountError with both reasons.
 */
export async function detachMount(mountpoint: string, options: DetachOptions = {}): Promise<void> {
  const timeoutMs = options.commandTimeoutMs ?? DEFAULT_DETACH_COMMAND_TIMEOUT_MS;
  const failures: string[] = [];
  for (const [command, args] of [
    ['fusermount', ['-uz', mountpoint]],
    ['umount', ['-l', mountpoint]],
  ] as const) {
    const failure = await run(command, args, timeoutMs);
    if (failure === undefined) return;
    failures.push(`${command}: ${failure}`);
  }
  if ((await findMount(mountpoint)) === undefined) return;
  throw new MountError(`cannot unmount ${mountpoint}: ${failures.join('; ')}`);
}

/** Runs a command; resolves undefined on success, else why it failed (its stderr, if any). */
function run(command: string, args: readonly string[], timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs }, (error, _stdout, stderr) => {
      resolve(error === null ? undefined : stderr.trim() || error.message.trim());
    });
  });
}

/** mountinfo escapes space, tab, newline and backslash as \ooo octal. */
function unescapeField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}
