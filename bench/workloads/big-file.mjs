// 16 MiB files through the mount against a raw SDK client, like for like: each side in a process
// of its own that has read nothing large before (the mount's daemon is new per run, the raw client
// is bench/lib/fresh-raw-reads.mjs), in the same protocol era, reading the same two files in turn.
// The first read is a new process's; the second (another file) one whose V8 has warmed up.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { freshRawReads } from '../lib/fresh-raw-reads.mjs';
import { startHttpServer } from '../lib/http-server.mjs';
import { serveEntry, startMount } from '../lib/mount-child.mjs';

/** What is measured: a transport in one era. `pin`: the server entry's protocolVersion (none: negotiate, as users run it). */
export const BIG_CASES = [
  { kind: 'big-stdio', transport: 'stdio', era: 'modern' },
  { kind: 'big-http', transport: 'Streamable HTTP', era: 'modern' },
  { kind: 'big-http-legacy', transport: 'Streamable HTTP, 2025 handshake', era: 'legacy', pin: '2025-11-25' },
];
/** The reads of one run, in order. */
export const BIG_READS = ['first', 'second'];

/** The catalog's two large files ({dir, files, sizeBytes}), as measureBigReads takes them (gen-skills --big B --big-files 2). */
export function bigFiles(dir, catalog, sizeBytes) {
  const files = catalog.files.filter((file) => file.path.endsWith('/big.bin')).sort((a, b) => a.path.localeCompare(b.path));
  if (files.length !== BIG_READS.length) throw new Error(`${dir}: ${files.length} large files, expected ${BIG_READS.length}`);
  return { dir, files, sizeBytes };
}

/**
 * Runs `runs` rounds of every case over `big` ({dir, files: [two {uri, path, sizeBytes}]});
 * resolves samples in ms keyed `KIND/READ/BACKEND` and `KIND/READ/raw`, and failures by the same keys.
 */
export async function measureBigReads({ workDir, runs, big, backends, log }) {
  const samples = {};
  const failures = {};
  const add = (key, ms) => (samples[key] ??= []).push(ms);
  const server = await startHttpServer(big.dir);
  try {
    for (let run = 0; run < runs; run++) {
      for (const bigCase of BIG_CASES) {
        const target = bigCase.transport === 'stdio' ? { dir: big.dir } : { url: server.url };
        const steps = [() => raw(bigCase, target), ...backends.map((backend) => () => throughMount(run, bigCase, backend, target))];
        for (const step of run % 2 === 0 ? steps : steps.reverse()) await step();
      }
      log(`16 MiB reads: run ${run + 1}/${runs} done`);
    }
  } finally {
    await server.stop();
  }
  return { samples, failures };

  async function raw(bigCase, target) {
    const ms = await freshRawReads(target, bigCase.era, big.files);
    BIG_READS.forEach((read, i) => add(`${bigCase.kind}/${read}/raw`, ms[i]));
  }

  async function throughMount(run, bigCase, backend, target) {
    const entry = target.url ? { url: target.url } : serveEntry(target.dir);
    if (bigCase.pin) entry.protocolVersion = bigCase.pin;
    const mount = await startMount({ workDir, name: `${bigCase.kind}-${run}`, backend, servers: { big: entry } });
    try {
      for (const [i, read] of BIG_READS.entries()) {
        const key = `${bigCase.kind}/${read}/${backend}`;
        const file = big.files[i];
        const filePath = path.join(mount.mountpoint, 'big', file.path);
        try {
          const startedMs = performance.now();
          const bytes = await readFile(filePath);
          const ms = performance.now() - startedMs;
          if (bytes.length !== file.sizeBytes) throw new Error(`${filePath}: read ${bytes.length} bytes, expected ${file.sizeBytes}`);
          add(key, ms);
        } catch (error) {
          // A failure here is a finding (shown in its row), not a reason to stop measuring.
          const why = mount.log().split('\n').find((line) => line.includes('[big]') && /error|closed/.test(line));
          (failures[key] ??= []).push(`${error.message}${why ? ` (${why.trim()})` : ''}`);
          add(key, Number.NaN);
        }
      }
    } finally {
      await mount.stop();
    }
  }
}
