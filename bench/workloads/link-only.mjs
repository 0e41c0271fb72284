#!/usr/bin/env node
// node bench/workloads/link-only.mjs [--skills N] [--files M] [--runs N] [--pickup N] [--work-dir DIR]:
// the link rows on their own (npm run bench has them too): `skills-mount link` of N approved skills
// x M files (default 1,000 x 3) into one root, against cp -r (no kernel mount); and, with --pickup N
// (default 0), N skills approved in a running Claude Code session, with a mount (needs /dev/fuse)
// and without. Needs the built dist, and for --pickup scripts/harnesses.sh.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateCatalog, listedFiles } from '../lib/catalogs.mjs';
import { describeMachine } from '../lib/machine.mjs';
import { buildLinkRows } from '../lib/report.mjs';
import { renderTable } from '../lib/table.mjs';
import { measureLink } from './link.mjs';
import { measureLinkPickup } from './link-pickup.mjs';

const { values } = parseArgs({ options: { skills: { type: 'string' }, files: { type: 'string' }, runs: { type: 'string' }, pickup: { type: 'string' }, 'work-dir': { type: 'string' } } });
const skills = Number(values.skills ?? 1_000);
const filesPerSkill = Number(values.files ?? 3);
const runs = Number(values.runs ?? 5);
const pickupSamples = Number(values.pickup ?? 0);
const log = (line) => process.stderr.write(`bench: ${line}\n`);
const parent = values['work-dir'] ?? os.tmpdir();
const workDir = await mkdtemp(path.join(parent, 'skills-bench-link-'));
try {
  const dir = path.join(workDir, 'catalog');
  await generateCatalog(dir, { skills, files: filesPerSkill });
  const files = await listedFiles(dir);
  const catalog = { name: 'link', dir, files, totalBytes: files.reduce((sum, file) => sum + file.sizeBytes, 0) };
  const link = await measureLink({ workDir, catalog, runs, log });
  const pickup = pickupSamples > 0 ? await measureLinkPickup({ workDir, samples: pickupSamples, log }) : undefined;
  const rows = buildLinkRows(link, pickup);
  process.stdout.write(`${renderTable(rows)}\n`);
  for (const row of rows) {
    if (row.samples === undefined) continue;
    const baseline = row.samples.baseline ? `; baseline ${row.samples.baseline.map((ms) => ms.toFixed(0)).join(', ')} ms` : '';
    process.stdout.write(`${row.id}: measured ${row.samples.measured.map((ms) => ms.toFixed(0)).join(', ')} ms${baseline}\n`);
  }
  const machine = describeMachine();
  process.stdout.write(`machine: ${machine.nproc} cores, ${machine.cpuModel}, Node ${machine.node}; load ${machine.loadAverage.join(' ')}\n`);
} finally {
  await rm(workDir, { recursive: true, force: true });
}
