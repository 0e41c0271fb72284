// What the verified disk cache costs a cold read (issue 22, item 6), without a kernel mount: one
// process reads every file of a catalog once through the filesystem core and the catalog (a fresh
// one each run, over stdio skills-serve), with the disk cache on (a fresh cache root each run)
// and off, alternating which goes first. Writes still under way when the last byte was read are
// waited for outside the timed window (the cache's close()), as a daemon would keep serving.
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO, SKILLS_SERVE } from '../lib/paths.mjs';
import { median } from '../lib/stats.mjs';
import { formatValue, ratioRow } from '../lib/table.mjs';

const LABEL = 'bench';
const MB = 1e6;

/** Samples (ms) per catalog: { on: [...], off: [...] }; `dist` is the built tree to measure (default the repo's). */
export async function measureDiskCacheCost({ workDir, catalogs, runs, log, dist = path.join(REPO, 'dist') }) {
  const load = (file) => import(pathToFileURL(path.join(dist, file)).href);
  const [{ DiskCache }, { ContentCache }, { DEFAULT_CATALOG_TIMINGS, ServerCatalog }, { SkillsFilesystem }, { McpSkillSource }] = await Promise.all([
    load('cache/disk-cache.js'),
    load('catalog/content-cache.js'),
    load('catalog/server-catalog.js'),
    load('fs/skills-filesystem.js'),
    load('mcp/mcp-skill-source.js'),
  ]);

  const readOnce = async (catalog, withCache) => {
    const cacheRoot = withCache ? await mkdtemp(path.join(workDir, 'disk-cache-cost-')) : undefined;
    const mountpoint = path.join(workDir, `disk-cache-cost-mnt-${catalog.name}`);
    const diskCache = cacheRoot ? await DiskCache.open({ root: cacheRoot, mountpoint, limitBytes: 4 * 1024 ** 3, rootLimitBytes: 4 * 1024 ** 3, log: () => {} }) : undefined;
    const source = new McpSkillSource(LABEL, { kind: 'stdio', command: process.execPath, args: [SKILLS_SERVE, catalog.dir, '--lenient'], env: {}, cwd: undefined }, { timeoutMs: 60_000, log: () => {} });
    try {
      const server = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => {}, cache: new ContentCache(1024 ** 3), durable: diskCache?.server(LABEL), hideDynamic: false });
      await source.start();
      await server.refresh();
      const filesystem = new SkillsFilesystem([server]);
      const startedMs = performance.now();
      let bytes = 0;
      for (const file of catalog.files) {
        const handle = await filesystem.open(`/${LABEL}/${file.path}`);
        try {
          bytes += filesystem.read(handle, 0, file.sizeBytes + 1).length;
        } finally {
          filesystem.release(handle);
        }
      }
      const endedMs = performance.now();
      if (bytes !== catalog.totalBytes) throw new Error(`disk-cache-cost: read ${bytes} bytes of ${catalog.name}, listed ${catalog.totalBytes}`);
      // The writes the reads queued, finished after the last byte was served (not in the timed window).
      await diskCache?.close();
      return { ms: endedMs - startedMs, drainMs: performance.now() - endedMs, cachedBytes: diskCache?.totalBytes };
    } finally {
      await diskCache?.close();
      await source.close();
      if (cacheRoot) await rm(cacheRoot, { recursive: true, force: true });
    }
  };

  const samples = {};
  for (const catalog of catalogs) {
    const these = (samples[catalog.name] = { on: [], off: [], drain: [], cachedBytes: [] });
    await readOnce(catalog, false); // warms the server's own caches and the page cache, for both
    for (let run = 0; run < runs; run++) {
      const order = run % 2 === 0 ? [true, false] : [false, true];
      for (const withCache of order) {
        const { ms, drainMs, cachedBytes } = await readOnce(catalog, withCache);
        these[withCache ? 'on' : 'off'].push(ms);
        if (withCache) {
          these.drain.push(drainMs);
          these.cachedBytes.push(cachedBytes);
        }
      }
    }
    log(`disk cache cost: ${catalog.name}: on ${formatValue(median(these.on), 'ms')}, off ${formatValue(median(these.off), 'ms')} (medians of ${runs})`);
  }
  return samples;
}

/** The rows "cold read, disk cache on / off" (one per catalog), target <= 1.05. */
export async function diskCacheCostRows({ workDir, catalogs, runs, log, dist }) {
  const samples = await measureDiskCacheCost({ workDir, catalogs, runs, log, dist });
  return catalogs.map((catalog) => {
    const { on, off, drain, cachedBytes } = samples[catalog.name];
    const n = catalog.files.length;
    const perFile = (ms) => `${formatValue(ms, 'ms')} (${formatValue(ms / n, 'ms')}/file)`;
    return ratioRow({
      id: `disk-cache-cost/${catalog.name}`,
      workload: `cold read, disk cache on / off: one process, filesystem core and catalog over stdio, no kernel mount (${catalog.name}, ${n} files, ${(catalog.totalBytes / MB).toFixed(1)} MB)`,
      unit: 'ms',
      measured: median(on),
      baseline: median(off),
      maxRatio: 1.05,
      measuredText: perFile(median(on)),
      baselineText: perFile(median(off)),
      // Past its queue's bound the cache drops writes (and starts them beside the reads earlier): say how much it kept.
      detail: `the cache's writes finished ${formatValue(median(drain), 'ms')} after the last byte was served; it then held ${((100 * median(cachedBytes)) / catalog.totalBytes).toFixed(1)} % of the bytes (medians)`,
      samples: { measured: on, baseline: off },
    });
  });
}
