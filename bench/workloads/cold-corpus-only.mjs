#!/usr/bin/env node
// node bench/workloads/cold-corpus-only.mjs [--corpus DIR] [--runs N] [--no-cache-too] [--era-2025-too] [--cpu-prof DIR] [--floor] [--no-metrics] [--warm-cat N]:
// the row "cold sequential, one reader, default disk cache / raw SDK client" alone, taken apart per
// file (issue 43): wall time of the mount (fresh, its disk cache on in an empty dir of its own) and
// of the raw client in both eras, the daemon's CPU, the `resources/read` inside the daemon, and per
// file the FUSE requests answered in JS (count, ms) and by the addon. --no-cache-too adds the same
// mount with --no-disk-cache; --era-2025-too the same mount pinned to the 2025 handshake (the
// mount's own cost apart from the 2026-07-28 era's, against the raw 2025 client); --cpu-prof DIR
// writes the daemons' V8 CPU profiles there; --floor
// adds the pure-C FUSE round trip (bench/floor/floor-fuse.c); --no-metrics runs the mounts without
// --metrics (wall and CPU only, as users run it); --warm-cat N adds N alternating passes of one
// `cat` per file through the warm mount and on local disk. Default corpus: the project's
// generated test corpus. Run the whole script under `taskset -c 0` for the one-CPU figures.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { prepareCatalog } from '../lib/catalogs.mjs';
import { describeMachine } from '../lib/machine.mjs';
import { median } from '../lib/stats.mjs';
import { standaloneDirs } from '../lib/standalone.mjs';
import { coldCorpusRow, measureColdCorpus } from './cold-corpus.mjs';
import { buildFloor, floorSamples } from './round-trip.mjs';

const { values } = parseArgs({
  options: { corpus: { type: 'string' }, runs: { type: 'string' }, 'work-dir': { type: 'string' }, 'no-cache-too': { type: 'boolean' }, 'era-2025-too': { type: 'boolean' }, 'no-metrics': { type: 'boolean' }, 'cpu-prof': { type: 'string' }, floor: { type: 'boolean' }, 'warm-cat': { type: 'string' } },
});
const runs = Number(values.runs ?? 5);
const log = (line) => process.stderr.write(`bench: ${line}\n`);
const corpusDir = values.corpus ?? (await (await import('../../test/support/test-corpus.mjs')).testCorpusDir());

