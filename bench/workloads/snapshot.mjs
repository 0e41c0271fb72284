// `skills-mount snapshot DEST` of a generated catalog over stdio skills-serve, no mount anywhere:
// a cold snapshot (fresh DEST, --no-disk-cache) against the raw SDK client listing and reading the
// same files, 8 in flight as the snapshot fetches them; then a second, unchanged snapshot of the
// same DEST (its requests counted at the server) against `cp -al` of the published tree.
import { execFile, spawn } from 'node:child_process';
import { chmod, mkdir, readFile, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SKILLS_MOUNT } from '../lib/paths.mjs';
import { connectStdio, listAllSkills, manifestFiles, readAll } from '../lib/raw-client.mjs';
import { loggedServeEntry } from '../lib/mount-child.mjs';
import { requestWindow } from '../lib/request-log.mjs';
import { timed } from '../lib/stats.mjs';
import { formatValue } from '../lib/table.mjs';

/** Files the snapshot fetches at once (snapshot-writer's DEFAULT_CONCURRENCY): the raw client keeps as many in flight. */
const IN_FLIGHT = 8;
/** One run at 10,000 x 5 takes minutes (two snapshots, a raw read of 50,000 files, a copy): at most this many. */
export const SNAPSHOT_MAX_RUNS = 3;
/** What the snapshot negotiates with skills-serve, and the raw client pins ('modern' in raw-client.mjs). */
const PROTOCOL = '2026-07-28';
const SUMMARY = /snapshot (\S+) (?:published at|at .* unchanged)[^;]*;.*; ([\d.]+) s$/m;

/**
 * Samples (ms) and request counts per phase: cold (snapshot, raw), second (snapshot, cp -al).
 * `catalog` is a prepared catalog ({name, dir, files, totalBytes}); its name is the snapshot's label.
 */
export async function measureSnapshot({ workDir, catalog, runs, log }) {
  const base = path.join(workDir, 'snapshot');
  await mkdir(base, { recursive: true });
  const logFile = path.join(base, 'server.log');
  const configPath = path.join(base, 'config.json');
  await writeFile(configPath, JSON.stringify({ mcpServers: { [catalog.name]: loggedServeEntry(catalog.dir, logFile) } }));
  // The raw client speaks the protocol the snapshot negotiates, and its server logs too (to
  // /dev/null): both servers do the same work per request.
  const rawRead = async () => {
    const client = await connectStdio(catalog.dir, ['--verbose'], { era: 'modern' });
    try {
      const files = manifestFiles((await listAllSkills(client)).skills);
      const bytes = await readAll(client, files.map((file) => file.uri), IN_FLIGHT);
      return { files: files.length, bytes };
    } finally {
      await client.close();
    }
  };

  const samples = { cold: [], raw: [], second: [], copy: [] };
  const requests = { cold: [], second: [] };
  const ownSeconds = { cold: [], second: [] };
  const count = Math.min(runs, SNAPSHOT_MAX_RUNS);
  for (let run = 0; run < count; run++) {
    const dest = path.join(base, `dest-${run}`);
    const copy = path.join(base, `copy-${run}`);
    try {
      // Mount side and raw side alternate which goes first, as everywhere in the benchmark.
      for (const side of run % 2 === 0 ? ['snapshot', 'raw'] : ['raw', 'snapshot']) {
        if (side === 'raw') {
          const { ms, result } = await timed(rawRead);
          if (result.bytes !== catalog.totalBytes) throw new Error(`snapshot bench: the raw client read ${result.bytes} bytes of ${catalog.name}, listed ${catalog.totalBytes}`);
          samples.raw.push(ms);
          continue;
        }
        const cold = await snapshotOnce({ dest, configPath, logFile });
        if (!cold.published) throw new Error(`snapshot bench: the cold snapshot published nothing:\n${cold.stderr.slice(-2_000)}`);
        await checkSnapshot(dest, catalog);
        samples.cold.push(cold.ms);
        requests.cold.push(cold.requests);
        ownSeconds.cold.push(cold.ownSeconds);
      }
      const published = await realpath(dest);
      for (const side of run % 2 === 0 ? ['snapshot', 'copy'] : ['copy', 'snapshot']) {
        if (side === 'copy') {
          samples.copy.push((await timed(() => execQuiet('cp', ['-al', published, copy]))).ms);
          continue;
        }
        const second = await snapshotOnce({ dest, configPath, logFile });
        if (second.published || (await realpath(dest)) !== published) throw new Error(`snapshot bench: the second snapshot published a new one:\n${second.stderr.slice(-2_000)}`);
        samples.second.push(second.ms);
        requests.second.push(second.requests);
        ownSeconds.second.push(second.ownSeconds);
      }
    } finally {
      await removeReadOnly(copy);
      await removeReadOnly(path.join(base, `.dest-${run}.snapshots`));
      await rm(dest, { force: true });
    }
    log(`snapshot: run ${run + 1}/${count}: cold ${formatValue(samples.cold.at(-1), 'ms')}, raw ${formatValue(samples.raw.at(-1), 'ms')}; second ${formatValue(samples.second.at(-1), 'ms')}, cp -al ${formatValue(samples.copy.at(-1), 'ms')}`);
  }
  await rm(base, { recursive: true, force: true });
  return { samples, requests, ownSeconds, inFlight: IN_FLIGHT, protocol: PROTOCOL, files: catalog.files.length, totalBytes: catalog.totalBytes, skills: catalog.files.filter((file) => file.path.endsWith('/SKILL.md')).length };
}

