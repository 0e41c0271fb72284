#!/usr/bin/env node
// Measures what two hostile answers cost the mount's connection layer (docs/robustness.md):
//   node scripts/measure-limits.mjs stderr [MIB]   a stdio server writing MIB MiB to stderr, no newline
//   node scripts/measure-limits.mjs http [MIB]     an HTTP server answering resources/read with MIB MiB
//   node scripts/measure-limits.mjs listing [ENTRIES] [FRONTMATTER_BYTES]
//                                                  the whole daemon, mounted, listing ENTRIES skills of
//                                                  ~FRONTMATTER_BYTES of frontmatter each; then skills.json read
//   node --expose-gc scripts/measure-limits.mjs catalog [ENTRIES] [FRONTMATTER_BYTES] [--no-disk-cache]
//                                                  the same without a mount (no /dev/fuse needed): the daemon's
//                                                  parts in one process (source over stdio, catalog, disk cache,
//                                                  filesystem core), skills.json read through as the kernel would
// Prints one JSON line: peak RSS, outcome, log lines. Needs the built dist (npm run build).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { z } from 'zod';
import { memoryOf, startMount } from '../bench/lib/mount-child.mjs';
import { Connection } from '../dist/mcp/connection.js';

const [what = 'stderr', mibText] = process.argv.slice(2);
const mib = Number(mibText ?? (what === 'http' ? 200 : 300));
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
const toMiB = (bytes) => Math.round(bytes / 2 ** 20);

