// Turns the measurements into the table's rows: medians of runs, ratios taken within the run.
// Rows that involve a mount carry one cell per FUSE backend against one baseline; targets
// (issue 19's where it names the row) are judged on the first backend, libfuse3 by default.
import { BIG_CASES, BIG_READS } from '../workloads/big-file.mjs';
import { REGIMES } from '../workloads/round-trip.mjs';
import { median, percentile } from './stats.mjs';
import { atMost, atMostRatio, backendRow, exactly, formatValue, ratioRow, row } from './table.mjs';

const MB = 1e6;
const KB = 1024;
/** "Linear" growth, as checked here: the last step's marginal cost at most this times the first's. */
const LINEAR_SLACK = 1.5;
/** issue 19: a change reaches `cat` within this long after the mount learns of it. */
const CHANGE_SEEN_MAX_MS = 1_000;

/** Every row: those measured on each backend first, then those measured once. */
export function buildRows({ backends, catalogs, reads, bigReads, big, listing, latency, roundTrip, requests, restart, approved, changes, scaling, snapshot }) {
  const cellsOf = (pick) => Object.fromEntries(backends.map((backend) => [backend, pick(backend)]));
  const rows = [];
  const pings = catalogs.flatMap((catalog) => reads.samples[`ping/${catalog.name}`] ?? []);
  const floorMs = median(pings);

  rows.push(backendRow({ id: 'round-trip', workload: 'one round trip: µs per `stat` with kernel timeouts 0 (`--metadata-ttl 0`; the server\'s directory, one lookup); vs local disk', unit: 'µs',
    baseline: median(roundTrip.disk), cells: cellsOf((backend) => ({ measured: median(roundTrip.byBackend[backend]), samples: roundTrip.byBackend[backend] })),
    detail: `medians of ${roundTrip.disk.length} calls each`, samples: { baseline: roundTrip.disk } }));
  rows.push(...buildRoundTripRows(roundTrip, cellsOf));

  for (const catalog of catalogs) {
    const n = catalog.files.length;
    const label = `${catalog.name}, ${n} files, ${(catalog.totalBytes / MB).toFixed(1)} MB`;
    const perFile = (ms, files = n) => `${formatValue(ms, 'ms')} (${formatValue(ms / files, 'ms')}/file)`;
    // Mount samples are keyed KIND/CATALOG/BACKEND, the baseline's KIND/CATALOG/raw or /disk.
    const vsBaseline = (kind, baselineKey, title, maxRatio, detail) => {
      const baselineSamples = reads.samples[`${kind}/${catalog.name}/${baselineKey}`];
      const baseline = median(baselineSamples);
      rows.push(backendRow({ id: `${kind}/${catalog.name}`, workload: `${title} (${label})`, unit: 'ms', baseline, baselineText: perFile(baseline), bound: atMostRatio(maxRatio), detail,
        cells: cellsOf((backend) => {
          const samples = reads.samples[`${kind}/${catalog.name}/${backend}`];
          return { measured: median(samples), measuredText: perFile(median(samples)), samples };
        }),
        samples: { baseline: baselineSamples } }));
    };
    const floorDetail = `floor × files = ${formatValue(floorMs * n, 'ms')}`;
    vsBaseline('cold-seq', 'raw', 'cold full read, sequential; vs raw SDK client', 1.4, floorDetail);
    vsBaseline('cold-par', 'raw', 'cold full read, 8 parallel readers; vs raw SDK client, 8 in flight', 1.4, floorDetail);
    vsBaseline('warm-cat', 'disk', 'warm, one `cat` process per file; vs local disk', 1.05);
    vsBaseline('warm-one', 'disk', 'warm, one process reads every file; vs local disk', 1.5);

    const viewed = approved[catalog.name];
    const firstViewed = viewed[backends[0]];
    // Each backend's own full view is its baseline.
    rows.push(backendRow({ id: `approved-view/${catalog.name}`, workload: `warm, one process reads every file through _approved/ (${firstViewed.skills} skills approved); vs the full view of the same mount (${label})`, unit: 'ms',
      baselineText: 'the full view (in each cell)', bound: atMostRatio(1.25),
      cells: cellsOf((backend) => {
        const { samples, files } = viewed[backend];
        const full = median(samples.full);
        return { measured: median(samples.approved), baseline: full, measuredText: `${perFile(median(samples.approved), files)}; full view ${formatValue(full, 'ms')}`, samples };
      }) }));

    rows.push(buildRestartRow(restart[catalog.name], catalog, cellsOf));
  }

  const listDisk = median(listing.disk);
  rows.push(backendRow({ id: 'ls-lR', workload: `\`ls -lR\`, warm, ${listing.skills.toLocaleString('en')} skills x ${listing.filesPerSkill} files; vs local disk`, unit: 'ms', baseline: listDisk, bound: atMostRatio(1.2),
    detail: `${listing.lines} lines`, cells: cellsOf((backend) => ({ measured: median(listing.byBackend[backend].samples), samples: listing.byBackend[backend].samples })), samples: { baseline: listing.disk } }));
  rows.push(backendRow({ id: 'rss/listing', workload: `skills-mount RSS after \`ls -lR\` of ${listing.files.toLocaleString('en')} files (stdio)`, unit: 'KiB',
    cells: cellsOf((backend) => {
      const { memoryReady, memoryListed, readyMs } = listing.byBackend[backend];
      return { measured: memoryListed.vmRssKiB, detail: `ready in ${formatValue(readyMs, 'ms')}, when ready ${formatValue(memoryReady.vmRssKiB, 'KiB')}; VmHWM ${formatValue(memoryListed.vmHwmKiB, 'KiB')}` };
    }) }));

  rows.push(...buildBigRows(bigReads, big, cellsOf));

  const small = `${latency.file.sizeBytes} B file`;
  for (const [kind, title] of [['stat', '`stat`'], ['cat', '`cat`']]) {
    for (const p of [50, 99]) {
      rows.push(backendRow({ id: `latency/${kind}/p${p}`, workload: `p${p} of ${title} on a cached small file (${small}); vs local disk`, unit: 'µs', baseline: percentile(latency.disk[kind], p),
        detail: `${latency.disk[kind].length} samples each`, cells: cellsOf((backend) => ({ measured: percentile(latency.byBackend[backend][kind], p) })) }));
    }
  }

  rows.push(...buildChangeRows(changes, cellsOf));

  const requestRow = (id, title, pick, divisor, expected) => {
    rows.push(backendRow({ id, workload: `MCP content reads ${title} (counted at the server)`, unit: '', bound: exactly(expected),
      cells: cellsOf((backend) => {
        const counts = pick(backend);
        const measured = counts.contentReads / divisor;
        return { measured, measuredText: `${Number.isInteger(measured) ? measured : measured.toFixed(3)}`, detail: `all requests: ${methods(counts)}` };
      }) }));
  };
  const phase = (name) => (backend) => requests.byBackend[backend][name];
  requestRow('requests/cold-file', 'per cold file', phase('coldRead'), requests.files, 1);
  requestRow('requests/warm-file', 'per warm file (one process)', phase('warmRead'), requests.files, 0);
  requestRow('requests/warm-cat', 'per warm file (`cat` per file)', phase('warmCat'), requests.files, 0);
  requestRow('requests/stat', 'per `stat` of a listed file', phase('statListed'), requests.files, 0);
  requestRow('requests/ls-lR', `for \`ls -lR\` (${requests.files} files, total)`, phase('lsRecursive'), 1, 0);
  for (const [name, restarted] of Object.entries(restart)) {
    requestRow(`requests/after-restart/${name}`, `per file after a restart, from the disk cache (${name})`, (backend) => restarted.byBackend[backend].requests, restarted.files, 0);
  }

  rows.push(row({ id: 'floor', workload: 'floor: one empty JSON-RPC round trip (`ping`, stdio)', unit: 'ms', measured: floorMs, detail: `median of ${pings.length}, p99 ${formatValue(percentile(pings, 99), 'ms')}` }));
  rows.push(...buildSnapshotRows(snapshot), ...buildScalingRows(scaling));
  return rows;
}

