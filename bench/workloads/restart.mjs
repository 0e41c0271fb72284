// Reads after a restart, served from the verified disk cache: one mount reads every file
// (filling the cache), then each run starts a fresh daemon on the same mountpoint and cache
// and reads everything again, against local disk; requests are counted at the server.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { loggedServeEntry, startMount } from '../lib/mount-child.mjs';
import { requestWindow } from '../lib/request-log.mjs';
import { differingFiles, readFiles } from '../lib/readers.mjs';
import { timed } from '../lib/stats.mjs';

/** Resolves per catalog: samples (ms) of the mount after a restart and of local disk, and request counts. */
export async function measureRestart({ workDir, catalogs, runs, log }) {
  const results = {};
  for (const catalog of catalogs) {
    const cacheDir = path.join(workDir, `disk-cache-${catalog.name}`);
    const logFile = path.join(workDir, `restart-${catalog.name}-server.log`);
    const servers = { [catalog.name]: loggedServeEntry(catalog.dir, logFile) };
    const args = ['--cache-dir', cacheDir];
    const name = `restart-${catalog.name}`;
    const filling = await startMount({ workDir, name, servers, args });
    try {
      await readFiles(path.join(filling.mountpoint, catalog.name), catalog.files, 1);
      await waitForCache(cacheDir, catalog.totalBytes);
    } finally {
      await filling.stop();
    }
    const samples = { mount: [], disk: [] };
    let requests;
    for (let run = 0; run < runs; run++) {
      const mount = await startMount({ workDir, name, servers, args });
      try {
        const root = path.join(mount.mountpoint, catalog.name);
        const window = await requestWindow(logFile);
        samples.mount.push((await timed(() => readFiles(root, catalog.files, 1))).ms);
        requests = await window.counts();
        const differing = await differingFiles(root, catalog.diskDir, catalog.files.map((file) => file.path));
        if (differing.length > 0) throw new Error(`after a restart the mount serves different bytes than disk for ${differing.length} files, e.g. ${differing[0]}`);
      } finally {
        await mount.stop();
      }
      samples.disk.push((await timed(() => readFiles(catalog.diskDir, catalog.files, 1))).ms);
      log(`restart: ${catalog.name} run ${run + 1}/${runs} done`);
    }
    results[catalog.name] = { samples, requests, files: catalog.files.length };
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
