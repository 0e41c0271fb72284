#!/usr/bin/env node
// node bench/workloads/round-trip-only.mjs [--backends LIST] [--count N] [--work-dir DIR]: the round
// trip rows on their own (npm run bench has them too): µs per stat with kernel timeouts 0, unpinned
// against local disk, and pinned in both vCPU regimes against the pure-C floor, with the requests
// per stat that reached JS. Needs the built dist, /dev/fuse, gcc and libfuse3-dev (the floor).
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateCatalog, prepareCatalog } from '../lib/catalogs.mjs';
import { describeMachine } from '../lib/machine.mjs';
import { BACKENDS } from '../lib/options.mjs';
import { buildRoundTripRows } from '../lib/report.mjs';
import { median } from '../lib/stats.mjs';
import { standaloneDirs } from '../lib/standalone.mjs';
import { backendRow, renderTable } from '../lib/table.mjs';
import { measureRoundTrip } from './round-trip.mjs';

const { values } = parseArgs({ options: { backends: { type: 'string' }, count: { type: 'string' }, 'work-dir': { type: 'string' } } });
const backends = (values.backends ?? 'libfuse3,libfuse3-no-table').split(',');
for (const backend of backends) if (!BACKENDS.includes(backend)) throw new Error(`--backends: unknown ${backend} (of ${BACKENDS.join(', ')})`);
const count = Number(values.count ?? 2_000);
const log = (line) => process.stderr.write(`bench: ${line}\n`);
const { workDir, diskRoot, cleanUp } = await standaloneDirs('round-trip', values['work-dir']);
try {
  const dir = path.join(workDir, 'synthetic');
  await generateCatalog(dir, { skills: 20, files: 5, group: 10 });
  const catalog = await prepareCatalog({ name: 'synthetic', dir, diskRoot });
  const roundTrip = await measureRoundTrip({ workDir, catalog, count, backends, log });
  const cellsOf = (pick) => Object.fromEntries(backends.map((backend) => [backend, pick(backend)]));
  const rows = [
    backendRow({ id: 'round-trip', workload: 'one round trip: µs per `stat` with kernel timeouts 0, unpinned; vs local disk', unit: 'µs', baseline: median(roundTrip.disk), cells: cellsOf((backend) => ({ measured: median(roundTrip.byBackend[backend]) })) }),
    ...buildRoundTripRows(roundTrip, cellsOf),
  ];
  process.stdout.write(`${renderTable(rows)}\n`);
  const machine = describeMachine();
  process.stdout.write(`medians of ${count} calls each; machine: ${machine.nproc} cores, ${machine.cpuModel}, Linux ${machine.kernel}, Node ${machine.node}; load ${machine.loadAverage.join(' ')}\n`);
} finally {
  await cleanUp();
}