/**
 * The round trip pinned in each vCPU regime against the pure-C floor (issue 29: ≤ 1.3 x), each
 * cell with the requests per stat that reached JS and that the addon answered; and those requests
 * as a row of their own (0 reach JS once the name was looked up).
 */
/** The row of reads after a restart, from the disk cache, of one catalog; vs local disk. */
export function buildRestartRow(restarted, catalog, cellsOf) {
  const n = catalog.files.length;
  const label = `${catalog.name}, ${n} files, ${(catalog.totalBytes / MB).toFixed(1)} MB`;
  const perFile = (ms) => `${formatValue(ms, 'ms')} (${formatValue(ms / n, 'ms')}/file)`;
  const disk = median(restarted.disk);
  return backendRow({ id: `warm-after-restart/${catalog.name}`, workload: `after a restart (disk cache), one process reads every file; vs local disk (${label})`, unit: 'ms', baseline: disk, baselineText: perFile(disk), bound: atMostRatio(3),
    cells: cellsOf((backend) => {
      const { samples } = restarted.byBackend[backend];
      return { measured: median(samples), measuredText: perFile(median(samples)), samples };
    }),
    samples: { baseline: restarted.disk } });
}

export function buildRoundTripRows(roundTrip, cellsOf) {
  const rows = [];
  const perStat = (value) => (Number.isInteger(value) ? String(value) : value.toFixed(3));
  for (const regime of REGIMES) {
    const pinnedRun = roundTrip.pinned?.[regime.id];
    if (pinnedRun === undefined) continue;
    rows.push(backendRow({ id: `round-trip/${regime.id}`, workload: `one round trip pinned, ${regime.title}: µs per \`stat\` with kernel timeouts 0 (requests per stat to JS / answered by the addon); vs the floor, a pure-C libfuse 3 low-level daemon answering from a table`, unit: 'µs',
      baseline: median(pinnedRun.floor), bound: atMostRatio(1.3), samples: { baseline: pinnedRun.floor },
      cells: cellsOf((backend) => {
        const { samples, perStat: requests } = pinnedRun.byBackend[backend];
        return { measured: median(samples), measuredText: `${formatValue(median(samples), 'µs')} (${perStat(requests.js)} / ${perStat(requests.addon)})`, samples, requests };
      }) }));
  }
  const first = REGIMES.map((regime) => roundTrip.pinned?.[regime.id]).find((pinnedRun) => pinnedRun !== undefined);
  if (first !== undefined) {
    rows.push(backendRow({ id: 'requests/round-trip', workload: 'FUSE requests reaching the daemon\'s JavaScript per `stat` with kernel timeouts 0, after the first (the addon answers the rest)', unit: '', bound: exactly(0),
      cells: cellsOf((backend) => {
        const { js, addon } = first.byBackend[backend].perStat;
        return { measured: js, measuredText: perStat(js), detail: `answered by the addon: ${perStat(addon)} per stat` };
      }) }));
  }
  return rows;
}

