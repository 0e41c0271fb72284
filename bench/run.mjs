#!/usr/bin/env node
// npm run bench [-- --quick]: measures skills-mount on each FUSE backend against a raw MCP client
// and local disk (issues 5 and 19), prints the tables and writes bench/results.json. Needs the
// built dist (./scripts/setup.sh) and /dev/fuse. Every mount is a child process and is always unmounted.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// 8 parallel readers need 8 libuv threads: the size is fixed when the pool starts, so re-exec.
const THREADS = 16;
if (!(Number(process.env.UV_THREADPOOL_SIZE) >= THREADS)) {
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, UV_THREADPOOL_SIZE: String(THREADS) },
  });
  process.exit(child.status ?? 1);
}

const { generateCatalog, listedFiles, prepareCatalog, trimmedCopy } = await import('./lib/catalogs.mjs');
const { describeMachine } = await import('./lib/machine.mjs');
const { stopAllMounts } = await import('./lib/mount-child.mjs');
const { parseOptions } = await import('./lib/options.mjs');
const { SKILLS_MOUNT, SKILLS_SERVE } = await import('./lib/paths.mjs');
const { buildLinkRows, buildRows } = await import('./lib/report.mjs');
const { renderTable } = await import('./lib/table.mjs');
const { buildServeRows } = await import('./lib/serve-report.mjs');
const { buildTeamRows } = await import('./lib/team-report.mjs');
const { measureApproved } = await import('./workloads/approved.mjs');
const { bigFiles, measureBigReads } = await import('./workloads/big-file.mjs');
const { measureChangeLatency } = await import('./workloads/change-latency.mjs');
const { coldCorpusRow, measureColdCorpus } = await import('./workloads/cold-corpus.mjs');
const { diskCacheCostRows } = await import('./workloads/disk-cache-cost.mjs');
const { measureLatency } = await import('./workloads/latency.mjs');
const { measureLink } = await import('./workloads/link.mjs');
const { measureLinkPickup } = await import('./workloads/link-pickup.mjs');
const { measureListing } = await import('./workloads/listing.mjs');
const { measureReads } = await import('./workloads/reads.mjs');
const { countRequests } = await import('./workloads/requests.mjs');
const { measureRestart } = await import('./workloads/restart.mjs');
const { measureRoundTrip } = await import('./workloads/round-trip.mjs');
const { measureScaling } = await import('./workloads/scaling.mjs');
const { measureServe, SERVE_PROFILES } = await import('./workloads/serve.mjs');
const { measureSnapshot } = await import('./workloads/snapshot.mjs');
const { measureTeam, TEAM_MAX_RUNS } = await import('./workloads/team.mjs');

const startedMs = performance.now();
const log = (line) => process.stderr.write(`bench: [${((performance.now() - startedMs) / 1000).toFixed(0)} s] ${line}\n`);

let options;
try {
  options = parseOptions(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`bench: ${error.message}\n`);
  process.exit(2);
}
for (const [what, file] of [['skills-mount', SKILLS_MOUNT], ['skills-serve', SKILLS_SERVE]]) {
  if (!existsSync(file)) {
    process.stderr.write(`bench: ${what} is not built (${file}); run ./scripts/setup.sh first\n`);
    process.exit(2);
  }
}
// Without --corpus, the project's own generated corpus: the benchmark needs nothing beside the clone.
options.corpusDir ??= await (await import('../test/support/test-corpus.mjs')).testCorpusDir();
if (!existsSync(options.corpusDir)) {
  process.stderr.write(`bench: the corpus is missing: ${options.corpusDir} (--corpus DIR)\n`);
  process.exit(2);
}

