// Child processes a test started: how they exited, and stopping them so that none outlives
// the test (a polite signal first, SIGKILL when it is ignored).
import type { ChildProcess } from 'node:child_process';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StopOptions {
  /** The first signal (default SIGTERM). */
  signal?: NodeJS.Signals;
  /** How long the child may take to exit before SIGKILL (default 5 s). */
  graceMs?: number;
}

/** Resolves how `child` exited; at once when it already has. */
export function exitOf(child: ChildProcess): Promise<ChildExit> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Sends `signal` (SIGTERM), then SIGKILL if `child` has not exited within `graceMs`; resolves how it exited. */
export async function stopChild(child: ChildProcess, { signal = 'SIGTERM', graceMs = 5_000 }: StopOptions = {}): Promise<ChildExit> {
  const exited = exitOf(child);
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Whether a process with this pid exists (signal 0 delivers nothing). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The environment for a daemon under test: with SKILLS_FUSE_SANITIZER_PRELOAD set (the
 * sanitizer pass of scripts/test.sh), the sanitizer runtimes are preloaded into the daemon
 * (and what it starts) only, never into the ordinary tools a test runs against the mount.
 */
export function daemonEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const preload = process.env['SKILLS_FUSE_SANITIZER_PRELOAD'];
  return preload ? { ...env, LD_PRELOAD: preload } : env;
}
