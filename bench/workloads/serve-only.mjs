#!/usr/bin/env node
// node bench/workloads/serve-only.mjs [--quick] [--runs N] [--clients N] [--reads N] [--corpus DIR] [--work-dir DIR]:
// the serve rows on their own (npm run bench has them too): skills-mount serve --http in front of
// skills-serve --http, on loopback; no kernel mount, no /dev/fuse needed. The corpus: --corpus DIR,
// else $SKILLS_MOUNT_CORPUS, else the generated test corpus (--quick: trimmed as the quick run trims it).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { prepareCatalog, trimmedCopy } from '../lib/catalogs.mjs';
import { describeMachine } from '../lib/machine.mjs';
import { PROFILES } from '../lib/options.mjs';
import { buildServeRows } from '../lib/serve-report.mjs';
import { standaloneDirs } from '../lib/standalone.mjs';
import { renderTable } from '../lib/table.mjs';
import { measureServe, SERVE_PROFILES } from './serve.mjs';

const { values } = parseArgs({ options: { quick: { type: 'boolean' }, runs: { type: 'string' }, clients: { type: 'string' }, reads: { type: 'string' }, corpus: { type: 'string' }, 'work-dir': { type: 'string' } } });
const mode = values.quick ? 'quick' : 'full';
const sizes = SERVE_PROFILES[mode];
const whole = (text, flag, fallback) => {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} takes a positive whole number, not "${text}"`);
  return value;
};
const runs = whole(values.runs, '--runs', sizes.maxRuns);
const clients = whole(values.clients, '--clients', sizes.clients);
const readsPerClient = whole(values.reads, '--reads', sizes.readsPerClient);
const log = (line) => process.stderr.write(`bench: ${line}\n`);
const corpusDir = values.corpus ?? process.env.SKILLS_MOUNT_CORPUS ?? (await (await import('../../test/support/test-corpus.mjs')).testCorpusDir());
if (!existsSync(corpusDir)) {
  process.stderr.write(`bench: the corpus is missing: ${corpusDir}\n`);
  process.exit(2);
}
const { workDir, diskRoot, cleanUp } = await standaloneDirs('serve', values['work-dir'] ?? (existsSync('/dev/shm') ? '/dev/shm' : undefined));
try {
  let dir = corpusDir;
  const trim = PROFILES[mode].corpusTrim;
  if (trim) {
    dir = path.join(workDir, 'corpus-trimmed');
    const left = await trimmedCopy(corpusDir, dir, trim);
    log(`corpus: leaving out ${left.join(', ') || 'nothing'} (over ${trim.maxFiles} files or ${trim.maxBytes / 1024 / 1024} MiB)`);
  }
  const catalog = await prepareCatalog({ name: 'corpus', dir, diskRoot });
  const rows = buildServeRows(await measureServe({ workDir, catalog, runs, clients, readsPerClient, log }));
  process.stdout.write(`${renderTable(rows)}\n`);
  const machine = describeMachine();
  process.stdout.write(`machine: ${machine.nproc} cores, ${machine.cpuModel}, Node ${machine.node}; load ${machine.loadAverage.join(' ')}\n`);
} finally {
  await cleanUp();
}
