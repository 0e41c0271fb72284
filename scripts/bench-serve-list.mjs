#!/usr/bin/env node
// Times skills/list over stdio against the built skills-serve (run `npm run build` first):
//   node scripts/bench-serve-list.mjs DIR [--page-size N]
// Reports startup (spawn + scan + initialize), a cold full listing (digests computed)
// and a warm one (digests cached).
import { parseArgs } from 'node:util';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { z } from 'zod';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'page-size': { type: 'string', default: '100' } } });
if (positionals.length !== 1) {
  process.stderr.write('usage: node scripts/bench-serve-list.mjs DIR [--page-size N]\n');
  process.exit(2);
}
const cli = join(dirname(fileURLToPath(import.meta.url)), '../dist/cli/skills-serve.js');
const ListResult = z.looseObject({ skills: z.array(z.any()), nextCursor: z.string().optional() });

let started = performance.now();
const transport = new StdioClientTransport({ command: process.execPath, args: [cli, positionals[0], '--page-size', values['page-size']], stderr: 'inherit' });
const client = new Client({ name: 'bench', version: '0' });
await client.connect(transport);
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
await client.close();
const fmt = (n) => n.toFixed(0);
console.log(`startup (spawn, scan, initialize): ${fmt(startupMs)} ms`);
console.log(`skills/list cold: ${cold.skills} skills, ${cold.files} manifest entries, ${cold.pages} pages in ${fmt(cold.ms)} ms`);
console.log(`skills/list warm: ${warm.skills} skills, ${warm.files} manifest entries, ${warm.pages} pages in ${fmt(warm.ms)} ms`);