/**
 * The two rows of a change on the server reaching `cat` (p50 / p90 / max of the changes, the
 * max judged): from the mount learning of it (its log line), and from the write.
 */
function buildChangeRows(changes, cellsOf) {
  const settings = ({ count, metadataTtlSeconds }) => `${count} changes, ${metadataTtlSeconds === undefined ? 'default kernel timeouts (600 s)' : `--metadata-ttl ${metadataTtlSeconds}`}`;
  const which = Object.entries(changes).map(([backend, result]) => `${backend}: ${settings(result)}`).join('; ');
  const changeRow = (id, title, pick, bound) =>
    backendRow({ id, workload: `a change on the server to new bytes (same size and a new size in turn): ms from ${title} to \`cat\` showing them; p50 / p90 / max (${which})`, unit: 'ms', bound,
      cells: cellsOf((backend) => {
        const { samples, timedOut } = changes[backend];
        const values = samples.map(pick);
        const spread = values.length === 0 ? 'no change seen' : [50, 90, 100].map((p) => formatValue(percentile(values, p), 'ms')).join(' / ');
        return { measured: timedOut ? Number.NaN : percentile(values, 100), measuredText: timedOut ? `fails: ${timedOut}; before: ${spread}` : spread, samples: values,
          detail: `write -> the mount's log line: p50 ${formatValue(percentile(samples.map((sample) => sample.writtenToLearnedMs), 50), 'ms')}` };
      }) });
  return [
    changeRow('change/learned', 'the mount learning of it (its log line)', (sample) => sample.learnedToSeenMs, atMost(CHANGE_SEEN_MAX_MS, 'max ≤ 1 s')),
    changeRow('change/written', 'the write in the served directory', (sample) => sample.writtenToSeenMs),
  ];
}

