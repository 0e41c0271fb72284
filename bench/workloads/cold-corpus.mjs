// Cold sequential reads of a corpus through a fresh mount that keeps its default disk cache on
// (issue 43), against the raw SDK client on the same server over the same stdio transport, taken
// apart per file from the daemon's --metrics (FUSE operations in JS and in the addon, the
// `resources/read` inside) and its CPU time, with the same pass with --no-disk-cache beside it.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { freePort } from '../lib/free-port.mjs';
import { serveEntry, startMount } from '../lib/mount-child.mjs';
import { connectStdio, listAllSkills, readAll } from '../lib/raw-client.mjs';
import { catEach, readFiles, writePathList } from '../lib/readers.mjs';
import { median } from '../lib/stats.mjs';
import { formatValue, ratioRow } from '../lib/table.mjs';

/** Clock ticks per second of /proc/PID/stat's utime and stime (USER_HZ, 100 on Linux). */
const USER_HZ = 100;
const FUSE_OPS = ['lookup', 'getattr', 'open', 'read', 'release', 'flush', 'readdir'];
/**
 * The mount's cases: its default disk cache (a fresh, empty cache dir of its own per run), or none,
 * or the default disk cache with the 2025 handshake (the mount's own cost apart from the era's).
 */
const MOUNT_CASES = { cache: [], 'no-cache': ['--no-disk-cache'], 'cache-2025': ['--protocol-version', '2025-11-25'] };

/**
 * Runs `runs` rounds over `catalog` ({name, dir, files, totalBytes}); each round reads every file
 * once, in order, one at a time, with the raw client in both eras, on local disk (warm: key
 * `local/wall`) and through a fresh libfuse3
 * mount per case of `cases` (default: only 'cache'). The mount's fresh cache dirs go under
 * `cacheParent` (local disk, as ~/.cache is). `cpuProfDir`: each mount writes a V8 CPU profile
 * there, and beside each the pass's window (window-PID.json, µs of CLOCK_MONOTONIC). `metrics`
 * false: the mount runs without --metrics (as users run it; its observer costs ~50 µs an OPEN),
 * so only wall and CPU are taken. `warmCats` > 0: after the cold pass, that many alternating passes
 * of one `cat` per file through the mount (all of it read once) and on local disk (`catalog.diskDir`,
 * page cache warm), keys `CASE/warm-cat` and `CASE/warm-cat-disk`. Resolves samples (ms per pass, or per file where the key says so) keyed `CASE/what`.
 */