if (what === 'listing') {
  await measureListing(Number(mibText ?? 200_000), Number(process.argv[4] ?? 1024));
} else if (what === 'catalog') {
  await measureCatalog(Number(mibText ?? 200_000), Number(process.argv[4] ?? 1024), !process.argv.includes('--no-disk-cache'));
} else if (what === 'stderr') {
  // The child writes `mib` MiB of 'A' to stderr without a newline, then idles.
  const spew = `const c=Buffer.alloc(1<<20,65);let n=${mib};const w=()=>{while(n-->0){if(!process.stderr.write(c))return process.stderr.once('drain',w)}};w();setInterval(()=>{},1e3)`;
  let lines = 0;
  const connection = new Connection('spew', { kind: 'stdio', command: process.execPath, args: ['-e', spew], env: {}, cwd: undefined }, { timeoutMs: 60_000, log: () => lines++ });
  void connection.start();
  await new Promise((resolve) => setTimeout(resolve, 15_000));
  console.log(JSON.stringify({ what, mib, peakRssMiB: toMiB(peakRss), logLines: lines }));
  await connection.close();
} else {
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const message = JSON.parse(body);
    if (message.id === undefined) return void res.writeHead(202).end();
    const reply = (result) => res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...result }));
    if (message.method === 'server/discover') return reply({ error: { code: -32601, message: 'no' } });
    if (message.method === 'initialize') return reply({ result: { protocolVersion: '2025-11-25', capabilities: { resources: {} }, serverInfo: { name: 'huge', version: '1' } } });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"contents":[{"uri":"skill://x/a.md","text":"`);
    const chunk = 'a'.repeat(1 << 20);
    for (let i = 0; i < mib; i++) if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
    res.end('"}]}}');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const connection = new Connection('huge', { kind: 'http', url: `http://127.0.0.1:${server.address().port}/mcp`, headers: {} }, { timeoutMs: 60_000, log: () => undefined });
  await connection.start();
  const before = process.memoryUsage().rss;
  let outcome = 'served';
  try {
    await connection.request('resources/read', { uri: 'skill://x/a.md' }, z.looseObject({ contents: z.array(z.unknown()) }));
  } catch (error) {
    outcome = error.message;
  }
  console.log(JSON.stringify({ what, mib, rssBeforeMiB: toMiB(before), peakRssMiB: toMiB(peakRss), outcome }));
  await connection.close();
  server.close();
}
clearInterval(sampler);
process.exit(0);

/**
 * The daemon's VmRSS/VmHWM when mounted, once the listing is complete, and after a `cat` of
 * skills.json (from a child process: the mount is never read from the process serving it).
 */
async function measureListing(entries, frontmatterBytes) {
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'measure-listing-'));
  const hostile = fileURLToPath(new URL('../test/support/hostile-server.mjs', import.meta.url));
  const scenarioFile = path.join(workDir, 'scenario.json');
  await writeFile(scenarioFile, JSON.stringify({ listing: true, listingFault: 'huge', hugeEntries: entries, hugePageSize: 5_000, hugeFrontmatterBytes: frontmatterBytes }));
  const mount = await startMount({ workDir, name: 'huge', servers: { huge: { command: process.execPath, args: [hostile, scenarioFile] } }, args: ['--startup-timeout', '600'] });
  try {
    const ready = await memoryOf(mount.pid);
    const statusFile = path.join(mount.mountpoint, 'status.json');
    const run = promisify(execFile);
    const readStarted = performance.now();
    const { stdout } = await run('wc', ['-c', path.join(mount.mountpoint, 'skills.json')], { maxBuffer: 1 << 20 });
    const readMs = Math.round(performance.now() - readStarted);
    const afterRead = await memoryOf(mount.pid);
    const statusStarted = performance.now();
    await run('cat', [statusFile]);
    const statusMs = Math.round(performance.now() - statusStarted);
    const kibToMiB = (kib) => Math.round(kib / 1024);
    console.log(
      JSON.stringify({
        what,
        entries,
        frontmatterBytes,
        readyMs: Math.round(mount.readyMs),
        rssReadyMiB: kibToMiB(ready.vmRssKiB),
        skillsJsonBytes: Number(stdout.trim().split(/\s+/)[0]),
        skillsJsonReadMs: readMs,
        rssAfterSkillsJsonMiB: kibToMiB(afterRead.vmRssKiB),
        peakRssMiB: kibToMiB(afterRead.vmHwmKiB),
        statusJsonReadMs: statusMs,
      }),
    );
  } finally {
    await mount.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * What measureListing measures, in this process and without a mount: the hostile listing over
 * stdio into a catalog with the disk cache the daemon has by default, then skills.json opened
 * and read through in 128 KiB reads from the filesystem core. Peak RSS is this process's maxRSS.
 */
async function measureCatalog(entries, frontmatterBytes, diskCacheOn) {
  const { McpSkillSource } = await import('../dist/mcp/mcp-skill-source.js');
  const { DEFAULT_CATALOG_TIMINGS, ServerCatalog } = await import('../dist/catalog/server-catalog.js');
  const { ContentCache } = await import('../dist/catalog/content-cache.js');
  const { SkillsFilesystem } = await import('../dist/fs/skills-filesystem.js');
  const { DiskCache } = await import('../dist/cache/disk-cache.js');
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'measure-catalog-'));
  const hostile = fileURLToPath(new URL('../test/support/hostile-server.mjs', import.meta.url));
  const scenarioFile = path.join(workDir, 'scenario.json');
  await writeFile(scenarioFile, JSON.stringify({ listing: true, listingFault: 'huge', hugeEntries: entries, hugePageSize: 5_000, hugeFrontmatterBytes: frontmatterBytes }));
  const log = () => undefined;
  const peakMiB = () => Math.round(process.resourceUsage().maxRSS / 1024);
  const rssMiB = () => toMiB(process.memoryUsage().rss);
  const source = new McpSkillSource('huge', { kind: 'stdio', command: process.execPath, args: [hostile, scenarioFile], env: {}, cwd: undefined }, { timeoutMs: 600_000, protocolVersion: 'negotiate', log, verbose: false });
  const diskCache = diskCacheOn ? await DiskCache.open({ root: path.join(workDir, 'cache'), mountpoint: path.join(workDir, 'mnt'), limitBytes: 2 ** 30, log, home: workDir, env: {} }) : undefined;
  const catalog = new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log, cache: new ContentCache(32 * 2 ** 20), durable: diskCache?.server('huge'), hideDynamic: false });
  try {
    const started = performance.now();
    await source.start();
    await catalog.refresh();
    const readyMs = Math.round(performance.now() - started);
    // The kept listing is written in the background: give it time, as a running daemon would.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const ready = { rssMiB: rssMiB(), peakRssMiB: peakMiB() };
    const filesystem = new SkillsFilesystem([catalog], { metadataTtlMs: 0 });
    const readStarted = performance.now();
    const { sizeBytes } = await filesystem.getattr('/skills.json');
    const handle = await filesystem.open('/skills.json');
    for (let position = 0; position < sizeBytes; position += 128 * 1024) filesystem.read(handle, position, 128 * 1024);
    const skillsJsonReadMs = Math.round(performance.now() - readStarted);
    globalThis.gc?.();
    const heapWithSkillsJsonOpenMiB = toMiB(process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers);
    filesystem.release(handle);
    console.log(
      JSON.stringify({
        what: 'catalog',
        entries,
        frontmatterBytes,
        diskCache: diskCacheOn,
        skills: catalog.health().skills,
        readyMs,
        rssReadyMiB: ready.rssMiB,
        peakRssReadyMiB: ready.peakRssMiB,
        skillsJsonBytes: sizeBytes,
        skillsJsonReadMs,
        rssAfterSkillsJsonMiB: rssMiB(),
        heapWithSkillsJsonOpenMiB,
        peakRssMiB: peakMiB(),
      }),
    );
  } finally {
    await source.close();
    await diskCache?.close();
    await rm(workDir, { recursive: true, force: true });
  }
}
