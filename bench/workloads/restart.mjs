// Reads after a restart, served from the verified disk cache, on each FUSE backend: one mount per
// backend reads every file (filling that backend's cache), then each run starts a fresh daemon on
// the same mountpoint and cache and reads everything again; local disk is read once per run, and
// the order of disk and backends is reversed from one run to the next. Requests are counted at the server.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { loggedServeEntry, startMount } from '../lib/mount-child.mjs';
import { requestWindow } from '../lib/request-log.mjs';
import { differingFiles, readFiles } from '../lib/readers.mjs';
import { timed } from '../lib/stats.mjs';

/**
 * Resolves per catalog: samples (ms) of local disk and, per backend, samples of the mount after a
 * restart and its request counts.
 */
export async function measureRestart({ workDir, catalogs, runs, backends, log }) {
  const results = {};
  for (const catalog of catalogs) {
    const name = `restart-${catalog.name}`;
    const setups = {};
    for (const backend of backends) {
      const cacheDir = path.join(workDir, `disk-cache-${catalog.name}-${backend}`);
      const logFile = path.join(workDir, `restart-${catalog.name}-${backend}-server.log`);
      setups[backend] = { logFile, servers: { [catalog.name]: loggedServeEntry(catalog.dir, logFile) }, args: ['--cache-dir', cacheDir] };
      const filling = await startMount({ workDir, name, backend, ...setups[backend] });
      try {
        await readFiles(path.join(filling.mountpoint, catalog.name), catalog.files, 1);
        await waitForCache(cacheDir, catalog.totalBytes);
      } finally {
        await filling.stop();
      }
    }
    const result = { disk: [], files: catalog.files.length, byBackend: Object.fromEntries(backends.map((backend) => [backend, { samples: [], requests: undefined }])) };
    const readRestarted = async (backend) => {
      const { logFile, ...setup } = setups[backend];
      const mount = await startMount({ workDir, name, backend, ...setup });
      try {
        const root = path.join(mount.mountpoint, catalog.name);
        const window = await requestWindow(logFile);
        result.byBackend[backend].samples.push((await timed(() => readFiles(root, catalog.files, 1))).ms);
        result.byBackend[backend].requests = await window.counts();
        const differing = await differingFiles(root, catalog.diskDir, catalog.files.map((file) => file.path));
        if (differing.length > 0) throw new Error(`after a restart the mount (${backend}) serves different bytes than disk for ${differing.length} files, e.g. ${differing[0]}`);
      } finally {
        await mount.stop();
      }
    };
    for (let run = 0; run < runs; run++) {
      const steps = [async () => result.disk.push((await timed(() => readFiles(catalog.diskDir, catalog.files, 1))).ms), ...backends.map((backend) => () => readRestarted(backend))];
      for (const step of run % 2 === 0 ? steps : steps.reverse()) await step();
      log(`restart: ${catalog.name} run ${run + 1}/${runs} done`);
    }
    results[catalog.name] = result;
  }
  return results;
}

/** The cache is written in the background: wait (up to 30 s) until it holds about the catalog's bytes. */
async function waitForCache(cacheDir, totalBytes) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if ((await treeBytes(cacheDir)) >= totalBytes * 0.99) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function treeBytes(dir) {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (entry.isFile() && !entry.name.endsWith('.json') && !entry.name.startsWith('.')) total += (await stat(path.join(entry.parentPath ?? entry.path, entry.name))).size;
  }
  return total;
}
