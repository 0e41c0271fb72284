#!/usr/bin/env node
// node bench/workloads/team-only.mjs [--skills N] [--files M] [--runs N] [--lock-runs N] [--quick] [--work-dir DIR]:
// the team lockfile's rows on their own (npm run bench has them too) on a generated catalog of N
// skills x M files (default 1,000 x 3, the link rows' catalog; --quick: 100 x 3, one run): `link
// --project`, cold and unchanged, and `outdated` against today's `link`; `lock` against `approve` in
// the first --lock-runs runs (default 1; 0: not timed). No kernel mount, no /dev/fuse. Needs the built dist.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateCatalog, listedFiles } from '../lib/catalogs.mjs';
import { describeMachine } from '../lib/machine.mjs';
import { buildTeamRows } from '../lib/team-report.mjs';
import { renderTable } from '../lib/table.mjs';
import { measureTeam, TEAM_MAX_RUNS } from './team.mjs';

const { values } = parseArgs({ options: { skills: { type: 'string' }, files: { type: 'string' }, runs: { type: 'string' }, 'lock-runs': { type: 'string' }, quick: { type: 'boolean' }, 'work-dir': { type: 'string' } } });
const quick = values.quick === true;
const skills = Number(values.skills ?? (quick ? 100 : 1_000));
const filesPerSkill = Number(values.files ?? 3);
const runs = Number(values.runs ?? (quick ? 1 : TEAM_MAX_RUNS));
const lockRuns = Number(values['lock-runs'] ?? 1);
for (const [flag, value, least] of [['--skills', skills, 1], ['--files', filesPerSkill, 1], ['--runs', runs, 1], ['--lock-runs', lockRuns, 0]]) {
  if (!Number.isInteger(value) || value < least) {
    process.stderr.write(`team-only: ${flag} must be an integer of at least ${least}\n`);
    process.exit(2);
  }
}
const log = (line) => process.stderr.write(`bench: ${line}\n`);
const parent = values['work-dir'] ?? (existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir());
const workDir = await mkdtemp(path.join(parent, 'skills-bench-team-'));
const startedMs = performance.now();
try {
  const dir = path.join(workDir, 'catalog');
  await generateCatalog(dir, { skills, files: filesPerSkill });
  const files = await listedFiles(dir);
  const catalog = { name: 'team', dir, files, totalBytes: files.reduce((sum, file) => sum + file.sizeBytes, 0) };
  const rows = buildTeamRows(await measureTeam({ workDir, catalog, runs, lockRuns, log }));
  process.stdout.write(`${renderTable(rows)}\n`);
  for (const row of rows) {
    process.stdout.write(`${row.id}: measured ${row.samples.measured.map((ms) => ms.toFixed(0)).join(', ')} ms; baseline ${row.samples.baseline.map((ms) => ms.toFixed(0)).join(', ')} ms; ${row.detail}\n`);
  }
  const machine = describeMachine();
  process.stdout.write(`machine: ${machine.nproc} cores, ${machine.cpuModel}, Linux ${machine.kernel}, Node ${machine.node}; load ${machine.loadAverage.join(' ')}; ${((performance.now() - startedMs) / 1000).toFixed(0)} s\n`);
} finally {
  await rm(workDir, { recursive: true, force: true });
}