export async function measureColdCorpus({ workDir, cacheParent, catalog, runs, cases = ['cache'], cpuProfDir, metrics = true, warmCats = 0, log = () => undefined }) {
  const uris = catalog.files.map((file) => file.uri);
  const listFile = path.join(workDir, `${catalog.name}-cat.list`);
  if (warmCats > 0) await writePathList(listFile, catalog.files.map((file) => file.path));
  const samples = {};
  const add = (key, value) => (samples[key] ??= []).push(value);
  for (let run = 0; run < runs; run++) {
    const steps = [...['legacy', 'modern'].map((era) => () => rawPass(era)), localPass, ...cases.map((name) => () => mountPass(run, name))];
    for (const step of run % 2 === 0 ? steps : steps.reverse()) await step();
    log(`cold corpus: run ${run + 1}/${runs} done`);
  }
  return samples;

  async function rawPass(era) {
    const client = await connectStdio(catalog.dir, [], { era });
    try {
      // As the mount does at start: list first (the server computes and caches digests).
      await listAllSkills(client);
      const cpuBefore = process.cpuUsage();
      const startedMs = performance.now();
      const bytes = await readAll(client, uris, 1);
      add(`raw-${era}/wall`, performance.now() - startedMs);
      const cpu = process.cpuUsage(cpuBefore);
      add(`raw-${era}/cpu`, (cpu.user + cpu.system) / 1000);
      if (bytes !== catalog.totalBytes) throw new Error(`raw read: ${bytes} bytes, expected ${catalog.totalBytes}`);
    } finally {
      await client.close();
    }
  }

  /** The same readFile per file on local disk, page cache warm: what reading a file costs the reader on any filesystem. */
  async function localPass() {
    await readFiles(catalog.diskDir, catalog.files, 1);
    const startedMs = performance.now();
    await readFiles(catalog.diskDir, catalog.files, 1);
    add('local/wall', performance.now() - startedMs);
  }

  async function mountPass(run, name) {
    const port = await freePort();
    const cacheDir = name !== 'no-cache' ? await mkdtemp(path.join(cacheParent, 'skills-bench-cold-cache-')) : undefined;
    const nodeArgs = cpuProfDir ? ['--cpu-prof', '--cpu-prof-interval', '100', `--cpu-prof-dir=${path.join(cpuProfDir, name)}`] : [];
    const args = [...MOUNT_CASES[name], ...(cacheDir ? ['--cache-dir', cacheDir] : []), ...(metrics ? ['--metrics', `127.0.0.1:${port}`] : [])];
    const mount = await startMount({ workDir, name: `cold-corpus-${name}-${run}`, backend: 'libfuse3', servers: { [catalog.name]: serveEntry(catalog.dir) }, args, nodeArgs });
    try {
      const before = metrics ? await daemonMetrics(port) : undefined;
      const cpuBeforeMs = await processCpuMs(mount.pid);
      const startedMs = performance.now();
      // CLOCK_MONOTONIC in µs, the clock of V8's profile timestamps: the pass's window in the daemon's profile.
      const startedUs = process.hrtime.bigint() / 1000n;
      await readFiles(path.join(mount.mountpoint, catalog.name), catalog.files, 1);
      add(`${name}/wall`, performance.now() - startedMs);
      if (cpuProfDir) {
        await mkdir(path.join(cpuProfDir, name), { recursive: true });
        await writeFile(path.join(cpuProfDir, name, `window-${mount.pid}.json`), JSON.stringify({ startUs: Number(startedUs), endUs: Number(process.hrtime.bigint() / 1000n) }));
      }
      add(`${name}/cpu`, (await processCpuMs(mount.pid)) - cpuBeforeMs);
      const beforeCats = metrics && warmCats > 0 ? await daemonMetrics(port) : undefined;
      // One untimed pass of each first: the cold pass's disk-cache writes, queued after its replies,
      // finish before the clock starts (the first timed pass ran 1.4-1.5 x the next ones without it).
      if (warmCats > 0) for (const root of [path.join(mount.mountpoint, catalog.name), catalog.diskDir]) await catEach(root, listFile);
      for (let pass = 0; pass < warmCats; pass++) {
        const cats = [['warm-cat', path.join(mount.mountpoint, catalog.name)], ['warm-cat-disk', catalog.diskDir]];
        for (const [key, root] of pass % 2 === 0 ? cats : cats.reverse()) {
          const catStartedMs = performance.now();
          await catEach(root, listFile);
          add(`${name}/${key}`, performance.now() - catStartedMs);
        }
      }
      if (!metrics) return;
      if (beforeCats !== undefined) {
        // The kernel trips a warm `cat` waits for: every FUSE request but RELEASE, which the kernel sends after close(2) returns.
        const afterCats = await daemonMetrics(port);
        const waited = FUSE_OPS.filter((op) => op !== 'release').reduce((sum, op) => sum + afterCats.jsCount[op] - beforeCats.jsCount[op] + afterCats.addonCount[op] - beforeCats.addonCount[op], 0);
        add(`${name}/warm-cat-trips`, waited / (catalog.files.length * (warmCats + 1)));
      }
      // The cold pass's own counts: taken before the warm passes when there are any.
      const after = beforeCats ?? (await daemonMetrics(port));
      const reads = after.mcpReads - before.mcpReads;
      if (reads !== catalog.files.length) throw new Error(`the mount sent ${reads} resources/read for ${catalog.files.length} cold files`);
      add(`${name}/request-ms`, ((after.mcpReadSeconds - before.mcpReadSeconds) * 1000) / reads);
      // Any other MCP request the pass made (e.g. resources/subscribe, once per skill), per file.
      for (const [method, { count, seconds }] of Object.entries(after.mcpByMethod)) {
        if (method === 'resources/read') continue;
        const was = before.mcpByMethod[method] ?? { count: 0, seconds: 0 };
        if (count === was.count) continue;
        add(`${name}/other-requests/${method}`, (count - was.count) / catalog.files.length);
        add(`${name}/other-requests-ms/${method}`, ((seconds - was.seconds) * 1000) / catalog.files.length);
      }
      for (const op of FUSE_OPS) {
        add(`${name}/js-count/${op}`, (after.jsCount[op] - before.jsCount[op]) / catalog.files.length);
        add(`${name}/js-ms/${op}`, ((after.jsSeconds[op] - before.jsSeconds[op]) * 1000) / catalog.files.length);
        add(`${name}/addon-count/${op}`, (after.addonCount[op] - before.addonCount[op]) / catalog.files.length);
      }
    } finally {
      await mount.stop();
      if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
    }
  }
}

