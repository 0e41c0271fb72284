#!/usr/bin/env node
// node bench/workloads/big-only.mjs [--backends LIST] [--runs N] [--mib M] [--work-dir DIR]: the 16 MiB
// rows on their own (npm run bench has them too): two large files through a new mount per run,
// against a raw SDK client in a new process, per transport and era. Needs the built dist and /dev/fuse.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateCatalog, prepareCatalog } from '../lib/catalogs.mjs';
import { describeMachine } from '../lib/machine.mjs';
import { BACKENDS } from '../lib/options.mjs';
import { buildBigRows } from '../lib/report.mjs';
import { standaloneDirs } from '../lib/standalone.mjs';
import { renderTable } from '../lib/table.mjs';
import { bigFiles, measureBigReads } from './big-file.mjs';

const { values } = parseArgs({ options: { backends: { type: 'string' }, runs: { type: 'string' }, mib: { type: 'string' }, 'work-dir': { type: 'string' } } });
const backends = (values.backends ?? 'libfuse3').split(',');
for (const backend of backends) if (!BACKENDS.includes(backend)) throw new Error(`--backends: unknown ${backend} (of ${BACKENDS.join(', ')})`);
const runs = Number(values.runs ?? 5);
const sizeBytes = Number(values.mib ?? 16) * 1024 * 1024 - 4096;
const log = (line) => process.stderr.write(`bench: ${line}\n`);
const { workDir, diskRoot, cleanUp } = await standaloneDirs('big', values['work-dir']);
try {
  const dir = path.join(workDir, 'big-skill');
  await generateCatalog(dir, { skills: 0, big: sizeBytes, 'big-files': 2 });
  const big = bigFiles(dir, await prepareCatalog({ name: 'big', dir, diskRoot }), sizeBytes);
  const bigReads = await measureBigReads({ workDir, runs, big, backends, log });
  const cellsOf = (pick) => Object.fromEntries(backends.map((backend) => [backend, pick(backend)]));
  process.stdout.write(`${renderTable(buildBigRows(bigReads, big, cellsOf))}\n`);
  const machine = describeMachine();
  process.stdout.write(`medians of ${runs} runs; machine: ${machine.nproc} cores, ${machine.cpuModel}, Linux ${machine.kernel}, Node ${machine.node}; load ${machine.loadAverage.join(' ')}\n`);
} finally {
  await cleanUp();
}
