#!/usr/bin/env node
// Times skills/list over stdio against the built skills-serve (run `npm run build` first):
//   node scripts/bench-serve-list.mjs DIR [--page-size N] [--era legacy|modern] [--cpu-prof DIR]
// Reports startup (spawn + scan + initialize or server/discover + a first reply), a cold full listing
// (digests computed) and a warm one (digests cached).
import { parseArgs } from 'node:util';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { z } from 'zod';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'page-size': { type: 'string', default: '100' }, era: { type: 'string', default: 'legacy' }, 'cpu-prof': { type: 'string' } } });
if (positionals.length !== 1 || !['legacy', 'modern'].includes(values.era)) {
  process.stderr.write('usage: node scripts/bench-serve-list.mjs DIR [--page-size N] [--era legacy|modern] [--cpu-prof DIR]\n');
  process.exit(2);
}
const cli = join(dirname(fileURLToPath(import.meta.url)), '../dist/cli/skills-serve.js');
const ListResult = z.looseObject({ skills: z.array(z.any()), nextCursor: z.string().optional() });

// --cpu-prof DIR: the server process writes a V8 CPU profile into DIR when it exits.
const profileArgs = values['cpu-prof'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`];

let started = performance.now();
const transport = new StdioClientTransport({ command: process.execPath, args: [...profileArgs, cli, positionals[0], '--page-size', values['page-size']], stderr: 'inherit' });
const client = new Client({ name: 'bench', version: '0' }, { versionNegotiation: { mode: values.era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
await client.connect(transport);
const connectMs = performance.now() - started;
// Startup ends at the first answer from the session's own process. On stdio a 2026-07-28
// client negotiates on a disposable sibling process (the SDK client spawns the server twice:
// server/discover on the sibling, then the session), so connect() returns before the session
// process has scanned DIR; without this round trip its scan would be billed to the cold listing.
await client.request({ method: 'resources/templates/list', params: {} }, z.looseObject({}), { timeout: 600_000 });
const startupMs = performance.now() - started;

async function listAll() {
  const t0 = performance.now();
  let cursor;
  let skills = 0;
  let files = 0;
  let pages = 0;
  do {
    const page = await client.request({ method: 'skills/list', params: cursor === undefined ? {} : { cursor } }, ListResult, { timeout: 600_000 });
    skills += page.skills.length;
    files += page.skills.reduce((sum, skill) => sum + skill.resources.length, 0);
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined);
  return { skills, files, pages, ms: performance.now() - t0 };
}

const cold = await listAll();
const warm = await listAll();
const version = client.getNegotiatedProtocolVersion();
await client.close();
const fmt = (n) => n.toFixed(0);
console.log(`era: ${values.era} (${version})`);
console.log(`startup (spawn, scan, handshake, first reply): ${fmt(startupMs)} ms (connect() returned after ${fmt(connectMs)} ms)`);
console.log(`skills/list cold: ${cold.skills} skills, ${cold.files} manifest entries, ${cold.pages} pages in ${fmt(cold.ms)} ms`);
console.log(`skills/list warm: ${warm.skills} skills, ${warm.files} manifest entries, ${warm.pages} pages in ${fmt(warm.ms)} ms`);
