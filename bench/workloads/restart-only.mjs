#!/usr/bin/env node
// node bench/workloads/restart-only.mjs [--backends LIST] [--runs N] [--corpus DIR] [--work-dir DIR]:
// the rows of reads after a restart on their own (npm run bench has them too): each run a fresh
// daemon on a filled disk cache reads every file once, against local disk; the generated catalog,
// and a corpus when given. Default backends: libfuse3 and libfuse3-no-copies (every open in JS).
// Needs the built dist and /dev/fuse.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateCatalog, prepareCatalog } from '../lib/catalogs.mjs';
import { describeMachine } from '../lib/machine.mjs';
import { BACKENDS, PROFILES } from '../lib/options.mjs';
import { buildRestartRow } from '../lib/report.mjs';
import { standaloneDirs } from '../lib/standalone.mjs';
import { renderTable } from '../lib/table.mjs';
import { measureRestart } from './restart.mjs';

const { values } = parseArgs({ options: { backends: { type: 'string' }, runs: { type: 'string' }, corpus: { type: 'string' }, 'work-dir': { type: 'string' } } });
const backends = (values.backends ?? 'libfuse3,libfuse3-no-copies').split(',');
for (const backend of backends) if (!BACKENDS.includes(backend)) throw new Error(`--backends: unknown ${backend} (of ${BACKENDS.join(', ')})`);
const runs = Number(values.runs ?? 5);
const log = (line) => process.stderr.write(`bench: ${line}\n`);
const { workDir, diskRoot, cleanUp } = await standaloneDirs('restart', values['work-dir']);
try {
  const dir = path.join(workDir, 'synthetic');
  await generateCatalog(dir, PROFILES.full.synthetic);
  const catalogs = [await prepareCatalog({ name: 'synthetic', dir, diskRoot })];
  if (values.corpus !== undefined) catalogs.push(await prepareCatalog({ name: 'corpus', dir: path.resolve(values.corpus), diskRoot }));
  const restart = await measureRestart({ workDir, catalogs, runs, backends, log });
  const cellsOf = (pick) => Object.fromEntries(backends.map((backend) => [backend, pick(backend)]));
  process.stdout.write(`${renderTable(catalogs.map((catalog) => buildRestartRow(restart[catalog.name], catalog, cellsOf)))}\n`);
  const machine = describeMachine();
  process.stdout.write(`medians of ${runs} runs; machine: ${machine.nproc} cores, ${machine.cpuModel}, Linux ${machine.kernel}, Node ${machine.node}; load ${machine.loadAverage.join(' ')}\n`);
} finally {
  await cleanUp();
}
