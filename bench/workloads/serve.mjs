// `skills-mount serve --http` (issue 51) in front of skills-serve --http, both on loopback, no mount
// anywhere: reads through the gateway against reads straight from the same upstream server, by the
// same client (the SDK's, pinned to 2026-07-28, over Streamable HTTP): a cold pass (a new gateway,
// --no-disk-cache) and a warm pass (from its verified memory); then N clients at once reading the
// corpus through a warm gateway (and, as the baseline, straight from the upstream): reads per
// second, p50/p99, errors, wrong bytes (every answer compared with the file on disk), the gateway's RSS.
import { spawn } from 'node:child_process';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { startHttpServer } from '../lib/http-server.mjs';
import { SKILLS_MOUNT } from '../lib/paths.mjs';
import { connectHttp, listAllSkills, manifestFiles, readBytes, uriToPath } from '../lib/raw-client.mjs';
import { percentile, timed } from '../lib/stats.mjs';
import { formatValue } from '../lib/table.mjs';

/** What the client pins, as hosts of the final spec do. */
export const SERVE_PROTOCOL = '2026-07-28';
/** The label the upstream server has in the gateway: its skill://P is skill://LABEL/P there. */
const LABEL = 'upstream';
/** Each of the N clients reads this many files (a bounded loop), wrapping around the corpus. */
export const SERVE_PROFILES = {
  full: { maxRuns: 3, clients: 200, readsPerClient: 50 },
  // The smoke run's: every row, each figure finite, in seconds (the concurrency's figure is the full run's).
  quick: { maxRuns: 1, clients: 50, readsPerClient: 2 },
};
const STOP_GRACE_MS = 5_000;
/** Every read goes to the server: the client's own response cache (ttlMs) would answer a repeat for both sides alike. */
const UNCACHED = { cacheMode: 'bypass' };
const READY_TIMEOUT_MS = 120_000;

/**
 * Samples (ms per pass) of the cold and warm passes, each against the upstream's own in the same
 * run, and the concurrent reads' figures. `catalog` is a prepared catalog ({name, dir, files, totalBytes}).
 */
export async function measureServe({ workDir, catalog, runs, clients, readsPerClient, log }) {
  const base = path.join(workDir, 'serve');
  await mkdir(base, { recursive: true });
  const disk = new Map();
  for (const file of catalog.files) disk.set(file.path, await readFile(path.join(catalog.dir, file.path)));
  const upstream = await startHttpServer(catalog.dir);
  const samples = { cold: [], coldUpstream: [], warm: [], warmUpstream: [] };
  let concurrent;
  try {
    const count = Math.min(runs, SERVE_PROFILES.full.maxRuns);
    for (let run = 0; run < count; run++) {
      const gateway = await startGateway({ base, name: `run-${run}`, upstreamUrl: upstream.url, flags: ['--no-disk-cache'] });
      try {
        const through = await connectedReader(gateway.url, disk, (uri) => uriToPath(uri).slice(LABEL.length + 1));
        const straight = await connectedReader(upstream.url, disk, uriToPath);
        try {
          if (through.uris.length !== catalog.files.length || straight.uris.length !== catalog.files.length) {
            throw new Error(`serve bench: the gateway lists ${through.uris.length} files, the upstream ${straight.uris.length}, the catalog ${catalog.files.length}:\n${gateway.log().slice(-2_000)}`);
          }
          // Which side goes first alternates by run, as everywhere in the benchmark.
          const order = run % 2 === 0 ? ['gateway', 'upstream'] : ['upstream', 'gateway'];
          for (const phase of ['cold', 'warm']) {
            for (const side of order) {
              const reader = side === 'gateway' ? through : straight;
              const { ms } = await timed(() => reader.readEach());
              samples[side === 'gateway' ? phase : `${phase}Upstream`].push(ms);
            }
          }
          const wrong = through.wrong + straight.wrong;
          if (wrong > 0) throw new Error(`serve bench: ${wrong} reads answered bytes other than the file's on disk`);
          log(`serve: run ${run + 1}/${count}: cold ${formatValue(samples.cold.at(-1), 'ms')} (upstream ${formatValue(samples.coldUpstream.at(-1), 'ms')}), warm ${formatValue(samples.warm.at(-1), 'ms')} (upstream ${formatValue(samples.warmUpstream.at(-1), 'ms')})`);
        } finally {
          await through.close();
          await straight.close();
        }
      } finally {
        await gateway.stop();
      }
    }

    // N clients at once through one warm gateway (its default disk cache on), then straight from the upstream.
    const gateway = await startGateway({ base, name: 'concurrent', upstreamUrl: upstream.url, flags: [] });
    try {
      const warmUp = await connectedReader(gateway.url, disk, (uri) => uriToPath(uri).slice(LABEL.length + 1));
      await warmUp.readEach();
      await warmUp.close();
      const rss = rssSampler(gateway.pid);
      let throughGateway;
      try {
        throughGateway = await manyClients({ url: gateway.url, disk, clients, readsPerClient, toPath: (uri) => uriToPath(uri).slice(LABEL.length + 1) });
      } finally {
        rss.stop();
      }
      const straight = await manyClients({ url: upstream.url, disk, clients, readsPerClient, toPath: uriToPath });
      concurrent = { gateway: { ...throughGateway, rssPeakBytes: rss.peakBytes(), rssHighWaterBytes: await highWater(gateway.pid) }, upstream: straight };
      log(`serve: ${clients} clients x ${readsPerClient} reads: gateway ${throughGateway.readsPerSecond.toFixed(0)} reads/s (p50 ${formatValue(throughGateway.p50Ms, 'ms')}, p99 ${formatValue(throughGateway.p99Ms, 'ms')}, ${throughGateway.errors} errors, ${throughGateway.wrong} wrong); upstream ${straight.readsPerSecond.toFixed(0)} reads/s`);
    } finally {
      await gateway.stop();
    }
  } finally {
    await upstream.stop();
    await rm(base, { recursive: true, force: true });
  }
  return { samples, concurrent, clients, readsPerClient, protocol: SERVE_PROTOCOL, files: catalog.files.length, totalBytes: catalog.totalBytes, name: catalog.name };
}

