#!/usr/bin/env node
// One reader of a changing file: `stat-cat-race.mjs FILE STOPFILE`. Until STOPFILE exists, it
// stats FILE and reads it whole, over and over, and notes for each call its start and end on the
// monotonic clock (comparable between processes) and the version it saw: from stat, the size
// (versionedText(N) is 100 + N bytes); from the read, the N the text names, or -1 when its bytes
// are not exactly versionedText(N). Says `ready` on stderr after its first round; prints one JSON line at the end: rounds, and calls as
// [startNs, endNs, kind (0 stat, 1 read), version] (µs resolution, as numbers). Runs as a child of
// the test, never in the daemon's process; an error on a call is counted, not fatal (an ESTALE
// retried by the kernel cannot reach here, anything else is the test's failure to report).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const BASE_BYTES = 100;

/** The text of version `n`: its number, padded with dots to 100 + n bytes. */
export function versionedText(n) {
  const head = `version ${n}\n`;
  return head + '.'.repeat(BASE_BYTES + n - head.length - 1) + '\n';
}

function versionOfRead(bytes) {
  const text = bytes.toString('utf8');
  const match = /^version (\d+)\n/.exec(text);
  if (!match) return -1;
  const n = Number(match[1]);
  return text === versionedText(n) ? n : -1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, stopFile] = process.argv.slice(2);
  const now = () => Number(process.hrtime.bigint() / 1000n);
  const calls = [];
  const errors = [];
  let rounds = 0;
  while (!existsSync(stopFile)) {
    for (const kind of [0, 1]) {
      const startUs = now();
      try {
        const version = kind === 0 ? statSync(file).size - BASE_BYTES : versionOfRead(readFileSync(file));
        calls.push(startUs, now(), kind, version);
      } catch (error) {
        if (errors.length < 5) errors.push(`${kind === 0 ? 'stat' : 'read'}: ${error.message}`);
      }
    }
    rounds += 1;
    // The test changes the file only once every reader has seen the first version.
    if (rounds === 1) process.stderr.write('ready\n');
  }
  process.stdout.write(`${JSON.stringify({ rounds, calls, errors })}\n`);
}
