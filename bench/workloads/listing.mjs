// ls -lR of a large catalog (10,000 skills x 5 files in the full run), warm, on each FUSE
// backend against the same tree on local disk (once per run). One mount per backend, started
// one after the other and all kept up, so each run reads disk and every mount in turn (the
// order reversed from one run to the next). Also each mount's memory once listed.
import path from 'node:path';
import { memoryOf, serveEntry, startMount } from '../lib/mount-child.mjs';
import { listRecursive, listRecursiveLines } from '../lib/readers.mjs';
import { timed } from '../lib/stats.mjs';

/** Resolves ls -lR samples (ms) for disk, line counts, and per backend samples, ready time and memory. */
export async function measureListing({ workDir, catalog, runs, backends, log }) {
  const mounts = {};
  try {
    const diskLines = await listRecursiveLines(catalog.diskDir);
    const byBackend = {};
    for (const backend of backends) {
      const mount = (mounts[backend] = await startMount({ workDir, name: 'listing', backend, servers: { [catalog.name]: serveEntry(catalog.dir) } }));
      const memoryReady = await memoryOf(mount.pid);
      // The warm-up run, also a check: both trees show the same entries.
      const lines = await listRecursiveLines(path.join(mount.mountpoint, catalog.name));
      if (lines !== diskLines) throw new Error(`ls -lR shows ${lines} lines on the mount (${backend}), ${diskLines} on disk`);
      byBackend[backend] = { samples: [], readyMs: mount.readyMs, memoryReady };
    }
    const disk = [];
    for (let run = 0; run < runs; run++) {
      const steps = [
        async () => disk.push((await timed(() => listRecursive(catalog.diskDir))).ms),
        ...backends.map((backend) => async () => byBackend[backend].samples.push((await timed(() => listRecursive(path.join(mounts[backend].mountpoint, catalog.name)))).ms)),
      ];
      for (const step of run % 2 === 0 ? steps : steps.reverse()) await step();
      log(`ls -lR: run ${run + 1}/${runs} done`);
    }
    for (const backend of backends) byBackend[backend].memoryListed = await memoryOf(mounts[backend].pid);
    return { disk, lines: diskLines, byBackend };
  } finally {
    for (const mount of Object.values(mounts)) await mount.stop();
  }
}
