// One FUSE round trip per backend: stat(2) of the server's directory on a mount started with
// --metadata-ttl 0, so the kernel asks the daemon every time; the directory sits right under the
// root, so each stat is one lookup (a file deeper down costs a lookup per path component).
// Timed call by call in a separate process, after one stat has looked the name up; against local disk.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { serveEntry, startMount } from '../lib/mount-child.mjs';
import { statLatencySamples } from '../lib/readers.mjs';

/** Resolves stat samples in µs for local disk (the copy's top directory) and per backend. */
export async function measureRoundTrip({ workDir, catalog, count, backends }) {
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
  return { disk: await statLatencySamples(catalog.diskDir, count), byBackend };
}