/** Mount-ready time and RSS per catalog size, and their growth from the first step to the last. */
function buildScalingRows(scaling) {
  const rows = [];
  for (const size of scaling) {
    const name = `${size.skills.toLocaleString('en')} skills (${size.files.toLocaleString('en')} files; ${size.backend})`;
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

/** issue 28: a running Claude Code session lists a skill approved meanwhile within this long. */
const PICKUP_MAX_MS = 10_000;

/**
 * The link rows (issue 28): a cold link of N approved skills against cp -r, an unchanged one
 * against cp -al, and (when measured) from approve returning to the skill listed in a running
 * Claude Code session, with a mount and without.
 */
export function buildLinkRows(link, pickup) {
  const { samples, skills, files, totalBytes } = link;
  const label = `${skills.toLocaleString('en')} approved skills, ${files.toLocaleString('en')} files, ${(totalBytes / MB).toFixed(1)} MB`;
  return [
    row({ id: 'link/cold', workload: `\`skills-mount link claude-code\` into an empty root, no mount (link starts the stdio server itself): every file fetched, verified, copied into the store, one link per skill (${label}); vs \`cp -r\` of the served folder`,
      unit: 'ms', measured: median(samples.cold), baseline: median(samples.copy), ratio: median(samples.cold) / median(samples.copy), target: 'report', met: null, samples: { measured: samples.cold, baseline: samples.copy } }),
    row({ id: 'link/unchanged', workload: `the same \`link\` again, nothing changed (the server started and listed, its approvals judged; no byte read); vs \`cp -al\` of the copied tree`,
      unit: 'ms', measured: median(samples.unchanged), baseline: median(samples.copyLinks), ratio: median(samples.unchanged) / median(samples.copyLinks), target: 'report', met: null, samples: { measured: samples.unchanged, baseline: samples.copyLinks } }),
    ...pickupRows(pickup),
  ];
}

function pickupRows(pickup) {
  if (pickup === undefined) return [];
  const ways = [
    { id: 'link/pickup-mount', how: 'with a running mount (`approve MOUNT/LABEL/SKILL`: the linked root current when it returns)', key: 'fuse' },
    { id: 'link/pickup-no-fuse', how: 'no FUSE (`approve LABEL/SKILL --config FILE`: the same from the server it starts)', key: 'noFuse' },
  ];
  return ways.map(({ id, how, key }) => {
    const workload = `from \`approve\` returning to the skill listed in a running Claude Code session${pickup.version ? ` ${pickup.version}` : ''}, ${how}; p50 (max)`;
    if (pickup.skipped) return row({ id, workload, unit: 'ms', measured: null, measuredText: `not measured: ${pickup.skipped}`, target: `≤ ${PICKUP_MAX_MS / 1000} s` });
    const samples = pickup[key];
    const worst = Math.max(...samples);
    return row({ id, workload, unit: 'ms', measured: median(samples), measuredText: `${formatValue(median(samples), 'ms')} (${formatValue(worst, 'ms')})`,
      target: `≤ ${PICKUP_MAX_MS / 1000} s`, met: worst <= PICKUP_MAX_MS, detail: `${samples.length} skills approved one after another in one session`, samples: { measured: samples } });
  });
}

/** issue 29: 16 MiB through the mount at least this times the raw client's throughput, on either transport. */
const BIG_MIN_RATIO = 0.9;

/**
 * The 16 MiB rows (workloads/big-file.mjs): per case and read, the mount's throughput against the
 * raw client's in the same state (a process of its own, the same era, the same read of the two).
 */
export function buildBigRows(bigReads, big, cellsOf) {
  const rows = [];
  const mbps = (ms) => big.sizeBytes / MB / (ms / 1000);
  const mib = (big.sizeBytes / 1024 / 1024).toFixed(2);
  for (const { kind, transport } of BIG_CASES) {
    for (const read of BIG_READS) {
      const raw = bigReads.samples[`${kind}/${read}/raw`];
      const which = read === 'first' ? 'the first large read of a new process' : 'the second, another file (V8 warmed up)';
      rows.push(backendRow({ id: read === 'first' ? kind : `${kind}/${read}`, workload: `one ${mib} MiB file, cold, ${transport}, ${which}; vs a raw SDK client's same read in a process of its own`, unit: 'MB/s', baseline: mbps(median(raw)),
        bound: { target: `throughput ≥ ${BIG_MIN_RATIO} x raw`, judge: (cell) => cell.failures.length === 0 && cell.ratio >= BIG_MIN_RATIO },
        cells: cellsOf((backend) => {
          const samples = bigReads.samples[`${kind}/${read}/${backend}`];
          const failures = bigReads.failures[`${kind}/${read}/${backend}`] ?? [];
          const measured = mbps(median(samples.filter(Number.isFinite)));
          return { measured, failures, samples,
            ...(failures.length > 0 && { measuredText: `fails (${failures.length}/${samples.length} runs)${Number.isFinite(measured) ? `; ${formatValue(measured, 'MB/s')} otherwise` : ''}`, detail: failures[0] }) };
        }),
        samples: { baseline: raw } }));
    }
  }
  return rows;
}
