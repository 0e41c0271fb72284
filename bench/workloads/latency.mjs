// p50/p99 of stat(2) and of `cat` on one small file that the mount has already read
// (so its bytes are cached), against the same file on local disk.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { serveEntry, startMount } from '../lib/mount-child.mjs';
import { catLatencySamples, statLatencySamples } from '../lib/readers.mjs';

/** Resolves stat and cat samples in µs for the mount and for disk. */
export async function measureLatency({ workDir, catalog, statCount, catCount }) {
  // The smallest file: a "small cached file" in the sense.
  const file = [...catalog.files].sort((a, b) => a.sizeBytes - b.sizeBytes)[0];
  const mount = await startMount({ workDir, name: 'latency', servers: { [catalog.name]: serveEntry(catalog.dir) } });
  try {
    const onMount = path.join(mount.mountpoint, catalog.name, file.path);
    const onDisk = path.join(catalog.diskDir, file.path);
    await readFile(onMount);
    return {
      file: { path: file.path, sizeBytes: file.sizeBytes },
      stat: { mount: await statLatencySamples(onMount, statCount), disk: await statLatencySamples(onDisk, statCount) },
      cat: { mount: await catLatencySamples(onMount, catCount), disk: await catLatencySamples(onDisk, catCount) },
    };
  } finally {
    await mount.stop();
  }
}
