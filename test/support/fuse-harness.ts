// Test helpers for real kernel mounts: runs ordinary tools asynchronously, serves the
// fixture filesystem from a child process (never from the test process) and cleans up.

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { access, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { daemonEnv, exitOf, stopChild, type ChildExit } from './children.js';
import { waitFor } from './poll.js';

// Re-exported for the tests that import it from here; new code imports it from poll.ts.
export { waitFor };

const FIXTURE = fileURLToPath(new URL('./fuse-fixture-mount.mjs', import.meta.url));
const BUILT_MOUNT = fileURLToPath(new URL('../../dist/fuse/mount.js', import.meta.url));
const CLEANUP_SCRIPT = fileURLToPath(new URL('../../scripts/fuse-cleanup.sh', import.meta.url));

export interface RunResult<T = string> {
  code: number | null;
  errno: string | undefined;
  stdout: T;
  stderr: string;
}

/** Runs a command without a shell; never rejects (inspect `code`, `errno`, `stderr`). */
export function run(command: string, args: readonly string[], timeoutMs = 10_000): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: 8 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: exitCode(error), errno: errnoCode(error), stdout, stderr });
    });
  });
}

/** Like run, with stdout as bytes. */
export function runBytes(command: string, args: readonly string[], timeoutMs = 10_000): Promise<RunResult<Buffer>> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { timeout: timeoutMs, maxBuffer: 8 * 1024 * 1024, encoding: 'buffer' },
      (error, stdout, stderr) => {
        resolve({ code: exitCode(error), errno: errnoCode(error), stdout, stderr: stderr.toString() });
      },
    );
  });
}

/** Fails with a clear message when the TypeScript build the fixture imports is missing. */
export async function assertBuilt(): Promise<void> {
  try {
    await access(BUILT_MOUNT);
  } catch {
    throw new Error(`${BUILT_MOUNT} is missing: run \`npx tsc -p .\` before the FUSE e2e tests`);
  }
}

export type FixtureExit = ChildExit;

/** The fixture filesystem served by a child process. */
export class FixtureMount {
  readonly exited: Promise<FixtureExit>;
  stdout = '';
  stderr = '';
  readonly #child: ChildProcess;

  private constructor(readonly mountpoint: string, env: Record<string, string>) {
    this.#child = spawn(process.execPath, [FIXTURE, mountpoint], {
      env: daemonEnv({ ...process.env, ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (this.stdout += chunk));
    this.#child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = exitOf(this.#child);
  }

  /** Spawns the fixture; call ready() to wait for the mount. */
  static start(mountpoint: string, env: Record<string, string> = {}): FixtureMount {
    return new FixtureMount(mountpoint, env);
  }

  /** Resolves when the fixture printed "ready"; rejects if it exits first. */
  async ready(timeoutMs = 15_000): Promise<void> {
    const exitedEarly = this.exited.then((exit) => {
      throw new Error(`fixture exited (${exit.code ?? exit.signal}) before ready:\n${this.stderr}`);
    });
    await Promise.race([waitFor(() => /^ready /m.test(this.stdout), timeoutMs, 'fixture ready'), exitedEarly]);
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  kill(signal: NodeJS.Signals): void {
    if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill(signal);
  }

  /** SIGTERM, then SIGKILL if the child has not exited within `graceMs`. */
  stop(graceMs = 5_000): Promise<FixtureExit> {
    return stopChild(this.#child, { graceMs });
  }
}

/** Mount entries (from /proc/mounts) at or below `dir`. */
export async function mountsUnder(dir: string): Promise<{ source: string; mountpoint: string; type: string; options: string[] }[]> {
  const table = await readFile('/proc/mounts', 'utf8');
  return table
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields.length >= 4)
    .map(([source = '', mountpoint = '', type = '', options = '']) => ({
      source,
      mountpoint: mountpoint.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))),
      type,
      options: options.split(','),
    }))
    .filter((entry) => entry.mountpoint === dir || entry.mountpoint.startsWith(`${dir}/`));
}

/** Aborts and lazily unmounts every FUSE mount under `dir`, stale or live. */
export async function cleanupMounts(dir: string): Promise<void> {
  await run(CLEANUP_SCRIPT, [dir], 20_000);
}

function exitCode(error: (Error & { code?: unknown }) | null): number | null {
  if (error === null) return 0;
  return typeof error.code === 'number' ? error.code : null;
}

function errnoCode(error: (Error & { code?: unknown }) | null): string | undefined {
  return error !== null && typeof error.code === 'string' ? error.code : undefined;
}
