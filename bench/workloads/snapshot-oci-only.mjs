#!/usr/bin/env node
// node bench/workloads/snapshot-oci-only.mjs [--skills N] [--files M] [--runs N] [--work-dir DIR]:
// issue 52's row: `skills-mount snapshot DEST --oci` of a generated catalog of N skills x M files
// (default 1,000 x 3) over stdio skills-serve, --no-disk-cache, against a plain `snapshot DEST` of
// the same catalog in the same run (the image's own cost is the ratio's excess); seconds, the
// layout's bytes (every blob) and the layer's; each run's index digest printed (they must agree:
// the image is reproducible). No kernel mount. Needs the built dist.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { generateCatalog, listedFiles } from '../lib/catalogs.mjs';
import { describeMachine } from '../lib/machine.mjs';
import { SKILLS_MOUNT, SKILLS_SERVE } from '../lib/paths.mjs';
import { median } from '../lib/stats.mjs';

const run = promisify(execFile);
const { values } = parseArgs({ options: { skills: { type: 'string' }, files: { type: 'string' }, runs: { type: 'string' }, 'work-dir': { type: 'string' } } });
const skills = Number(values.skills ?? 1_000);
const filesPerSkill = Number(values.files ?? 3);
const runs = Math.max(1, Math.min(5, Number(values.runs ?? 3)));
const log = (line) => process.stderr.write(`bench: ${line}\n`);
const parent = values['work-dir'] ?? (existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir());
const workDir = await mkdtemp(path.join(parent, 'skills-bench-oci-'));
const MIB = 1024 * 1024;

/** `skills-mount snapshot DEST [--oci]`: ms, and the digest it prints (the image index's with --oci). */
async function snapshot(config, dest, oci) {
  const home = await mkdtemp(path.join(workDir, 'home-'));
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_CACHE_HOME: path.join(home, '.cache'), XDG_DATA_HOME: path.join(home, '.local', 'share'), XDG_STATE_HOME: path.join(home, '.local', 'state') };
  const started = performance.now();
  const { stdout } = await run(process.execPath, [SKILLS_MOUNT, 'snapshot', dest, '--config', config, '--no-disk-cache', ...(oci ? ['--oci'] : [])], { env, maxBuffer: 1 << 24, timeout: 600_000 });
  return { ms: performance.now() - started, digest: stdout.trim().split('\n').at(-1) };
}

/** Every blob of an image layout, and the largest (the layer). */
async function layoutBytes(dest) {
  const blobs = path.join(dest, 'blobs', 'sha256');
  const sizes = await Promise.all((await readdir(blobs)).map(async (name) => (await stat(path.join(blobs, name))).size));
  return { total: sizes.reduce((sum, size) => sum + size, 0), layer: Math.max(...sizes) };
}

try {
  const dir = path.join(workDir, 'catalog');
  const generateMs = await generateCatalog(dir, { skills, files: filesPerSkill });
  const files = await listedFiles(dir);
  const catalogBytes = files.reduce((sum, file) => sum + file.sizeBytes, 0);
  log(`generated ${skills} skills x ${filesPerSkill} files (${(catalogBytes / MIB).toFixed(1)} MiB) in ${(generateMs / 1000).toFixed(1)} s`);
  const config = path.join(workDir, 'config.json');
  await writeFile(config, JSON.stringify({ mcpServers: { bench: { command: process.execPath, args: [SKILLS_SERVE, dir] } } }));
  const oci = [];
  const plain = [];
  const digests = new Set();
  let bytes;
  for (let i = 0; i < runs; i++) {
    // Which goes first alternates, as everywhere in the benchmark.
    for (const side of i % 2 === 0 ? ['oci', 'plain'] : ['plain', 'oci']) {
      const dest = path.join(workDir, `${side}-${i}`);
      const result = await snapshot(config, dest, side === 'oci');
      if (side === 'oci') {
        oci.push(result.ms);
        digests.add(result.digest);
        bytes = await layoutBytes(dest);
      } else plain.push(result.ms);
      await rm(dest, { recursive: true, force: true });
      await rm(path.join(workDir, `.${side}-${i}.snapshots`), { recursive: true, force: true });
    }
    log(`run ${i + 1}/${runs}: --oci ${(oci.at(-1) / 1000).toFixed(2)} s, plain ${(plain.at(-1) / 1000).toFixed(2)} s`);
  }
  const measured = median(oci);
  const baseline = median(plain);
  process.stdout.write(
    `| snapshot/oci | snapshot --oci of ${skills.toLocaleString('en-US')} skills x ${filesPerSkill} files (${files.length.toLocaleString('en-US')} files, ${(catalogBytes / MIB).toFixed(1)} MiB), --no-disk-cache | ${(measured / 1000).toFixed(2)} s | plain snapshot ${(baseline / 1000).toFixed(2)} s | ${(measured / baseline).toFixed(2)} | layout ${(bytes.total / MIB).toFixed(2)} MiB, layer ${(bytes.layer / MIB).toFixed(2)} MiB |\n`,
  );
  process.stdout.write(`index digests over ${runs} runs: ${[...digests].join(', ')}${digests.size === 1 ? ' (one: reproducible)' : ' (DIFFER)'}\n`);
  const machine = describeMachine();
  process.stdout.write(`machine: ${machine.nproc} cores, ${machine.cpuModel}, Node ${machine.node}; load ${machine.loadAverage.join(' ')}\n`);
  if (digests.size !== 1) process.exitCode = 1;
} finally {
  await rm(workDir, { recursive: true, force: true });
}