/**
 * Starts `skills-mount serve --http 127.0.0.1:0 --all --server LABEL=URL ...flags` with a HOME of
 * its own under `base`; resolves {url, pid, log(), stop()} once it prints the URL it listens on.
 */
async function startGateway({ base, name, upstreamUrl, flags }) {
  const home = path.join(base, `home-${name}`);
  await mkdir(home, { recursive: true, mode: 0o700 });
  const env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
  };
  const child = spawn(process.execPath, [SKILLS_MOUNT, 'serve', '--http', '127.0.0.1:0', '--all', '--server', `${LABEL}=${upstreamUrl}`, ...flags], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((done) => setTimeout(done, STOP_GRACE_MS))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`skills-mount serve printed no URL within ${READY_TIMEOUT_MS / 1000} s:\n${stderr.slice(-2_000)}`)), READY_TIMEOUT_MS);
      child.stdout.setEncoding('utf8').on('data', (chunk) => {
        stdout += chunk;
        const line = stdout.split('\n').find((candidate) => candidate.startsWith('http://'));
        if (line !== undefined) {
          clearTimeout(timer);
          resolve(line.trim());
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`skills-mount serve exited (${code}) before listening:\n${stderr.slice(-2_000)}`));
      });
    });
    return { url, pid: child.pid, log: () => stderr, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One client of `url` with the listing read: readEach() reads every listed file once, in order, one at a time, counting wrong bytes. */
async function connectedReader(url, disk, toPath) {
  const client = await connectHttp(url, { era: 'modern' });
  const uris = manifestFiles((await listAllSkills(client)).skills).map((file) => file.uri);
  const reader = {
    uris,
    wrong: 0,
    async readEach() {
      for (const uri of uris) if (!(await readBytes(client, uri, UNCACHED)).equals(disk.get(toPath(uri)))) reader.wrong += 1;
    },
    close: () => client.close(),
  };
  return reader;
}

/**
 * `clients` clients of `url`, connected first, then all reading at once, each `readsPerClient`
 * files starting at its own offset in the listing; every answer compared with the file on disk.
 */
async function manyClients({ url, disk, clients, readsPerClient, toPath }) {
  const connected = await Promise.all(Array.from({ length: clients }, () => connectHttp(url, { era: 'modern' })));
  try {
    const uris = manifestFiles((await listAllSkills(connected[0])).skills).map((file) => file.uri);
    const latencies = [];
    let errors = 0;
    let wrong = 0;
    let firstError;
    const startedMs = performance.now();
    await Promise.all(
      connected.map(async (client, index) => {
        for (let read = 0; read < readsPerClient; read++) {
          const uri = uris[(index * readsPerClient + read) % uris.length];
          const readStartedMs = performance.now();
          try {
            const bytes = await readBytes(client, uri, UNCACHED);
            latencies.push(performance.now() - readStartedMs);
            if (!bytes.equals(disk.get(toPath(uri)))) wrong += 1;
          } catch (error) {
            errors += 1;
            firstError ??= `${uri}: ${error.message}`;
          }
        }
      }),
    );
    const wallMs = performance.now() - startedMs;
    const reads = clients * readsPerClient;
    return { reads, wallMs, readsPerSecond: reads / (wallMs / 1000), p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), errors, wrong, ...(firstError && { firstError }) };
  } finally {
    await Promise.allSettled(connected.map((client) => client.close()));
  }
}

/** Samples a process's resident memory every 50 ms until stopped; peakBytes() is the largest seen. */
function rssSampler(pid) {
  let peak = 0;
  const sample = async () => {
    const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''))?.[1] ?? 0);
    peak = Math.max(peak, kib * 1024);
  };
  void sample();
  const timer = setInterval(() => void sample(), 50);
  return { stop: () => clearInterval(timer), peakBytes: () => peak };
}

/** The process's resident high-water mark (VmHWM), its whole life so far. */
async function highWater(pid) {
  const kib = /^VmHWM:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''))?.[1];
  return kib === undefined ? Number.NaN : Number(kib) * 1024;
}