// Catalogs and mountpoints on tmpfs when there is one (100k skills on a VM disk take minutes
// to write); the local-disk copies in the temp dir. With --work-dir, both inside it.
const scratch = [];
const makeDir = async (parent, prefix) => {
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(path.join(parent, prefix));
  scratch.push(dir);
  return dir;
};
const cleanUp = async () => {
  await stopAllMounts();
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    log(`${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}

const { profile, backends } = options;
let status = 0;
try {
  const workDir = await makeDir(options.workDir ?? (existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir()), 'skills-bench-');
  const diskRoot = options.workDir ? path.join(workDir, 'disk') : await makeDir(os.tmpdir(), 'skills-bench-disk-');
  await mkdir(diskRoot, { recursive: true });
  log(`${options.mode} run, ${profile.runs} run(s) per figure, backends ${backends.join(', ')}; work dir ${workDir}, local-disk copies in ${diskRoot}`);

  const syntheticDir = path.join(workDir, 'synthetic');
  await generateCatalog(syntheticDir, profile.synthetic);
  const bigDir = path.join(workDir, 'big-skill');
  await generateCatalog(bigDir, { skills: 0, big: profile.bigBytes, 'big-files': 2 });
  const synthetic = await prepareCatalog({ name: 'synthetic', dir: syntheticDir, diskRoot });
  let corpusDir = options.corpusDir;
  if (profile.corpusTrim) {
    corpusDir = path.join(workDir, 'corpus-trimmed');
    const left = await trimmedCopy(options.corpusDir, corpusDir, profile.corpusTrim);
    log(`corpus: leaving out ${left.join(', ') || 'nothing'} (over ${profile.corpusTrim.maxFiles} files or ${profile.corpusTrim.maxBytes / 1024 / 1024} MiB)`);
  }
  const corpus = await prepareCatalog({ name: 'corpus', dir: corpusDir, diskRoot });
  const bigCatalog = await prepareCatalog({ name: 'big', dir: bigDir, diskRoot });
  const big = bigFiles(bigDir, bigCatalog, profile.bigBytes);
  const catalogs = [synthetic, corpus];
  log(`catalogs: ${catalogs.map((c) => `${c.name} ${c.files.length} files ${(c.totalBytes / 1e6).toFixed(1)} MB`).join('; ')}`);

  log('counting MCP requests at the server');
  const requests = await countRequests({ workDir, catalog: synthetic, backends });
  log('reads: cold, warm, floor');
  const reads = await measureReads({ workDir, runs: profile.runs, catalogs, pings: profile.pings, backends, log });
  // Issue 43: the same cold pass of the corpus with the mount's default disk cache on (a fresh, empty cache dir per run, on local disk as ~/.cache is).
  log('cold sequential reads of the corpus, default disk cache');
  const coldCache = await measureColdCorpus({ workDir, cacheParent: diskRoot, catalog: corpus, runs: profile.runs, metrics: false, log });
  log('16 MiB reads, each side in a process of its own');
  const bigReads = await measureBigReads({ workDir, runs: profile.runs, big, backends, log });
  log('reads after a restart, from the disk cache');
  const restart = await measureRestart({ workDir, catalogs, runs: profile.runs, backends, log });
  log('reads through the approved view');
  const approved = await measureApproved({ workDir, catalogs, runs: profile.runs, backends, log });
  log('latency of stat and cat; one round trip');
  const latency = await measureLatency({ workDir, catalog: synthetic, statCount: profile.statSamples, catCount: profile.catSamples, backends });
  const roundTrip = await measureRoundTrip({ workDir, catalog: synthetic, count: profile.roundTripSamples, backends, log });
  log('a change on the server reaching cat');
  const changes = await measureChangeLatency({ workDir, plan: profile.changes, backends, log });

  log(`ls -lR: generating ${profile.listing.skills} skills x ${profile.listing.files} files`);
  const listingDir = path.join(workDir, 'listing');
  await generateCatalog(listingDir, { skills: profile.listing.skills, files: profile.listing.files });
  const listingCatalog = await prepareCatalog({ name: 'listing', dir: listingDir, diskRoot });
  const listingResult = await measureListing({ workDir, catalog: listingCatalog, runs: profile.runs, backends, log });
  const listing = { ...listingResult, skills: profile.listing.skills, filesPerSkill: profile.listing.files, files: listingCatalog.files.length };
  // The same catalog, snapshotted (no mount): cold against the raw client, then again unchanged against cp -al.
  log(`snapshot: ${profile.listing.skills} skills x ${profile.listing.files} files, cold and unchanged`);
  const snapshot = await measureSnapshot({ workDir, catalog: listingCatalog, runs: profile.runs, log });
  await rm(listingDir, { recursive: true, force: true });
  await rm(listingCatalog.diskDir, { recursive: true, force: true });

  log(`link: ${profile.link.skills} approved skills x ${profile.link.files} files into one root, no mount`);
  const linkDir = path.join(workDir, 'link-catalog');
  await generateCatalog(linkDir, { skills: profile.link.skills, files: profile.link.files });
  const linkFiles = await listedFiles(linkDir);
  const linkCatalog = { name: 'link', dir: linkDir, files: linkFiles, totalBytes: linkFiles.reduce((sum, file) => sum + file.sizeBytes, 0) };
  const link = await measureLink({ workDir, catalog: linkCatalog, runs: profile.runs, log });
  // The same skills locked for a project: link --project and outdated against today's link, lock against approve.
  log(`team lockfile: ${profile.link.skills} locked skills, link --project cold and unchanged, outdated, lock; no mount`);
  const team = await measureTeam({ workDir, catalog: linkCatalog, runs: Math.min(profile.runs, TEAM_MAX_RUNS), lockRuns: 1, log });
  await rm(linkDir, { recursive: true, force: true });
  // Issue 51: the verified view re-served over Streamable HTTP, in front of skills-serve --http; no mount.
  const serveSizes = SERVE_PROFILES[options.mode];
  log(`serve: warm and cold reads of the corpus through skills-mount serve --http, then ${serveSizes.clients} clients at once; no mount`);
  const serve = await measureServe({ workDir, catalog: corpus, runs: Math.min(profile.runs, serveSizes.maxRuns), clients: serveSizes.clients, readsPerClient: serveSizes.readsPerClient, log });
  // A real Claude Code session (scripts/harnesses.sh installs it); not in the quick run, whose smoke test runs in every CI pass.
  let pickup;
  if (profile.pickupSamples > 0) {
    log(`link: from approve returning to the skill listed in a running Claude Code session, ${profile.pickupSamples} skills, with a mount and without`);
    pickup = await measureLinkPickup({ workDir, samples: profile.pickupSamples, log });
  }

  const scaling = [];
  for (const skills of profile.scaling) {
    log(`scaling: generating ${skills} skills (SKILL.md only)`);
    const dir = path.join(workDir, `scale-${skills}`);
    const generateMs = await generateCatalog(dir, { skills, files: 1 });
    const result = await measureScaling({ workDir, name: `scale-${skills}`, dir, runs: profile.runs, pageSize: profile.scalingPageSize, backend: backends[0], log });
    scaling.push({ ...result, generateMs });
    await rm(dir, { recursive: true, force: true });
  }

  const rows = [
    ...buildRows({ backends, catalogs, reads, bigReads, big, listing, latency, roundTrip, requests, restart, approved, changes, scaling, snapshot }),
    coldCorpusRow(corpus, coldCache),
    ...(await diskCacheCostRows({ workDir, catalogs, runs: profile.runs, log })),
    ...buildLinkRows(link, pickup),
    ...buildTeamRows(team),
    ...buildServeRows(serve),
  ];
  const machine = describeMachine();
  const durationMs = performance.now() - startedMs;
  const results = {
    mode: options.mode,
    startedAt: new Date(Date.now() - durationMs).toISOString(),
    durationMs: Math.round(durationMs),
    machine,
    profile,
    backends,
    catalogs: Object.fromEntries([...catalogs, bigCatalog].map((c) => [c.name, { files: c.files.length, totalBytes: c.totalBytes }])),
    rows,
    requests,
    changes,
    snapshot: { files: snapshot.files, requests: snapshot.requests, ownSeconds: snapshot.ownSeconds },
    // The ls -lR samples are in their row.
    listing: { files: listing.files, lines: listing.lines, byBackend: Object.fromEntries(Object.entries(listing.byBackend).map(([backend, { samples, ...memory }]) => [backend, memory])) },
    scaling: scaling.map(({ serverLog, ...size }) => ({ ...size, serverNotes: serverLog })),
  };
  await mkdir(path.dirname(options.resultsFile), { recursive: true });
  await writeFile(options.resultsFile, `${JSON.stringify(results, null, 2)}\n`);
  const table = renderTable(rows);
  process.stdout.write(`\n${table}\n\n`);
  process.stdout.write(
    `machine: ${machine.nproc} cores, ${machine.cpuModel}, Linux ${machine.kernel}, Node ${machine.node}; load ${machine.loadAverage.join(' ')}\n` +
      `${options.mode} run in ${(durationMs / 1000).toFixed(0)} s; results in ${options.resultsFile}\n`,
  );
  for (const size of scaling) for (const note of size.serverLog) process.stdout.write(`note: skills-serve (${size.skills} skills): ${note}\n`);
} catch (error) {
  process.stderr.write(`bench: failed: ${error.stack ?? error}\n`);
  status = 1;
} finally {
  await cleanUp();
}
process.exit(status);
