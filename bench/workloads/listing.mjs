// ls -lR of a large catalog (10,000 skills x 5 files in the full run), warm: the mount
// against the same tree on local disk, alternating. Also the mount's memory once listed.
import path from 'node:path';
import { memoryOf, serveEntry, startMount } from '../lib/mount-child.mjs';
import { listRecursive, listRecursiveLines } from '../lib/readers.mjs';
import { timed } from '../lib/stats.mjs';

/** Resolves ls -lR samples (ms) for mount and disk, line counts, and the mount's memory. */
export async function measureListing({ workDir, catalog, runs, log }) {
  const mount = await startMount({ workDir, name: 'listing', servers: { [catalog.name]: serveEntry(catalog.dir) } });
  try {
    const root = path.join(mount.mountpoint, catalog.name);
    const memoryReady = await memoryOf(mount.pid);
    // The warm-up run, also a check: both trees show the same entries.
    const [mountLines, diskLines] = [await listRecursiveLines(root), await listRecursiveLines(catalog.diskDir)];
    if (mountLines !== diskLines) throw new Error(`ls -lR shows ${mountLines} lines on the mount, ${diskLines} on disk`);
    const samples = { mount: [], disk: [] };
    for (let run = 0; run < runs; run++) {
      samples.mount.push((await timed(() => listRecursive(root))).ms);
      samples.disk.push((await timed(() => listRecursive(catalog.diskDir))).ms);
      log(`ls -lR: run ${run + 1}/${runs} done`);
    }
    return { samples, lines: mountLines, readyMs: mount.readyMs, memoryReady, memoryListed: await memoryOf(mount.pid) };
  } finally {
    await mount.stop();
  }
}
