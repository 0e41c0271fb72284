#!/usr/bin/env node
// Generates a synthetic skills tree for tests and benchmarks (plain node, no build):
//   node scripts/gen-skills.mjs DIR [--skills N] [--files M] [--group G] [--seed S] [--sizes small|realistic]
//                              [--big BYTES [--big-files K]]
// N skills (default 100) of M files each (default 5, SKILL.md included), grouped G per
// prefix directory (default 100; 0 = flat), every fourth extra file binary. Sizes of the
// extra files: `small` (default) 200 B..6 KiB; `realistic` log-uniform in bands shaped
// like published skills (70% 200 B..16 KiB, 25% 16..256 KiB, 5% 256 KiB..1 MiB).
// --big BYTES adds one skill, `big/SKILL.md` plus `big/assets/big.bin` of BYTES (binary);
// --big-files K makes K such skills (`big`, `big-2`, ...), each file with bytes of its own.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    skills: { type: 'string', default: '100' },
    files: { type: 'string', default: '5' },
    group: { type: 'string', default: '100' },
    seed: { type: 'string', default: '1' },
    sizes: { type: 'string', default: 'small' },
    big: { type: 'string' },
    'big-files': { type: 'string', default: '1' },
  },
});
if (positionals.length !== 1) {
  process.stderr.write('usage: node scripts/gen-skills.mjs DIR [--skills N] [--files M] [--group G] [--seed S] [--sizes small|realistic] [--big BYTES [--big-files K]]\n');
  process.exit(2);
}
const [dir] = positionals;
const skills = Number(values.skills);
const files = Number(values.files);
const group = Number(values.group);
let state = Number(values.seed) >>> 0;
if (values.sizes !== 'small' && values.sizes !== 'realistic') {
  process.stderr.write(`gen-skills: --sizes must be small or realistic, not "${values.sizes}"\n`);
  process.exit(2);
}

// mulberry32: deterministic, so a given command line always yields the same bytes.
function random() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const sizeBetween = (min, max) => min + Math.floor(random() * (max - min));
const logBetween = (min, max) => Math.floor(min * Math.pow(max / min, random()));
const KIB = 1024;
function extraFileSize() {
  if (values.sizes === 'small') return sizeBetween(200, 6144);
  const band = random();
  if (band < 0.7) return logBetween(200, 16 * KIB);
  if (band < 0.95) return logBetween(16 * KIB, 256 * KIB);
  return logBetween(256 * KIB, 1024 * KIB);
}
const WORDS = 'skill file read mount server digest verify page list cursor entry manifest resource text binary'.split(' ');
function text(size) {
  let out = '';
  while (out.length < size) out += `${WORDS[Math.floor(random() * WORDS.length)]}${random() < 0.1 ? '\n' : ' '}`;
  return out.slice(0, size - 1) + '\n';
}
function binary(size) {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = Math.floor(random() * 256);
  bytes[0] = 0; // a NUL guarantees it is served as a blob
  return bytes;
}

const started = Date.now();
let written = 0;
const pending = new Set();
for (let s = 0; s < skills; s++) {
  // Contents are drawn in order (deterministic); only the writes overlap.
  const job = writeSkill(s);
  pending.add(job);
  job.finally(() => pending.delete(job));
  if (pending.size >= 16) await Promise.race(pending);
}
await Promise.all(pending);
if (values.big !== undefined) {
  for (let k = 1; k <= Number(values['big-files']); k++) await writeBigSkill(k === 1 ? 'big' : `big-${k}`, Number(values.big));
}

async function writeBigSkill(name, size) {
  const root = join(dir, name);
  await mkdir(join(root, 'assets'), { recursive: true });
  await writeFile(join(root, 'SKILL.md'), `---\nname: ${name}\ndescription: One large binary file, for throughput benchmarks.\n---\n\n# ${name}\n`);
  await writeFile(join(root, 'assets', 'big.bin'), binary(size));
  written += 2;
}

async function writeSkill(s) {
  const name = `skill-${String(s).padStart(5, '0')}`;
  const prefix = group > 0 ? `g${String(Math.floor(s / group)).padStart(3, '0')}` : '';
  const root = join(dir, prefix, name);
  const skillMd = `---\nname: ${name}\ndescription: Synthetic skill ${s} for load tests; ${text(sizeBetween(20, 120)).replace(/\s+/g, " ").trim()}\nmetadata:\n  index: "${s}"\n---\n\n# ${name}\n\n${text(sizeBetween(200, 2000))}`;
  const contents = [['SKILL.md', skillMd]];
  for (let f = 1; f < files; f++) {
    if (f % 4 === 0) contents.push([`assets/blob-${f}.bin`, binary(extraFileSize())]);
    else contents.push([`references/ref-${f}.md`, text(extraFileSize())]);
  }
  // No empty references/ for SKILL.md-only skills: 100k skills would need 100k more inotify watches.
  await mkdir(join(root, files > 1 ? 'references' : ''), { recursive: true });
  if (files > 4) await mkdir(join(root, 'assets'), { recursive: true });
  await Promise.all(contents.map(([rel, content]) => writeFile(join(root, rel), content)));
  written += files;
}
process.stderr.write(`gen-skills: wrote ${skills} skills (${written} files) to ${dir} in ${Date.now() - started} ms\n`);
