// Turns the measurements into the table's rows: medians of runs, ratios taken within the run.
import { median, percentile } from './stats.mjs';
import { formatValue, ratioRow, row } from './table.mjs';

const MB = 1e6;
const KB = 1024;
/** "Linear" growth, as checked here: the last step's marginal cost at most this times the first's. */
const LINEAR_SLACK = 1.5;

export function buildRows({ catalogs, reads, big, listing, latency, requests, restart, approved, scaling, snapshot }) {
  const rows = [];
  const pings = catalogs.flatMap((catalog) => reads.samples[`ping/${catalog.name}`] ?? []);
  const floorMs = median(pings);
  rows.push(row({ id: 'floor', workload: 'floor: one empty JSON-RPC round trip (`ping`, stdio)', unit: 'ms', measured: floorMs, detail: `median of ${pings.length}, p99 ${formatValue(percentile(pings, 99), 'ms')}` }));

  for (const catalog of catalogs) {
    const n = catalog.files.length;
    const label = `${catalog.name}, ${n} files, ${(catalog.totalBytes / MB).toFixed(1)} MB`;
    const perFile = (ms) => `${formatValue(ms, 'ms')} (${formatValue(ms / n, 'ms')}/file)`;
    const cold = (kind, title, maxRatio) => {
      const measured = median(reads.samples[`${kind}/${catalog.name}/mount`]);
      const baseline = median(reads.samples[`${kind}/${catalog.name}/raw`]);
      rows.push(ratioRow({ id: `${kind}/${catalog.name}`, workload: `${title} (${label})`, unit: 'ms', measured, baseline, maxRatio, measuredText: perFile(measured), baselineText: perFile(baseline),
        detail: `floor × files = ${formatValue(floorMs * n, 'ms')}`, samples: { measured: reads.samples[`${kind}/${catalog.name}/mount`], baseline: reads.samples[`${kind}/${catalog.name}/raw`] } }));
    };
    const warm = (kind, title, maxRatio) => {
      const measured = median(reads.samples[`${kind}/${catalog.name}/mount`]);
      const baseline = median(reads.samples[`${kind}/${catalog.name}/disk`]);
      rows.push(ratioRow({ id: `${kind}/${catalog.name}`, workload: `${title} (${label})`, unit: 'ms', measured, baseline, maxRatio, measuredText: perFile(measured), baselineText: perFile(baseline),
        samples: { measured: reads.samples[`${kind}/${catalog.name}/mount`], baseline: reads.samples[`${kind}/${catalog.name}/disk`] } }));
    };
    cold('cold-seq', 'cold full read, sequential; vs raw SDK client', 1.1);
    cold('cold-par', 'cold full read, 8 parallel readers; vs raw SDK client, 8 in flight', 1.1);
    warm('warm-cat', 'warm, one `cat` process per file; vs local disk', 1.1);
    warm('warm-one', 'warm, one process reads every file; vs local disk', 5);
    const viewed = approved?.[catalog.name];
    if (viewed) {
      const measured = median(viewed.samples.approved);
      const baseline = median(viewed.samples.full);
      const perViewed = (ms) => `${formatValue(ms, 'ms')} (${formatValue(ms / viewed.files, 'ms')}/file)`;
      rows.push(ratioRow({ id: `approved-view/${catalog.name}`, workload: `warm, one process reads every file through _approved/ (${viewed.skills} skills approved); vs the full view (${label})`, unit: 'ms', measured, baseline, maxRatio: 1.25,
        measuredText: perViewed(measured), baselineText: perViewed(baseline), samples: { measured: viewed.samples.approved, baseline: viewed.samples.full } }));
    }
    const restarted = restart?.[catalog.name];
    if (restarted) {
      const measured = median(restarted.samples.mount);
      const baseline = median(restarted.samples.disk);
      rows.push(ratioRow({ id: `warm-after-restart/${catalog.name}`, workload: `after a restart (disk cache), one process reads every file; vs local disk (${label})`, unit: 'ms', measured, baseline, maxRatio: 5,
        measuredText: perFile(measured), baselineText: perFile(baseline), samples: { measured: restarted.samples.mount, baseline: restarted.samples.disk } }));
    }
  }

  const listMount = median(listing.samples.mount);
  const listDisk = median(listing.samples.disk);
  rows.push(ratioRow({ id: 'ls-lR', workload: `\`ls -lR\`, warm, ${listing.skills.toLocaleString('en')} skills x ${listing.filesPerSkill} files; vs local disk`, unit: 'ms', measured: listMount, baseline: listDisk, maxRatio: 2,
    detail: `${listing.lines} lines`, samples: { measured: listing.samples.mount, baseline: listing.samples.disk } }));
  rows.push(row({ id: 'rss/listing', workload: `skills-mount RSS after \`ls -lR\` of ${listing.files.toLocaleString('en')} files (stdio, ready in ${formatValue(listing.readyMs, 'ms')})`, unit: 'KiB',
    measured: listing.memoryListed.vmRssKiB, detail: `when ready ${formatValue(listing.memoryReady.vmRssKiB, 'KiB')}; VmHWM ${formatValue(listing.memoryListed.vmHwmKiB, 'KiB')}` }));
  if (snapshot) rows.push(...buildSnapshotRows(snapshot));

  for (const [key, transport] of [['big-stdio', 'stdio'], ['big-http', 'Streamable HTTP']]) {
    const mountMs = median(reads.samples[`${key}/mount`].filter(Number.isFinite));
    const mountMBps = big.sizeBytes / MB / (mountMs / 1000);
    const rawMBps = big.sizeBytes / MB / (median(reads.samples[`${key}/raw`]) / 1000);
    const failed = reads.failures[`${key}/mount`] ?? [];
    const ratio = mountMBps / rawMBps;
    rows.push(row({ id: key, workload: `one ${(big.sizeBytes / 1024 / 1024).toFixed(2)} MiB file, cold, ${transport}; vs raw SDK \`resources/read\``, unit: 'MB/s', measured: mountMBps, baseline: rawMBps,
      ratio, target: 'throughput ≥ 0.9 x raw', met: failed.length === 0 && ratio >= 0.9,
      ...(failed.length > 0 && { measuredText: `fails (${failed.length}/${reads.samples[`${key}/mount`].length} runs)${Number.isFinite(mountMBps) ? `; ${formatValue(mountMBps, 'MB/s')} otherwise` : ''}` }),
      detail: failed.length > 0 ? `mount: ${failed[0]}` : undefined, samples: { measured: reads.samples[`${key}/mount`], baseline: reads.samples[`${key}/raw`] } }));
  }

  const small = `${latency.file.sizeBytes} B file`;
  for (const [kind, title] of [['stat', '`stat`'], ['cat', '`cat`']]) {
    for (const p of [50, 99]) {
      const measured = percentile(latency[kind].mount, p);
      const baseline = percentile(latency[kind].disk, p);
      rows.push(row({ id: `latency/${kind}/p${p}`, workload: `p${p} of ${title} on a cached small file (${small}); vs local disk`, unit: 'µs', measured, baseline, ratio: measured / baseline,
        detail: `${latency[kind].mount.length} samples each` }));
    }
  }

  const perFile = (counts, files) => counts.contentReads / files;
  const requestRow = (id, title, counts, divisor, expected) => {
    const measured = perFile(counts, divisor);
    rows.push(row({ id, workload: `MCP content reads ${title} (counted at the server)`, unit: '', measured, target: String(expected), met: measured === expected,
      measuredText: `${Number.isInteger(measured) ? measured : measured.toFixed(3)}`, detail: `all requests: ${methods(counts)}` }));
  };
  requestRow('requests/cold-file', 'per cold file', requests.coldRead, requests.files, 1);
  requestRow('requests/warm-file', 'per warm file (one process)', requests.warmRead, requests.files, 0);
  requestRow('requests/warm-cat', 'per warm file (`cat` per file)', requests.warmCat, requests.files, 0);
  requestRow('requests/stat', 'per `stat` of a listed file', requests.statListed, requests.files, 0);
  requestRow('requests/ls-lR', `for \`ls -lR\` (${requests.files} files, total)`, requests.lsRecursive, 1, 0);
  for (const [name, restarted] of Object.entries(restart ?? {})) {
    requestRow(`requests/after-restart/${name}`, `per file after a restart, from the disk cache (${name})`, restarted.requests, restarted.files, 0);
  }

  for (const size of scaling) {
    const name = `${size.skills.toLocaleString('en')} skills (${size.files.toLocaleString('en')} files)`;
    const ready = median(size.readyMs);
    const raw = median(size.rawListMs);
    rows.push(row({ id: `ready/${size.skills}`, workload: `mount-ready time, ${name}; vs raw full \`skills/list\` (HTTP)`, unit: 'ms', measured: ready, baseline: raw, ratio: ready / raw,
      samples: { measured: size.readyMs, baseline: size.rawListMs } }));
    const rss = median(size.memory.map((m) => m.vmRssKiB));
    const hwm = median(size.memory.map((m) => m.vmHwmKiB));
    rows.push(row({ id: `rss/${size.skills}`, workload: `skills-mount RSS when ready, ${name}`, unit: 'KiB', measured: rss, detail: `VmHWM ${formatValue(hwm, 'KiB')}` }));
  }
  const [first, second] = [scaling[0], scaling[1]];
  const last = scaling[scaling.length - 1];
  const beforeLast = scaling[scaling.length - 2];
  const marginal = (a, b, pick) => (pick(b) - pick(a)) / (b.files - a.files);
  const readyOf = (size) => median(size.readyMs);
  const rssBytesOf = (size) => median(size.memory.map((m) => m.vmRssKiB)) * KB;
  const readyFirst = marginal(first, second, readyOf) * 1000;
  const readyLast = marginal(beforeLast, last, readyOf) * 1000;
  rows.push(row({ id: 'ready/growth', workload: `mount-ready growth: ms per 1,000 more files, ${beforeLast.files.toLocaleString('en')} → ${last.files.toLocaleString('en')} (baseline: ${first.files.toLocaleString('en')} → ${second.files.toLocaleString('en')})`, unit: 'ms', measured: readyLast, baseline: readyFirst,
    ratio: readyLast / readyFirst, target: `linear (ratio ≤ ${LINEAR_SLACK})`, met: readyLast / readyFirst <= LINEAR_SLACK }));
  const rssFirst = marginal(first, second, rssBytesOf);
  const rssLast = marginal(beforeLast, last, rssBytesOf);
  rows.push(row({ id: 'rss/per-file', workload: `RSS per listed file, ${beforeLast.files.toLocaleString('en')} → ${last.files.toLocaleString('en')} files (baseline: the first step)`, unit: 'B/file', measured: rssLast, baseline: rssFirst,
    ratio: rssLast / rssFirst, target: '≤ 1 KB per listed file', met: rssLast <= KB }));
  return rows;
}

