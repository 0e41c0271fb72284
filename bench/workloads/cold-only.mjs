#!/usr/bin/env node
// node bench/workloads/cold-only.mjs [--runs N] [--work-dir DIR]: where a cold sequential read of
// the generated catalog spends its time, per file (npm run bench has the ratio; this takes it
// apart). Each run: the raw SDK client in both eras (2025 `initialize`, the bench's baseline, and
// 2026-07-28, which the mount negotiates), then a fresh libfuse3 mount with --metrics. Reports
// wall time, the CPU of the process holding the client (the bench's own for raw, the daemon's for
// the mount), and from the daemon's metrics the time it took to answer each OPEN and the
// `resources/read` inside it. Needs the built dist and /dev/fuse.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateCatalog, prepareCatalog } from '../lib/catalogs.mjs';
import { describeMachine } from '../lib/machine.mjs';
import { freePort } from '../lib/free-port.mjs';
import { serveEntry, startMount } from '../lib/mount-child.mjs';
import { PROFILES } from '../lib/options.mjs';
import { connectStdio, listAllSkills, readAll } from '../lib/raw-client.mjs';
import { readFiles } from '../lib/readers.mjs';
import { median } from '../lib/stats.mjs';
import { standaloneDirs } from '../lib/standalone.mjs';

const { values } = parseArgs({ options: { runs: { type: 'string' }, 'work-dir': { type: 'string' } } });
const runs = Number(values.runs ?? 4);
const log = (line) => process.stderr.write(`bench: ${line}\n`);
// Clock ticks per second of /proc/PID/stat's utime and stime (USER_HZ, 100 on Linux).
const USER_HZ = 100;

const { workDir, diskRoot, cleanUp } = await standaloneDirs('cold', values['work-dir']);
try {
  const dir = path.join(workDir, 'synthetic');
  await generateCatalog(dir, PROFILES.full.synthetic);
  const catalog = await prepareCatalog({ name: 'synthetic', dir, diskRoot });
  const uris = catalog.files.map((file) => file.uri);
  const samples = {};
  const add = (key, value) => (samples[key] ??= []).push(value);
  for (let run = 0; run < runs; run++) {
    for (const era of ['legacy', 'modern']) {
      const client = await connectStdio(dir, [], { era });
      try {
        await listAllSkills(client);
        const cpuBefore = process.cpuUsage();
        const startedMs = performance.now();
        await readAll(client, uris, 1);
        add(`${era}/wall`, performance.now() - startedMs);
        const cpu = process.cpuUsage(cpuBefore);
        add(`${era}/cpu`, (cpu.user + cpu.system) / 1000);
      } finally {
        await client.close();
      }
    }
    const port = await freePort();
    const mount = await startMount({ workDir, name: `cold-${run}`, backend: 'libfuse3', servers: { synthetic: serveEntry(dir) }, args: ['--metrics', `127.0.0.1:${port}`] });
    try {
      const metricsBefore = await daemonMetrics(port);
      const cpuBeforeMs = await processCpuMs(mount.pid);
      const startedMs = performance.now();
      await readFiles(path.join(mount.mountpoint, 'synthetic'), catalog.files, 1);
      add('mount/wall', performance.now() - startedMs);
      add('mount/cpu', (await processCpuMs(mount.pid)) - cpuBeforeMs);
      const metrics = await daemonMetrics(port);
      const opens = metrics.opens - metricsBefore.opens;
      const reads = metrics.reads - metricsBefore.reads;
      if (reads !== catalog.files.length) throw new Error(`the mount sent ${reads} resources/read for ${catalog.files.length} cold files`);
      add('mount/open', (metrics.openSeconds - metricsBefore.openSeconds) * 1000 / opens);
      add('mount/request', (metrics.readSeconds - metricsBefore.readSeconds) * 1000 / reads);
    } finally {
      await mount.stop();
    }
    log(`cold: run ${run + 1}/${runs} done`);
  }

  const perFile = (key) => (samples[key] === undefined ? '-' : `${(median(samples[key]) / catalog.files.length).toFixed(2)} ms`);
  const ms = (key) => `${median(samples[key]).toFixed(2)} ms`;
  const lines = [
    `cold sequential read, generated catalog (${catalog.files.length} files, ${(catalog.totalBytes / 1e6).toFixed(1)} MB), per file, medians of ${runs} runs`,
    '',
    '| per file | the mount (libfuse3) | raw client, 2025 era | raw client, 2026-07-28 |',
    '| --- | ---: | ---: | ---: |',
    `| wall time | ${perFile('mount/wall')} | ${perFile('legacy/wall')} | ${perFile('modern/wall')} |`,
    `| CPU of the process holding the client | ${perFile('mount/cpu')} | ${perFile('legacy/cpu')} | ${perFile('modern/cpu')} |`,
    `| the daemon's answer to OPEN; the resources/read inside it | ${ms('mount/open')}; ${ms('mount/request')} | | |`,
    '',
    `mount / raw: ${ratios('legacy')} against the 2025 era; ${ratios('modern')} against 2026-07-28 (per run)`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const machine = describeMachine();
  process.stdout.write(`machine: ${machine.nproc} cores, ${machine.cpuModel}, Linux ${machine.kernel}, Node ${machine.node}; load ${machine.loadAverage.join(' ')}\n`);

  function ratios(era) {
    return samples['mount/wall'].map((wall, run) => (wall / samples[`${era}/wall`][run]).toFixed(2)).join(', ');
  }
} finally {
  await cleanUp();
}

/** User and system CPU of every thread of `pid` so far, in ms. */
async function processCpuMs(pid) {
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '').split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
}

/** The daemon's OPEN and resources/read counts and total seconds, from its /metrics. */
async function daemonMetrics(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const value = (pattern) => Number(new RegExp(`^${pattern} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    opens: value('skills_mount_fuse_operation_duration_seconds_count\\{op="open"\\}'),
    openSeconds: value('skills_mount_fuse_operation_duration_seconds_sum\\{op="open"\\}'),
    reads: value('skills_mount_mcp_request_duration_seconds_count\\{[^}]*method="resources/read"\\}'),
    readSeconds: value('skills_mount_mcp_request_duration_seconds_sum\\{[^}]*method="resources/read"\\}'),
  };
}
