// MCP requests the mount sends on each FUSE backend, counted at the server (skills-serve
// --verbose): per stat of a listed file, for ls -lR, per cold read, per warm read. Also checks the bytes.
import path from 'node:path';
import { loggedServeEntry, startMount } from '../lib/mount-child.mjs';
import { requestWindow } from '../lib/request-log.mjs';
import { catEach, differingFiles, listRecursive, readFiles, statFiles, writePathList } from '../lib/readers.mjs';

/** Resolves the file count and, per backend, request counts per phase ({total, contentReads, byMethod}). */
export async function countRequests({ workDir, catalog, backends }) {
  const listFile = path.join(workDir, 'requests.list');
  const paths = catalog.files.map((file) => file.path);
  await writePathList(listFile, paths);
  const byBackend = {};
  for (const backend of backends) byBackend[backend] = await countOn(backend);
  return { files: paths.length, byBackend };

  async function countOn(backend) {
    const logFile = path.join(workDir, `requests-server-${backend}.log`);
    const mount = await startMount({ workDir, name: 'requests', backend, servers: { [catalog.name]: loggedServeEntry(catalog.dir, logFile) } });
    try {
      const root = path.join(mount.mountpoint, catalog.name);
      const phase = async (work) => {
        const window = await requestWindow(logFile);
        await work();
        return window.counts();
      };
      // Order matters: stat and ls -lR come first, while nothing has been read yet.
      const statListed = await phase(() => statFiles(root, paths));
      const lsRecursive = await phase(() => listRecursive(root));
      const coldRead = await phase(() => readFiles(root, catalog.files, 1));
      const warmRead = await phase(() => readFiles(root, catalog.files, 1));
      const warmCat = await phase(() => catEach(root, listFile));
      const differing = await differingFiles(root, catalog.diskDir, paths);
      if (differing.length > 0) throw new Error(`the mount (${backend}) serves different bytes than disk for ${differing.length} files, e.g. ${differing[0]}`);
      return { statListed, lsRecursive, coldRead, warmRead, warmCat };
    } finally {
      await mount.stop();
    }
  }
}
