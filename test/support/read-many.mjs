#!/usr/bin/env node
// Reads many files concurrently (argv[2]: JSON list of paths, argv[3]: concurrency) and
// prints one JSON line per file: {"i", "sha256"} or {"i", "code"}. Runs as a child of the
// test, never inside the process serving the mount.
import { readFile } from 'node:fs/promises';
import { sha256Hex } from './digest.mjs';

const paths = JSON.parse(process.argv[2]);
const concurrency = Number(process.argv[3] ?? 8);
let next = 0;
async function worker() {
  while (next < paths.length) {
    const i = next++;
    try {
      const bytes = await readFile(paths[i]);
      process.stdout.write(`${JSON.stringify({ i, sha256: sha256Hex(bytes) })}\n`);
    } catch (error) {
      process.stdout.write(`${JSON.stringify({ i, code: error.code ?? String(error) })}\n`);
    }
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
