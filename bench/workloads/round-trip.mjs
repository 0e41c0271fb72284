// One FUSE round trip per backend: stat(2) of the server's directory on a mount started with
// --metadata-ttl 0, so the kernel asks the daemon every time; the directory sits right under the
// root, so each stat is one lookup and two getattrs (a file deeper down costs a lookup per path
// component). Timed call by call in a separate process, after one stat has looked the name up;
// against local disk. Then pinned with taskset in both vCPU regimes (one vCPU: daemon and caller
// on CPU 0; across: daemon on CPU 0, caller on CPU 1, where each wake crosses vCPUs), against the
// floor: a pure-C libfuse 3 low-level daemon answering the same stat from a table
// (bench/floor/floor-fuse.c, built here), with the FUSE requests per stat that reached the
// daemon's JavaScript and that its addon answered (from --metrics).
import { execFile, spawn } from 'node:child_process';
import { readFile, mkdir, rmdir, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../lib/free-port.mjs';
import { pinned, serveEntry, startMount } from '../lib/mount-child.mjs';
import { FUSE_CLEANUP } from '../lib/paths.mjs';
import { statLatencySamples } from '../lib/readers.mjs';

const FLOOR_SOURCE = fileURLToPath(new URL('../floor/floor-fuse.c', import.meta.url));

/** The pinned regimes, in the table's order; the daemon (and what it starts) on `daemon`, the caller on `caller`. */
export const REGIMES = [
  { id: 'one-vcpu', title: 'one vCPU (daemon and caller on CPU 0)', daemon: '0', caller: '0' },
  { id: 'across-vcpus', title: 'across vCPUs (daemon on CPU 0, caller on CPU 1)', daemon: '0', caller: '1' },
];

/**
 * Resolves stat samples in µs for local disk (the copy's top directory) and per backend, and,
 * per pinned regime, the floor's samples and each backend's with its requests per stat
 * ({js, addon}); `pinned` is {} when the floor cannot be built (no gcc or libfuse3-dev).
 */
export async function measureRoundTrip({ workDir, catalog, count, backends, log = () => undefined }) {
  const byBackend = {};
  for (const backend of backends) {
    const mount = await startMount({ workDir, name: 'round-trip', backend, servers: { [catalog.name]: serveEntry(catalog.dir) }, args: ['--metadata-ttl', '0'] });
    try {
      const onMount = path.join(mount.mountpoint, catalog.name);
      await stat(onMount);
      byBackend[backend] = await statLatencySamples(onMount, count);
    } finally {
      await mount.stop();
    }
  }
  const disk = await statLatencySamples(catalog.diskDir, count);
  const floor = await buildFloor(workDir).catch((error) => log(`round trip: no floor (${error.message.split('\n')[0]}); the pinned rows are left out`));
  const pinnedRuns = {};
  for (const regime of floor ? REGIMES : []) {
    if (Number(regime.caller) >= os.availableParallelism()) {
      log(`round trip: ${regime.id} needs CPU ${regime.caller}; left out`);
      continue;
    }
    const result = { floor: await floorSamples({ workDir, floor, name: catalog.name, count, regime }), byBackend: {} };
    for (const backend of backends) result.byBackend[backend] = await pinnedSamples({ workDir, catalog, count, backend, regime });
    pinnedRuns[regime.id] = result;
  }
  return { disk, byBackend, pinned: pinnedRuns };
}

/** Compiles the floor daemon into the work dir; resolves its path. */
export async function buildFloor(workDir) {
  const binary = path.join(workDir, 'floor-fuse');
  await run('sh', ['-c', `gcc -O2 -o "$1" "$2" $(pkg-config --cflags --libs fuse3)`, 'build', binary, FLOOR_SOURCE]);
  return binary;
}

export async function floorSamples({ workDir, floor, name, count, regime }) {
  const mountpoint = path.join(workDir, `mnt-floor-${regime.id}`);
  await mkdir(mountpoint, { recursive: true });
  const [program, ...args] = pinned([floor, mountpoint, name], regime.daemon);
  const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    await new Promise((resolve, reject) => {
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk) => {
        stderr += chunk;
        if (/^mounted /m.test(stderr)) resolve();
      });
      void exited.then((code) => reject(new Error(`the floor daemon exited (${code}): ${stderr}`)));
    });
    const onMount = path.join(mountpoint, name);
    await stat(onMount);
    return await statLatencySamples(onMount, count, regime.caller);
  } finally {
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    if (await isMounted(mountpoint)) await run('bash', [FUSE_CLEANUP, mountpoint]).catch(() => undefined);
    await rmdir(mountpoint).catch(() => undefined);
  }
}

async function pinnedSamples({ workDir, catalog, count, backend, regime }) {
  const port = await freePort();
  const mount = await startMount({ workDir, name: `round-trip-${regime.id}`, backend, servers: { [catalog.name]: serveEntry(catalog.dir) }, args: ['--metadata-ttl', '0', '--metrics', `127.0.0.1:${port}`], cpus: regime.daemon });
  try {
    const onMount = path.join(mount.mountpoint, catalog.name);
    await stat(onMount);
    const before = await requestTotals(port);
    const samples = await statLatencySamples(onMount, count, regime.caller);
    const after = await requestTotals(port);
    return { samples, perStat: { js: (after.js - before.js) / count, addon: (after.addon - before.addon) / count } };
  } finally {
    await mount.stop();
  }
}

/** FUSE requests the daemon's JavaScript answered, and those its addon answered, so far. */
async function requestTotals(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const sum = (name) => text.split('\n').filter((line) => line.startsWith(`${name}{`)).reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  return { js: sum('skills_mount_fuse_operations_total'), addon: sum('skills_mount_fuse_answered_by_addon_total') };
}


async function isMounted(mountpoint) {
  return (await readFile('/proc/self/mounts', 'utf8')).split('\n').some((line) => line.split(' ')[1] === mountpoint);
}

function run(command, args) {
  return new Promise((resolve, reject) => execFile(command, args, (error, _stdout, stderr) => (error ? reject(new Error(`${command}: ${stderr || error.message}`)) : resolve())));
}
