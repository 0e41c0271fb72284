// The fstab form's daemon in the background: mount(8) waits for its helper to exit, so the helper
// starts the same mount again as a detached child (--foreground), its lines going to a log file,
// and exits 0 only once the child says the mount is ready (a line on a pipe), or nonzero with the
// child's last lines when it ended first. The child's side is signalReady().
import { spawn } from 'node:child_process';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { errorMessage } from '../private-files.js';

/** The environment variable that names the child's end of the readiness pipe. */
const READY_FD_ENV = 'SKILLS_MOUNT_READY_FD';
/** How long the helper waits for the mount: the startup deadline, the kernel's, and a margin. */
const WAIT_MARGIN_MS = 20_000;
const LAST_LINES = 5;
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Starts `skills-mount ARGS --foreground` detached, its output appended to the log file, and
 * resolves the exit code for mount(8): 0 once it is mounted, 1 (saying why) when it is not.
 */
export async function mountInBackground(argv: readonly string[], options: { mountpoint: string; logFile: string | undefined; startupTimeoutMs: number }): Promise<number> {
  const logFile = path.resolve(options.logFile ?? defaultLogFile(options.mountpoint));
  const log = openLog(logFile);
  // What this start writes follows what earlier ones left: only that is quoted on failure.
  const startOffset = fstatSync(log).size;
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...argv, '--foreground'], {
    detached: true,
    stdio: ['ignore', log, log, 'pipe'],
    // mount.fuse3 runs its helper through /bin/sh with no PATH in the environment (the shell's own default is not exported): the daemon needs one to find fusermount3.
    env: { ...process.env, PATH: process.env['PATH'] || SYSTEM_PATH, [READY_FD_ENV]: '3' },
  });
  closeSync(log);
  const ready = child.stdio[3] as NodeJS.ReadableStream;
  return new Promise<number>((resolve) => {
    let said = '';
    const finish = (code: number, line: string): void => {
      clearTimeout(timer);
      ready.removeAllListeners();
      child.removeAllListeners();
      (ready as unknown as { destroy(): void }).destroy();
      child.unref();
      process.stderr.write(`skills-mount: ${line}\n`);
      resolve(code);
    };
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      finish(1, `${options.mountpoint} was not mounted within ${Math.round((options.startupTimeoutMs + WAIT_MARGIN_MS) / 1000)} s; stopped it (its log: ${logFile})`);
    }, options.startupTimeoutMs + WAIT_MARGIN_MS);
    ready.on('data', (chunk: Buffer) => {
      said += chunk.toString('utf8');
      if (said.includes('ready\n')) finish(0, `mounted ${options.mountpoint} (daemon pid ${child.pid}; log ${logFile}; umount ${options.mountpoint} stops it)`);
    });
    child.once('exit', (code, signal) => {
      const why = lastLines(logFile, startOffset);
      finish(code === null || code === 0 ? 1 : code, `${options.mountpoint} was not mounted: the daemon ended (${signal ?? `exit ${code}`})${why ? `: ${why}` : ''} (its log: ${logFile})`);
    });
  });
}

/** In the background daemon: tells the waiting helper the mount is ready (nothing when run otherwise). */
export function signalReady(env: NodeJS.ProcessEnv = process.env): void {
  const fd = Number(env[READY_FD_ENV]);
  delete env[READY_FD_ENV];
  if (!Number.isInteger(fd) || fd < 3) return;
  try {
    writeSync(fd, 'ready\n');
    closeSync(fd);
  } catch {
    // The helper is gone (killed, or timed out): the mount serves all the same.
  }
}

/** `$XDG_STATE_HOME/skills-mount/mounts/<mountpoint, / as ->.log` (~/.local/state when unset). */
export function defaultLogFile(mountpoint: string, env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  const state = env['XDG_STATE_HOME'] && path.isAbsolute(env['XDG_STATE_HOME']) ? env['XDG_STATE_HOME'] : path.join(home, '.local', 'state');
  const name = path.resolve(mountpoint).replace(/^\/+/, '').replace(/\//g, '-') || 'root';
  return path.join(state, 'skills-mount', 'mounts', `${name}.log`);
}

/** The log, appended to: made 0600 in a folder made 0700; never through a symbolic link. */
function openLog(file: string): number {
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    return openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    throw new ConfigError(`the log file ${file} cannot be opened: ${errorMessage(error)} (-o log=FILE names another)`);
  }
}

function lastLines(file: string, from: number): string {
  try {
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    const size = fstatSync(fd).size;
    const start = Math.max(from, size - 64 * 1024);
    const buffer = Buffer.alloc(Math.max(0, size - start));
    readSync(fd, buffer, 0, buffer.length, start);
    closeSync(fd);
    const lines = buffer.toString('utf8').trimEnd().split('\n');
    return lines.slice(-LAST_LINES).map((line) => line.replace(/^skills-mount: /, '')).join(' | ');
  } catch {
    return '';
  }
}