/** One `skills-mount snapshot` process, timed from spawn to exit; its requests at the server and its own summary's seconds. */
async function snapshotOnce({ dest, configPath, logFile }) {
  const window = await requestWindow(logFile);
  const startedMs = performance.now();
  const { code, stderr } = await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SKILLS_MOUNT, 'snapshot', dest, '--config', configPath, '--no-disk-cache'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let text = '';
    child.stderr.setEncoding('utf8').on('data', (chunk) => (text += chunk));
    child.on('error', reject);
    child.on('exit', (exitCode, signal) => resolve({ code: exitCode ?? signal, stderr: text }));
  });
  const ms = performance.now() - startedMs;
  if (code !== 0) throw new Error(`skills-mount snapshot ${dest} exited ${code}:\n${stderr.slice(-2_000)}`);
  if (!stderr.includes(`connected (protocol ${PROTOCOL})`)) throw new Error(`skills-mount snapshot ${dest} did not negotiate ${PROTOCOL}, as the raw client does:\n${stderr.slice(-2_000)}`);
  const summary = SUMMARY.exec(stderr);
  if (!summary) throw new Error(`skills-mount snapshot ${dest}: no summary line:\n${stderr.slice(-2_000)}`);
  return { ms, published: !summary[0].includes(' unchanged'), ownSeconds: Number(summary[2]), requests: await window.counts(), stderr };
}

/** The snapshot holds every listed file under DEST/<label>/ with its listed size, and skills.json. */
async function checkSnapshot(dest, catalog) {
  const manifest = JSON.parse(await readFile(path.join(dest, '.snapshot.json'), 'utf8'));
  const written = new Map(manifest.files.map((file) => [file.path, file.sizeBytes]));
  const missing = catalog.files.filter((file) => written.get(`${catalog.name}/${file.path}`) !== file.sizeBytes);
  if (missing.length > 0 || written.size !== catalog.files.length + 1 || !written.has('skills.json') || manifest.omitted.length > 0) {
    throw new Error(`snapshot bench: ${dest} holds ${written.size} files (${manifest.omitted.length} skills left out) for ${catalog.files.length} listed, e.g. not ${missing[0]?.path}`);
  }
}

/** rm -rf of a tree whose directories are 0555 (a snapshot, or a copy of one): directories made writable first, files untouched (they are links). */
async function removeReadOnly(dir) {
  try {
    await chmod(dir, 0o755);
  } catch (error) {
    if (error.code === 'ENOENT') return;
    throw error;
  }
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await removeReadOnly(path.join(dir, entry.name));
  }
  await rm(dir, { recursive: true, force: true });
}

function execQuiet(command, args) {
  return new Promise((resolve, reject) =>
    execFile(command, args, { maxBuffer: 1 << 20 }, (error, _stdout, stderr) => (error ? reject(new Error(`${command} ${args.join(' ')} failed: ${stderr}`)) : resolve())),
  );
}

