#!/usr/bin/env node
// Reads a mount's skills.json and then one skill's SKILL.md, over and over, for argv[5] ms:
// `read-race.mjs MOUNTPOINT LABEL SKILL_PATH MS`. A version is "older" than another when
// skills.json named it first. Prints one JSON line at the end: how many rounds, how many
// SKILL.md reads got a version older than the skills.json read just before named, and the
// slowest skills.json read (ms). Runs as a child of the test, never in the daemon's process.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { sha256Hex } from './digest.mjs';

const [mountpoint, label, skillPath, durationText] = process.argv.slice(2);
const file = path.join(mountpoint, label, skillPath, 'SKILL.md');
const order = new Map(); // digest -> when skills.json first named it (its rank)
let rounds = 0;
let older = 0;
let slowestJsonMs = 0;
const examples = [];
const until = performance.now() + Number(durationText);
while (performance.now() < until) {
  const startedMs = performance.now();
  const document = JSON.parse(await readFile(path.join(mountpoint, 'skills.json'), 'utf8'));
  slowestJsonMs = Math.max(slowestJsonMs, performance.now() - startedMs);
  const server = document.servers.find((entry) => entry.label === label);
  const named = server?.skills.find((entry) => entry.path === `${label}/${skillPath}`)?.digest;
  if (named !== undefined && !order.has(named)) order.set(named, order.size);
  const got = `sha256:${sha256Hex(await readFile(file))}`;
  rounds += 1;
  // A version skills.json never named yet is newer: fine. One it named before the one it names now is older.
  if (named !== undefined && order.has(got) && order.get(got) < order.get(named)) {
    older += 1;
    if (examples.length < 3) examples.push({ named, got });
  }
}
process.stdout.write(`${JSON.stringify({ rounds, older, versions: order.size, slowestJsonMs: Math.round(slowestJsonMs), examples })}\n`);
