// Cold and warm reads through the mount on each FUSE backend against a raw SDK client and local
// disk, and the protocol floor (ping); the 16 MiB files are big-file.mjs's. Every run starts a fresh mount per
// backend, so "cold" means nothing read yet; the baselines are measured once per run, and the
// order of baselines and backends is reversed from one run to the next.
import path from 'node:path';
import { serveEntry, startMount } from '../lib/mount-child.mjs';
import { connectStdio, listAllSkills, pingSamples, readAll } from '../lib/raw-client.mjs';
import { catEach, readFiles, writePathList } from '../lib/readers.mjs';
import { timed } from '../lib/stats.mjs';

const PARALLEL_READERS = 8;

/**
 * Runs `runs` rounds over `catalogs` (each {name, dir, diskDir, files, totalBytes}); resolves
 * samples in ms keyed by measurement (`KIND/CATALOG/BACKEND`, `.../raw`, `.../disk`).
 */
export async function measureReads({ workDir, runs, catalogs, pings, backends, log }) {
  const samples = {};
  const add = (key, ms) => (samples[key] ??= []).push(ms);
  const lists = {};
  for (const catalog of catalogs) {
    lists[catalog.name] = path.join(workDir, `${catalog.name}.list`);
    await writePathList(lists[catalog.name], catalog.files.map((file) => file.path));
  }
  for (let run = 0; run < runs; run++) {
    const steps = [baselines, ...backends.map((backend) => () => throughMount(run, backend))];
    for (const step of run % 2 === 0 ? steps : steps.reverse()) await step();
    log(`reads: run ${run + 1}/${runs} done`);
  }
  return { samples };

  async function throughMount(run, backend) {
    const servers = {};
    for (const catalog of catalogs) {
      servers[catalog.name] = serveEntry(catalog.dir);
      servers[`${catalog.name}-par`] = serveEntry(catalog.dir);
    }
    const mount = await startMount({ workDir, name: `reads-${run}`, backend, servers });
    try {
      for (const catalog of catalogs) {
        const root = path.join(mount.mountpoint, catalog.name);
        const parRoot = path.join(mount.mountpoint, `${catalog.name}-par`);
        add(`cold-seq/${catalog.name}/${backend}`, await timedRead(root, catalog.files, 1));
        add(`cold-par/${catalog.name}/${backend}`, await timedRead(parRoot, catalog.files, PARALLEL_READERS));
        // Warm: everything under `root` has been read once.
        add(`warm-one/${catalog.name}/${backend}`, await timedRead(root, catalog.files, 1));
        add(`warm-cat/${catalog.name}/${backend}`, (await timed(() => catEach(root, lists[catalog.name]))).ms);
      }
    } catch (error) {
      error.message += `\nskills-mount (${backend}) log (last lines):\n${mount.log().split('\n').filter((line) => !/ server: /.test(line)).slice(-15).join('\n')}`;
      throw error;
    } finally {
      await mount.stop();
    }
  }

  /** The raw client's cold reads and pings, and local disk's warm reads: once per run, for every backend's ratio. */
  async function baselines() {
    for (const catalog of catalogs) {
      const client = await connectStdio(catalog.dir);
      try {
        // As the mount does at start: list first (the server computes and caches digests).
        await listAllSkills(client);
        const uris = catalog.files.map((file) => file.uri);
        add(`cold-seq/${catalog.name}/raw`, await timedRaw(client, uris, 1, catalog.totalBytes));
        add(`cold-par/${catalog.name}/raw`, await timedRaw(client, uris, PARALLEL_READERS, catalog.totalBytes));
        (samples[`ping/${catalog.name}`] ??= []).push(...(await pingSamples(client, pings)));
      } finally {
        await client.close();
      }
      add(`warm-one/${catalog.name}/disk`, await timedRead(catalog.diskDir, catalog.files, 1));
      add(`warm-cat/${catalog.name}/disk`, (await timed(() => catEach(catalog.diskDir, lists[catalog.name]))).ms);
    }
  }
}

async function timedRead(root, files, concurrency) {
  return (await timed(() => readFiles(root, files, concurrency))).ms;
}

async function timedRaw(client, uris, concurrency, expectedBytes) {
  const { ms, result } = await timed(() => readAll(client, uris, concurrency));
  if (result !== expectedBytes) throw new Error(`raw read: ${result} bytes, expected ${expectedBytes}`);
  return ms;
}