/** Requests by method, as the rows' details print them. */
function methods(counts) {
  return Object.entries(counts.byMethod).map(([method, count]) => `${method} ${count}`).join(', ') || 'none';
}

/** The rows "snapshot of N skills (cold)" (vs the raw client, ≤ 1.5) and "second, unchanged snapshot" (vs `cp -al`: no content read, ≤ 2). */
export function buildSnapshotRows(snapshot) {
  const { samples, requests, ownSeconds, files, skills, totalBytes } = snapshot;
  const label = `${skills.toLocaleString('en')} skills, ${files.toLocaleString('en')} files, ${(totalBytes / MB).toFixed(1)} MB`;
  const perFile = (ms) => `${formatValue(ms, 'ms')} (${formatValue(ms / files, 'ms')}/file)`;
  const cold = median(samples.cold);
  const raw = median(samples.raw);
  const second = median(samples.second);
  const copy = median(samples.copy);
  // Every run must read nothing: the worst run is the one shown.
  const secondReads = Math.max(...requests.second.map((counts) => counts.contentReads));
  const own = (seconds) => `${formatValue(median(seconds) * 1000, 'ms')} after the listing (its summary line)`;
  return [
    ratioRow({ id: 'snapshot/cold', workload: `snapshot of ${skills.toLocaleString('en')} skills (cold): \`skills-mount snapshot\`, new DEST, \`--no-disk-cache\`, stdio (${label}); vs the raw SDK client (the same protocol, ${snapshot.protocol}) listing and reading the same files, ${snapshot.inFlight} in flight`,
      unit: 'ms', measured: cold, baseline: raw, maxRatio: 1.5, measuredText: perFile(cold), baselineText: perFile(raw),
      detail: `requests: ${methods(requests.cold.at(-1))}; of the command's time, ${own(ownSeconds.cold)}`, samples: { measured: samples.cold, baseline: samples.raw } }),
    row({ id: 'snapshot/unchanged', workload: `second, unchanged snapshot of the same DEST (${label}); vs \`cp -al\` of the published tree`, unit: 'ms', measured: second, baseline: copy,
      ratio: second / copy, target: '0 `resources/read`, ≤ 2', met: secondReads === 0 && second / copy <= 2,
      measuredText: `${formatValue(second, 'ms')} (${secondReads} \`resources/read\`)`,
      detail: `requests: ${methods(requests.second.at(-1))}; of the command's time, ${own(ownSeconds.second)}`, samples: { measured: samples.second, baseline: samples.copy } }),
  ];
}
