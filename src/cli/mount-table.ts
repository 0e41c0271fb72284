// The skills-mount mounts this process can see, from /proc/self/mountinfo. Reads only the
// mount table, never a mount, so it cannot hang on a dead daemon.
import { readFile } from 'node:fs/promises';

/** The filesystem type the kernel reports for our mounts (fsname subtype=skills-mount). */
export const MOUNT_TYPE = 'fuse.skills-mount';

export interface MountTableEntry {
  mountpoint: string;
  fsType: string;
  /** The FUSE connection number (the device minor), for /sys/fs/fuse/connections/N/abort. */
  connection: string;
  options: string;
}

/** Every mount in the table, topmost last. */
export async function readMountTable(table?: string): Promise<MountTableEntry[]> {
  const text = table ?? (await readFile('/proc/self/mountinfo', 'utf8'));
  const entries: MountTableEntry[] = [];
  for (const line of text.split('\n')) {
    // id parent major:minor root mountpoint options [optional...] - fstype source superoptions
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (separator < 0) continue;
    entries.push({
      mountpoint: unescapeField(fields[4] ?? ''),
      fsType: fields[separator + 1] ?? '',
      connection: (fields[2] ?? '').split(':')[1] ?? '',
      options: fields[5] ?? '',
    });
  }
  return entries;
}

/** The skills-mount mounts, one per mountpoint (the topmost), sorted by path. */
export async function skillsMounts(table?: string): Promise<MountTableEntry[]> {
  const topmost = new Map<string, MountTableEntry>();
  for (const entry of await readMountTable(table)) topmost.set(entry.mountpoint, entry);
  return [...topmost.values()].filter((entry) => entry.fsType === MOUNT_TYPE).sort((a, b) => a.mountpoint.localeCompare(b.mountpoint));
}

function unescapeField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}
