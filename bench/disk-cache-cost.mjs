#!/usr/bin/env node
// node bench/disk-cache-cost.mjs [--runs N] [--corpus DIR] [--dist DIR]: the row "cold read, disk
// cache on / off" on its own (npm run bench has it too): no kernel mount, no /dev/fuse needed.
// Needs the built dist (or --dist: another build to measure, e.g. an older commit's).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { prepareCatalog } from './lib/catalogs.mjs';
import { renderTable } from './lib/table.mjs';
import { diskCacheCostRows } from './workloads/disk-cache-cost.mjs';

const { values } = parseArgs({ options: { runs: { type: 'string' }, corpus: { type: 'string' }, dist: { type: 'string' } } });
const runs = Number(values.runs ?? 5);
const corpusDir = values.corpus ?? (await (await import('../test/support/test-corpus.mjs')).testCorpusDir());
const log = (line) => process.stderr.write(`bench: ${line}\n`);
const workDir = await mkdtemp(path.join(os.tmpdir(), 'skills-bench-cache-cost-'));
try {
  const corpus = await prepareCatalog({ name: 'corpus', dir: corpusDir, diskRoot: workDir });
  const rows = await diskCacheCostRows({ workDir, catalogs: [corpus], runs, log, dist: values.dist && path.resolve(values.dist) });
  process.stdout.write(`${renderTable(rows)}\n`);
  for (const row of rows) process.stdout.write(`${row.id}: ${row.detail}; on ${row.samples.measured.map((ms) => ms.toFixed(0)).join(', ')} ms; off ${row.samples.baseline.map((ms) => ms.toFixed(0)).join(', ')} ms\n`);
} finally {
  await rm(workDir, { recursive: true, force: true });
}
