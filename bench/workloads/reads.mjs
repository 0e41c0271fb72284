// Cold and warm reads through the mount on each FUSE backend against a raw SDK client and local
// disk, the 16 MiB file, and the protocol floor (ping). Every run starts a fresh mount per
// backend, so "cold" means nothing read yet; the baselines are measured once per run, and the
// order of baselines and backends is reversed from one run to the next.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startHttpServer } from '../lib/http-server.mjs';
import { serveEntry, startMount } from '../lib/mount-child.mjs';
import { connectHttp, connectStdio, listAllSkills, pingSamples, readAll, readBytes } from '../lib/raw-client.mjs';
import { catEach, readFiles, writePathList } from '../lib/readers.mjs';
import { timed } from '../lib/stats.mjs';

const PARALLEL_READERS = 8;
/** The SDK's stdio limit on one message is 10 MiB; a 16 MiB file's base64 needs more. */
const RAW_STDIO_MAX_BUFFER_BYTES = 64 * 1024 * 1024;

/**
 * Runs `runs` rounds over `catalogs` (each {name, dir, diskDir, files, totalBytes}) and `big`
 * ({dir, file}); resolves samples in ms keyed by measurement (`KIND/CATALOG/BACKEND`, `.../raw`,
 * `.../disk`), and failures by the same keys. The big file is read over stdio and over
 * Streamable HTTP (one HTTP server for all runs).
 */
export async function measureReads({ workDir, runs, catalogs, big, pings, backends, log }) {
  const samples = {};
  const failures = {};
  const add = (key, ms) => (samples[key] ??= []).push(ms);
  const lists = {};
  for (const catalog of catalogs) {
    lists[catalog.name] = path.join(workDir, `${catalog.name}.list`);
    await writePathList(lists[catalog.name], catalog.files.map((file) => file.path));
  }
  const bigServer = await startHttpServer(big.dir);
  try {
    for (let run = 0; run < runs; run++) {
      const steps = [baselines, ...backends.map((backend) => () => throughMount(run, backend))];
      for (const step of run % 2 === 0 ? steps : steps.reverse()) await step();
      log(`reads: run ${run + 1}/${runs} done`);
    }
  } finally {
    await bigServer.stop();
  }
  return { samples, failures };

  async function throughMount(run, backend) {
    const servers = { big: serveEntry(big.dir), 'big-http': { url: bigServer.url } };
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
      for (const [kind, label] of [['big-http', 'big-http'], ['big-stdio', 'big']]) {
        const key = `${kind}/${backend}`;
        const bigPath = path.join(mount.mountpoint, label, big.file.path);
        try {
          const { ms, result } = await timed(() => readFile(bigPath));
          if (result.length !== big.file.sizeBytes) throw new Error(`${bigPath}: read ${result.length} bytes, expected ${big.file.sizeBytes}`);
          add(key, ms);
        } catch (error) {
          // A failure here is a finding (shown in its row), not a reason to stop measuring.
          const why = mount.log().split('\n').find((line) => line.includes(`[${label}]`) && /error|closed/.test(line));
          (failures[key] ??= []).push(`${error.message}${why ? ` (${why.trim()})` : ''}`);
          add(key, Number.NaN);
        }
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
    for (const [kind, connect] of [
      ['big-http', () => connectHttp(bigServer.url)],
      ['big-stdio', () => connectStdio(big.dir, [], { maxBufferSize: RAW_STDIO_MAX_BUFFER_BYTES })],
    ]) {
      const client = await connect();
      try {
        await listAllSkills(client);
        const { ms, result } = await timed(() => readBytes(client, big.file.uri));
        if (result.length !== big.file.sizeBytes) throw new Error(`raw ${big.file.uri}: ${result.length} bytes, expected ${big.file.sizeBytes}`);
        add(`${kind}/raw`, ms);
      } finally {
        await client.close();
      }
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
