#!/usr/bin/env node
// node bench/workloads/snapshot-only.mjs [--skills N] [--files M] [--runs N] [--work-dir DIR]: the two
// snapshot rows on their own (npm run bench has them too), on a generated catalog of N skills x M
// files (default 10,000 x 5, the full run's); no kernel mount, no /dev/fuse needed. Needs the built dist.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateCatalog, listedFiles } from '../lib/catalogs.mjs';
import { describeMachine } from '../lib/machine.mjs';
import { buildSnapshotRows } from '../lib/report.mjs';
import { renderTable } from '../lib/table.mjs';
import { measureSnapshot, SNAPSHOT_MAX_RUNS } from './snapshot.mjs';

const { values } = parseArgs({ options: { skills: { type: 'string' }, files: { type: 'string' }, runs: { type: 'string' }, 'work-dir': { type: 'string' } } });
const skills = Number(values.skills ?? 10_000);
const filesPerSkill = Number(values.files ?? 5);
const runs = Number(values.runs ?? SNAPSHOT_MAX_RUNS);
const log = (line) => process.stderr.write(`bench: ${line}\n`);
const parent = values['work-dir'] ?? (existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir());
const workDir = await mkdtemp(path.join(parent, 'skills-bench-snapshot-'));
try {
  const dir = path.join(workDir, 'catalog');
  const generateMs = await generateCatalog(dir, { skills, files: filesPerSkill });
  log(`generated ${skills} skills x ${filesPerSkill} files in ${(generateMs / 1000).toFixed(1)} s`);
  const files = await listedFiles(dir);
  const catalog = { name: 'snapshot', dir, files, totalBytes: files.reduce((sum, file) => sum + file.sizeBytes, 0) };
  const rows = buildSnapshotRows(await measureSnapshot({ workDir, catalog, runs, log }));
  process.stdout.write(`${renderTable(rows)}\n`);
  for (const row of rows) {
    process.stdout.write(`${row.id}: ${row.detail}; measured ${row.samples.measured.map((ms) => ms.toFixed(0)).join(', ')} ms; baseline ${row.samples.baseline.map((ms) => ms.toFixed(0)).join(', ')} ms\n`);
  }
  const machine = describeMachine();
  process.stdout.write(`machine: ${machine.nproc} cores, ${machine.cpuModel}, Node ${machine.node}; load ${machine.loadAverage.join(' ')}\n`);
} finally {
  await rm(workDir, { recursive: true, force: true });
}
