// Reads one file of a mount from a `cat` child process with a deadline: a hung mount can
// never hang the command that asks (status, approve), and never the daemon serving it.
import { execFile } from 'node:child_process';

/** The most any file the commands read is allowed to be (skills.json of a very large mount). */
const MAX_FILE_BYTES = 256 * 1024 * 1024;

export type MountReadOutcome = { kind: 'ok'; text: string } | { kind: 'timeout' } | { kind: 'error'; message: string };

export function readMountFile(file: string, timeoutMs: number): Promise<MountReadOutcome> {
  return new Promise((resolve) => {
    execFile(
      'cat',
      [file],
      // SIGKILL: a read blocked in FUSE ends only on a fatal signal.
      { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: MAX_FILE_BYTES, env: { ...process.env, LC_ALL: 'C' } },
      (error, stdout, stderr) => {
        if (error === null) return resolve({ kind: 'ok', text: stdout });
        if (error.killed) return resolve({ kind: 'timeout' });
        // "cat: FILE: Transport endpoint is not connected": keep the reason (FILE may hold colons).
        const first = stderr.trim().split('\n')[0] ?? '';
        const message = first.includes(': ') ? first.slice(first.lastIndexOf(': ') + 2) : first || error.message;
        resolve({ kind: 'error', message });
      },
    );
  });
}

export type MountListingOutcome = 'present' | 'absent' | 'timeout';

/**
 * Whether directory `dir` of a mount lists `name` now, from an `ls -A` child process with a
 * deadline. A listing, not a stat, so the answer never rests on a name the kernel cached (the
 * libfuse 2 edge, removed in 0.2.0, let the kernel keep one for --metadata-ttl).
 * A directory that cannot be listed lists nothing.
 */
export function mountListingState(dir: string, name: string, timeoutMs: number): Promise<MountListingOutcome> {
  return new Promise((resolve) => {
    execFile('ls', ['-A', dir], { timeout: timeoutMs, killSignal: 'SIGKILL', env: { ...process.env, LC_ALL: 'C' } }, (error, stdout) => {
      if (error === null) return resolve(stdout.split('\n').includes(name) ? 'present' : 'absent');
      resolve(error.killed ? 'timeout' : 'absent');
    });
  });
}
