#!/usr/bin/env node
// node bench/lib/profile-summary.mjs FILE.cpuprofile [--window FILE.json] [--top N] [--inclusive f,g,...]: where a V8 CPU profile (node
// --cpu-prof) spent its samples, by category (each sample goes to the first category that matches
// walking from the running function up its stack, so a hash inside the disk cache counts as
// hashing) and by function (self time); --window (cold-corpus.mjs writes it: {startUs, endUs} of CLOCK_MONOTONIC) keeps
// only the samples inside that window; --inclusive gives the time of samples with each named
// function anywhere on the stack. Used to take the daemon's cold reads apart (issue 43).
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

/** [category, test(frame)] in order of precedence; frame is {functionName, url}. */
const CATEGORIES = [
  ['idle (waiting for the kernel, the server or a thread)', (f) => f.functionName === '(idle)'],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['sha256 (hashing content)', (f) => /crypto\/hash|digest\.js/.test(f.url) || /^(createHash|sha256Digest)$/.test(f.functionName)],
  ['base64 decode, UTF-8 encode (Buffer.from)', (f) => /buffer/.test(f.url) && /^(from|fromString|fromStringFast|write|base64Write|utf8Write|byteLength)/.test(f.functionName)],
  ['SKILL.md frontmatter (yaml, verification)', (f) => /yaml|frontmatter/i.test(f.url) || /frontmatter/i.test(f.functionName)],
  ['JSON.parse / stringify', (f) => /^(parse|stringify)$/.test(f.functionName) && f.url === ''],
  ['schema checks (zod)', (f) => /zod/.test(f.url)],
  ['the disk cache (get, put, its queue)', (f) => /dist\/cache\//.test(f.url)],
  ['MCP SDK (client, envelopes)', (f) => /@modelcontextprotocol/.test(f.url)],
  ["the daemon's MCP connection and stdio transport (dist/mcp)", (f) => /dist\/mcp\//.test(f.url)],
  ['node streams and pipes', (f) => /internal\/(streams|child_process)|node:stream|node:net|node:internal\/stream_base/.test(f.url)],
  ['metrics', (f) => /prom-client|dist\/metrics\//.test(f.url)],
  ['FUSE handlers and the addon bridge', (f) => /dist\/fuse\/|\.node$/.test(f.url)],
  ['filesystem core and catalog', (f) => /dist\/(fs|catalog)\//.test(f.url)],
  ['(program): native code outside JS', (f) => f.functionName === '(program)'],
];

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string' }, window: { type: 'string' }, inclusive: { type: 'string' } } });
const profile = JSON.parse(await readFile(positionals[0], 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const inclusiveNames = values.inclusive ? values.inclusive.split(',') : [];
const inclusiveUs = new Map(inclusiveNames.map((name) => [name, 0]));
const selfUs = new Map();
const categoryUs = new Map();
const window = values.window ? JSON.parse(await readFile(values.window, 'utf8')) : { startUs: -Infinity, endUs: Infinity };
let totalUs = 0;
let atUs = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  atUs += profile.timeDeltas[i];
  const us = profile.timeDeltas[i + 1] ?? 0;
  if (atUs < window.startUs || atUs > window.endUs) continue;
  totalUs += us;
  const leaf = byId.get(profile.samples[i]);
  const key = `${leaf.callFrame.functionName || '(anonymous)'} ${leaf.callFrame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${leaf.callFrame.lineNumber + 1}`;
  selfUs.set(key, (selfUs.get(key) ?? 0) + us);
  const onStack = new Set();
  for (let id = leaf.id; id !== undefined; id = parent.get(id)) onStack.add(byId.get(id).callFrame.functionName);
  for (const name of inclusiveNames) if (onStack.has(name)) inclusiveUs.set(name, inclusiveUs.get(name) + us);
  let category = 'other JS';
  for (let id = leaf.id; id !== undefined; id = parent.get(id)) {
    const found = CATEGORIES.find(([, test]) => test(byId.get(id).callFrame));
    if (found) {
      category = found[0];
      break;
    }
  }
  categoryUs.set(category, (categoryUs.get(category) ?? 0) + us);
}
const ms = (us) => `${(us / 1000).toFixed(1)} ms`;
process.stdout.write(`${positionals[0]}: ${ms(totalUs)} sampled\n\nby category:\n`);
for (const [name, us] of [...categoryUs].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${ms(us).padStart(10)}  ${name}\n`);
if (inclusiveNames.length > 0) process.stdout.write(`\ninclusive:\n`);
for (const [name, us] of inclusiveUs) process.stdout.write(`  ${ms(us).padStart(10)}  ${name}\n`);
process.stdout.write(`\nby function (self):\n`);
for (const [name, us] of [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top ?? 30))) process.stdout.write(`  ${ms(us).padStart(10)}  ${name}\n`);
