// A look through the mount from a child process with a deadline: the daemon serves the mount
// from this very process, so touching it here would wait on itself. The child is killed with
// SIGKILL at the deadline (a call blocked in FUSE ends on nothing less).
import { execFile } from 'node:child_process';

export type ProbeOutcome = { kind: 'ok' } | { kind: 'timeout' } | { kind: 'error'; message: string };

/** One probe; resolves (never rejects) within about its deadline. */
export type MountProbe = () => Promise<ProbeOutcome>;

/** Runs `command args...` as the probe: exit 0 is ok; its last stderr words are the error. */
export function childProbe(command: string, args: readonly string[], timeoutMs: number): MountProbe {
  return () =>
    new Promise((resolve) => {
      execFile(command, args, { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 1024 * 1024, env: { ...process.env, LC_ALL: 'C' } }, (error, _stdout, stderr) => {
        if (error === null) return resolve({ kind: 'ok' });
        if (error.killed) return resolve({ kind: 'timeout' });
        // "stat: cannot statx 'X': Transport endpoint is not connected": keep the reason.
        const first = stderr.trim().split('\n')[0] ?? '';
        resolve({ kind: 'error', message: first.includes(': ') ? first.slice(first.lastIndexOf(': ') + 2) : first || error.message });
      });
    });
}

/** `stat MOUNTPOINT`: the root's attributes, which need no permission on the mount itself. */
export function statProbe(mountpoint: string, timeoutMs: number): MountProbe {
  return childProbe('stat', ['--', mountpoint], timeoutMs);
}
