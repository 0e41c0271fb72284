// Runs skills-mount as a child process (never in the benchmark's own process) on a given FUSE
// backend, times how long it takes to be ready, keeps its log lines with their arrival times,
// reads its memory from /proc, and always unmounts.
import { execFile, spawn } from 'node:child_process';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FUSE_CLEANUP, SKILLS_MOUNT, SKILLS_SERVE } from './paths.mjs';

const READY_PATTERN = /mounted /;
/** Backends beside skills-mount's own --fuse-backend values: libfuse3 with one of its switches (env) set. */
const VARIANTS = {
  // The open model it does not use by default (docs/fuse-edge.md says why).
  'libfuse3-zero-message-open': { backend: 'libfuse3', env: { SKILLS_MOUNT_ZERO_MESSAGE_OPEN: '1' } },
  // The addon's table of pushed names off: every lookup, getattr and listing answered in JS, as before it.
  'libfuse3-no-table': { backend: 'libfuse3', env: { SKILLS_MOUNT_ADDON_TABLE: '0' } },
  // The addon's opens of disk-cached copies off: every open after a restart answered in JS, as before them.
  'libfuse3-no-copies': { backend: 'libfuse3', env: { SKILLS_MOUNT_ADDON_COPIES: '0' } },
};
const STOP_GRACE_MS = 5_000;
const live = new Set();

/** A stdio server entry for the mount's config: `skills-serve DIR ...flags`. */
export function serveEntry(dir, ...flags) {
  return { command: process.execPath, args: [SKILLS_SERVE, dir, '--lenient', ...flags] };
}

/**
 * The same, with skills-serve's --verbose log appended to `logFile` by the server itself
 * (synchronously, before each response is sent), so counts are exact when an operation returns.
 */
export function loggedServeEntry(dir, logFile, ...flags) {
  return { command: '/bin/sh', args: ['-c', `exec "$@" 2>>'${logFile}'`, 'sh', process.execPath, SKILLS_SERVE, dir, '--verbose', '--lenient', ...flags] };
}

/**
 * Starts `skills-mount WORKDIR/mnt-NAME-BACKEND --config ... --fuse-backend BACKEND` serving
 * `servers` ({label: entry}) and resolves once it says it is mounted, with the time that took.
 * `cpus` (a taskset list, e.g. "0"): the daemon and what it starts run on those CPUs only.
 * `nodeArgs`: flags for the daemon's node (e.g. --cpu-prof, which NODE_OPTIONS does not take).
 */
export async function startMount({ workDir, name, backend, servers, args = [], readyTimeoutMs = 600_000, env = process.env, cpus, nodeArgs = [] }) {
  const mountpoint = path.join(workDir, `mnt-${name}-${backend}`);
  const configPath = path.join(workDir, `config-${name}-${backend}.json`);
  await mkdir(workDir, { recursive: true });
  await writeFile(configPath, JSON.stringify({ mcpServers: servers }));
  const startedMs = performance.now();
  // Cold reads measure the server: the disk cache only where a workload asks for it (--cache-dir).
  const cacheArgs = args.includes('--cache-dir') ? [] : ['--no-disk-cache'];
  const variant = VARIANTS[backend];
  const command = [process.execPath, ...nodeArgs, SKILLS_MOUNT, mountpoint, '--config', configPath, '--fuse-backend', variant?.backend ?? backend, ...cacheArgs, ...args];
  const [program, ...programArgs] = pinned(command, cpus);
  const child = spawn(program, programArgs, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: variant ? { ...env, ...variant.env } : env,
  });
  let stderr = '';
  // Each complete line with the time it reached this process: when the mount learned of something.
  const lines = [];
  let partial = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  const mount = {
    mountpoint,
    pid: child.pid,
    readyMs: Number.NaN,
    log: () => stderr,
    /** The lines logged so far, as {atMs (performance.now() on arrival), text}. */
    lines: () => lines,
    stop: () => stopChild(child, exited, mountpoint),
  };
  live.add(mount);
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`skills-mount ${name} (${backend}) not ready within ${readyTimeoutMs} ms:\n${tail(stderr)}`)), readyTimeoutMs);
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      const atMs = performance.now();
      stderr += chunk;
      const complete = (partial + chunk).split('\n');
      partial = complete.pop();
      for (const text of complete) lines.push({ atMs, text });
      if (READY_PATTERN.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`skills-mount ${name} (${backend}) exited (${code}) before it was mounted:\n${tail(stderr)}`));
    });
  });
  try {
    await ready;
  } catch (error) {
    await mount.stop();
    throw error;
  }
  mount.readyMs = performance.now() - startedMs;
  return mount;
}

async function stopChild(child, exited, mountpoint) {
  for (const mount of live) if (mount.mountpoint === mountpoint) live.delete(mount);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const outcome = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('timeout'), STOP_GRACE_MS))]);
  if (outcome === 'timeout') child.kill('SIGKILL');
  // Only this mount's own directory: other people's mounts are none of our business.
  if (await isMounted(mountpoint)) await run('bash', [FUSE_CLEANUP, mountpoint]);
  await rmdir(mountpoint).catch(() => undefined);
}

/** `command` run on the CPUs `cpus` (taskset, which execs it: the pid stays the command's), or as is. */
export function pinned(command, cpus) {
  return cpus === undefined ? command : ['taskset', '-c', cpus, ...command];
}

/** Stops every mount still running (on errors and signals). */
export async function stopAllMounts() {
  await Promise.all([...live].map((mount) => mount.stop().catch(() => undefined)));
}

/** VmRSS and VmHWM of a process, in KiB. */
export async function memoryOf(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(status)?.[1]);
  return { vmRssKiB: kib('VmRSS'), vmHwmKiB: kib('VmHWM') };
}

async function isMounted(mountpoint) {
  const mounts = await readFile('/proc/self/mounts', 'utf8');
  return mounts.split('\n').some((line) => line.split(' ')[1] === mountpoint);
}

function run(command, args) {
  return new Promise((resolve) => execFile(command, args, () => resolve()));
}

function tail(text) {
  return text.split('\n').slice(-20).join('\n');
}
