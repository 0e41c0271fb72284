// p50/p99 of stat(2) and of `cat` on one small file that the mount has already read (so its
// bytes are cached), on each FUSE backend, against the same file on local disk (measured once).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { serveEntry, startMount } from '../lib/mount-child.mjs';
import { catLatencySamples, statLatencySamples } from '../lib/readers.mjs';

/** Resolves stat and cat samples in µs for local disk and per backend. */
export async function measureLatency({ workDir, catalog, statCount, catCount, backends }) {
  // The smallest file: a "small cached file" in the sense.
  const file = [...catalog.files].sort((a, b) => a.sizeBytes - b.sizeBytes)[0];
  const samplesOf = async (onPath) => ({ stat: await statLatencySamples(onPath, statCount), cat: await catLatencySamples(onPath, catCount) });
  const byBackend = {};
  for (const backend of backends) {
    const mount = await startMount({ workDir, name: 'latency', backend, servers: { [catalog.name]: serveEntry(catalog.dir) } });
    try {
      const onMount = path.join(mount.mountpoint, catalog.name, file.path);
      await readFile(onMount);
      byBackend[backend] = await samplesOf(onMount);
    } finally {
      await mount.stop();
    }
  }
  return { file: { path: file.path, sizeBytes: file.sizeBytes }, disk: await samplesOf(path.join(catalog.diskDir, file.path)), byBackend };
}
