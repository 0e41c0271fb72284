// The watchdog: a shell beside the daemon, holding one end of a pipe from it, that detaches the
// daemon's mount when the daemon dies without unmounting (SIGKILL, a crash), whoever started it
// and however its output was piped. fusermount3's auto_unmount cannot be relied on for this: it
// probes the mount with open(), which a dead FUSE 3 mount with zero-message opendir answers.
//
// The script never touches the mount: a stat there may be answered from the kernel's attribute
// cache for minutes after the daemon is gone, or hang on a connection nobody serves. It reads the
// mount table, and detaches only the mount it was started for (its mount id and device), and
// only while nothing is mounted on top of it (a restarted daemon's mount is never touched).
import { spawn, type ChildProcess } from 'node:child_process';
import type { MountTableEntry } from './mount-table.js';

/** Which mount the watchdog guards: mountinfo's id and major:minor, fixed for the mount's life. */
export type GuardedMount = Pick<MountTableEntry, 'mountpoint' | 'id' | 'device'>;

export interface Watchdog {
  /** Tells the watchdog the daemon unmounted cleanly: it exits and touches nothing. */
  stop(): void;
}

// $1 mountpoint, $2 mount id, $3 major:minor. "stop" on the pipe: a clean unmount. End of file:
// the daemon died, and its /dev/fuse with it. Aborting the connection (root only; fusectl) frees
// any reader still waiting on it; the lazy unmount takes the mount off the tree.
export const WATCHDOG_SCRIPT = `
if read -r line; then exit 0; fi
abort="/sys/fs/fuse/connections/\${3#*:}/abort"
if [ -w "$abort" ]; then echo 1 > "$abort" 2>/dev/null; fi
if awk -v id="$2" -v dev="$3" '
  $1 == id && $3 == dev { mine = 1; at = $5 }
  mine && $2 == id && $5 == at { covered = 1 }
  END { exit !(mine && !covered) }' /proc/self/mountinfo; then
  fusermount3 -u -z -- "$1" 2>/dev/null || fusermount -u -z -- "$1" 2>/dev/null || umount -l -- "$1" 2>/dev/null
fi
`;

/** Starts the watchdog for `mount`; undefined when no shell can be started (auto_unmount remains). */
export function startWatchdog(mount: GuardedMount): Watchdog | undefined {
  let child: ChildProcess;
  try {
    // Its own session: a signal to the daemon's process group does not take the watchdog with it.
    child = spawn('sh', ['-c', WATCHDOG_SCRIPT, 'skills-mount-watchdog', mount.mountpoint, mount.id, mount.device], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
  } catch {
    return undefined;
  }
  child.on('error', () => undefined);
  child.stdin?.on('error', () => undefined);
  child.unref();
  // The pipe stays open for the daemon's life without keeping its event loop alive.
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return {
    stop() {
      if (child.stdin?.writable) child.stdin.end('stop\n');
    },
  };
}