/** The bench row: cold sequential, one reader, a fresh mount with its default disk cache / the raw client (2025 era, the bench's baseline). */
export function coldCorpusRow(catalog, samples) {
  const n = catalog.files.length;
  const perFile = (ms) => `${formatValue(ms, 'ms')} (${formatValue(ms / n, 'ms')}/file)`;
  const measured = median(samples['cache/wall']);
  const baseline = median(samples['raw-legacy/wall']);
  return ratioRow({
    id: `cold-seq-disk-cache/${catalog.name}`,
    workload: `cold sequential, one reader, default disk cache / raw SDK client (${catalog.name}, ${n} files, ${(catalog.totalBytes / 1e6).toFixed(1)} MB; libfuse3)`,
    unit: 'ms',
    measured,
    baseline,
    maxRatio: 1.3,
    measuredText: perFile(measured),
    baselineText: perFile(baseline),
    detail: `a fresh mount per run with an empty cache dir of its own, the disk cache on; raw client 2026-07-28 (what the mount negotiates): ${perFile(median(samples['raw-modern/wall']))}`,
    samples: { measured: samples['cache/wall'], baseline: samples['raw-legacy/wall'] },
  });
}

/** User and system CPU of every thread of `pid` so far, in ms. */
async function processCpuMs(pid) {
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '').split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
}

/** From the daemon's /metrics: FUSE operations answered in JS (count, seconds) and by the addon, per op; resources/read count and seconds. */
async function daemonMetrics(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const sum = (pattern) => {
    let total = 0;
    for (const match of text.matchAll(new RegExp(`^${pattern} (\\S+)$`, 'gm'))) total += Number(match[1]);
    return total;
  };
  const byMethod = () => {
    const counts = {};
    for (const match of text.matchAll(/^skills_mount_mcp_request_duration_seconds_(count|sum)\{[^}]*method="([^"]+)"[^}]*\} (\S+)$/gm)) {
      const entry = (counts[match[2]] ??= { count: 0, seconds: 0 });
      entry[match[1] === 'count' ? 'count' : 'seconds'] += Number(match[3]);
    }
    return counts;
  };
  const perOp = (metric) => Object.fromEntries(FUSE_OPS.map((op) => [op, sum(`${metric}\\{[^}]*op="${op}"[^}]*\\}`)]));
  return {
    jsCount: perOp('skills_mount_fuse_operation_duration_seconds_count'),
    jsSeconds: perOp('skills_mount_fuse_operation_duration_seconds_sum'),
    addonCount: perOp('skills_mount_fuse_answered_by_addon_total'),
    mcpByMethod: byMethod(),
    mcpReads: sum('skills_mount_mcp_request_duration_seconds_count\\{[^}]*method="resources/read"[^}]*\\}'),
    mcpReadSeconds: sum('skills_mount_mcp_request_duration_seconds_sum\\{[^}]*method="resources/read"[^}]*\\}'),
  };
}