const { workDir, diskRoot, cleanUp } = await standaloneDirs('cold-corpus', values['work-dir']);
try {
  const catalog = await prepareCatalog({ name: 'corpus', dir: corpusDir, diskRoot });
  const n = catalog.files.length;
  const cases = ['cache', ...(values['no-cache-too'] ? ['no-cache'] : []), ...(values['era-2025-too'] ? ['cache-2025'] : [])];
  const caseTitles = { cache: 'default disk cache', 'no-cache': '--no-disk-cache', 'cache-2025': 'default disk cache, 2025 handshake' };
  const samples = await measureColdCorpus({ workDir, cacheParent: diskRoot, catalog, runs, cases, cpuProfDir: values['cpu-prof'] && path.resolve(values['cpu-prof']), metrics: !values['no-metrics'], warmCats: Number(values['warm-cat'] ?? 0), log });
  const perFile = (key) => (samples[key] === undefined ? '-' : `${((median(samples[key]) * 1000) / n).toFixed(0)} µs`);
  const each = (key) => (samples[key] === undefined ? '-' : `${(median(samples[key]) * 1000).toFixed(0)} µs`);
  const count = (key) => (samples[key] === undefined ? '-' : median(samples[key]).toFixed(2));
  const lines = [
    `cold sequential read, ${corpusDir} (${n} files, ${(catalog.totalBytes / 1e6).toFixed(1)} MB), per file, medians of ${runs} runs`,
    '',
    `| per file | ${cases.map((name) => `mount, ${caseTitles[name]}`).join(' | ')} | raw, 2025 era | raw, 2026-07-28 |`,
    `| --- | ${cases.map(() => '---:').join(' | ')} | ---: | ---: |`,
    `| wall time | ${cases.map((name) => perFile(`${name}/wall`)).join(' | ')} | ${perFile('raw-legacy/wall')} | ${perFile('raw-modern/wall')} |`,
    `| wall time of the same readFile per file on local disk (warm) | ${perFile('local/wall')} | | |`,
    `| CPU of the process holding the client | ${cases.map((name) => perFile(`${name}/cpu`)).join(' | ')} | ${perFile('raw-legacy/cpu')} | ${perFile('raw-modern/cpu')} |`,
    `| resources/read inside the daemon | ${cases.map((name) => each(`${name}/request-ms`)).join(' | ')} | | |`,
  ];
  for (const op of ['lookup', 'getattr', 'open', 'read', 'release', 'flush']) {
    lines.push(`| ${op}: in JS (count; ms in JS) / by the addon (count) | ${cases.map((name) => `${count(`${name}/js-count/${op}`)}; ${each(`${name}/js-ms/${op}`)} / ${count(`${name}/addon-count/${op}`)}`).join(' | ')} | | |`);
  }
  for (const key of Object.keys(samples).filter((k) => k.includes('/other-requests/'))) {
    const [name, , method] = key.split('/');
    lines.push(`| other MCP requests (${name}): ${method} per file; ms in flight per file | ${count(key)}; ${each(`${name}/other-requests-ms/${method}`)} | | | |`);
  }
  for (const name of cases) {
    if (samples[`${name}/warm-cat`] === undefined) continue;
    const catRatios = samples[`${name}/warm-cat`].map((ms, index) => (ms / samples[`${name}/warm-cat-disk`][index]).toFixed(3));
    lines.push('', `warm cat per file (mount ${name}): ${perFile(`${name}/warm-cat`)} vs local disk ${perFile(`${name}/warm-cat-disk`)} = ${(median(samples[`${name}/warm-cat`]) / median(samples[`${name}/warm-cat-disk`])).toFixed(3)}; per pass: ${catRatios.join(', ')}`);
  }
  const ratios = (key) => samples[key].map((wall, run) => (wall / samples['raw-legacy/wall'][run]).toFixed(2)).join(', ');
  lines.push('', `mount / raw 2025 per run: ${cases.map((name) => `${name} ${ratios(`${name}/wall`)}`).join('; ')}`);
  const row = coldCorpusRow(catalog, samples);
  lines.push(`row: ${row.workload}: ${row.measuredText} / ${row.baselineText} = ${row.ratio.toFixed(2)} (target ${row.target})`);
  if (values.floor) {
    const floor = await buildFloor(workDir);
    const floorUs = median(await floorSamples({ workDir, floor, name: 'x', count: 2000, regime: { id: 'as-placed' } }));
    lines.push(`floor: one C FUSE round trip (LOOKUP of a directory, stat, kernel timeouts 0), p50 ${floorUs.toFixed(1)} µs, on this script's CPUs`);
    // What the mount cannot avoid beside the raw client's read: its kernel trips per file (LOOKUP and
    // OPEN; READs only past the MiB a first open stores) and the reader's own readFile of a local file.
    // Counted by --metrics; without it, as counted on the corpus (1.21 LOOKUPs, 1 OPEN, 0 READs per file).
    const counted = samples['cache/js-count/open'] !== undefined;
    const trips = counted ? ['cache/js-count/open', 'cache/js-count/lookup', 'cache/addon-count/lookup', 'cache/js-count/read', 'cache/addon-count/read'].reduce((sum, key) => sum + median(samples[key]), 0) : 2.21;
    const localUs = (median(samples['local/wall']) * 1000) / n;
    const mountUs = (median(samples['cache/wall']) * 1000) / n;
    // From the client of either era: the 2025 one (the row's baseline) and the 2026-07-28 one, the era the mount negotiates.
    for (const [era, label] of [['legacy', 'raw 2025'], ['modern', 'raw 2026-07-28']]) {
      const rawUs = (median(samples[`raw-${era}/wall`]) * 1000) / n;
      const floorTotalUs = rawUs + trips * floorUs + localUs;
      lines.push(`against the floor from the ${label} client: ${rawUs.toFixed(0)} µs + ${trips.toFixed(2)} trips${counted ? '' : ' (as counted with --metrics)'} x ${floorUs.toFixed(1)} µs + a local warm readFile ${localUs.toFixed(0)} µs = ${floorTotalUs.toFixed(0)} µs; the mount ${(mountUs / floorTotalUs).toFixed(2)} x that`);
    }
    if (samples['cache/warm-cat'] !== undefined) {
      // A warm `cat`'s one trip is the OPEN the addon answers from its table (counted, so the handle
      // keeps its version); its bytes come from the page cache. Counted by --metrics; without it, 1.
      const catCounted = samples['cache/warm-cat-trips'] !== undefined;
      const catTrips = catCounted ? median(samples['cache/warm-cat-trips']) : 1;
      const diskUs = (median(samples['cache/warm-cat-disk']) * 1000) / n;
      const catFloorUs = diskUs + catTrips * floorUs;
      lines.push(`warm cat against its floor: local disk ${diskUs.toFixed(0)} µs + ${catTrips.toFixed(2)} trips${catCounted ? '' : ' (as counted with --metrics)'} x ${floorUs.toFixed(1)} µs = ${catFloorUs.toFixed(0)} µs; the mount ${((median(samples['cache/warm-cat']) * 1000) / n / catFloorUs).toFixed(3)} x that`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  const machine = describeMachine();
  process.stdout.write(`machine: ${machine.nproc} cores, ${machine.cpuModel}, Linux ${machine.kernel}, Node ${machine.node}; load ${machine.loadAverage.join(' ')}\n`);
} finally {
  await cleanUp();
}
