#!/usr/bin/env node
// Load test: concurrent readers (cat, grep -r, find -exec sha256sum) over the whole corpus
// through a real mount whose server answers every request 50 ms late; every byte is
// compared with the source. Needs `npx tsc -p .` first.
//   node scripts/load-test.mjs [--readers 16] [--passes 3] [--delay-ms 50] [--corpus DIR]
// Prints one JSON line with readers, passes, bytes read, errors, wall time and peak RSS;
// exits 1 on any error. test/e2e/load-corpus.test.ts runs a reduced version in CI.
import { execFile, spawn } from 'node:child_process';
import { testCorpusDir } from '../test/support/test-corpus.mjs';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SKILLS_MOUNT = path.join(REPO, 'dist', 'cli', 'skills-mount.js');
const SKILLS_SERVE = path.join(REPO, 'dist', 'cli', 'skills-serve.js');
const FAULT_PROXY = path.join(REPO, 'test', 'support', 'fault-proxy.mjs');
const CLEANUP = path.join(REPO, 'scripts', 'fuse-cleanup.sh');

/** No single reader command may take longer than this: past it, it counts as a hang. */
const COMMAND_TIMEOUT_MS = 120_000;

function exec(command, args, encoding = 'utf8') {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: COMMAND_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, encoding }, (error, stdout, stderr) => {
      resolve({ ok: error === null, error, stdout, stderr: String(stderr) });
    });
  });
}

async function listFiles(dir, prefix = '') {
  const files = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const relative = path.join(prefix, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(path.join(dir, entry.name), relative)));
    else if (entry.isFile()) files.push(relative);
  }
  return files.sort();
}

/** The source's truth: bytes, sha256 and line count (as grep -c counts) per file. */
async function describeCorpus(corpus) {
  const files = new Map();
  for (const relative of await listFiles(corpus)) {
    const bytes = await readFile(path.join(corpus, relative));
    let lines = 0;
    for (const byte of bytes) if (byte === 10) lines += 1;
    if (bytes.length > 0 && bytes[bytes.length - 1] !== 10) lines += 1;
    files.set(relative, { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), lines });
  }
  return files;
}

/** Parses "prefix/relative<sep>value" lines into relative -> value. */
function byFile(output, root, pattern) {
  const map = new Map();
  for (const line of output.split('\n')) {
    const match = pattern.exec(line);
    if (match) map.set(path.relative(root, match.groups.path), match.groups.value);
  }
  return map;
}

function compare(kind, expected, actual, errors) {
  for (const [file, value] of expected) {
    if (actual.get(file) !== value) errors.push(`${kind}: ${file}: expected ${value}, got ${actual.get(file) ?? 'nothing'}`);
  }
  for (const file of actual.keys()) if (!expected.has(file)) errors.push(`${kind}: ${file}: not in the source`);
}

async function catReader(root, corpus, errors) {
  for (const [file, facts] of corpus) {
    const result = await exec('cat', [path.join(root, file)], 'buffer');
    if (!result.ok) errors.push(`cat ${file}: ${result.error.killed ? 'hung (killed)' : result.stderr.trim() || result.error.message}`);
    else if (createHash('sha256').update(result.stdout).digest('hex') !== facts.sha256) errors.push(`cat ${file}: bytes differ from the source`);
  }
}

async function grepReader(root, corpus, errors) {
  const result = await exec('grep', ['-r', '-c', '--binary-files=text', '', root]);
  if (!result.ok) return errors.push(`grep -r: ${result.error.killed ? 'hung (killed)' : result.stderr.trim() || result.error.message}`);
  const actual = byFile(result.stdout, root, /^(?<path>.*):(?<value>\d+)$/);
  compare('grep -r -c', new Map([...corpus].map(([file, facts]) => [file, String(facts.lines)])), actual, errors);
}

async function findReader(root, corpus, errors) {
  const result = await exec('find', [root, '-type', 'f', '-exec', 'sha256sum', '{}', '+']);
  if (!result.ok) return errors.push(`find -exec: ${result.error.killed ? 'hung (killed)' : result.stderr.trim() || result.error.message}`);
  const actual = byFile(result.stdout, root, /^(?<value>[0-9a-f]{64}) {2}(?<path>.*)$/);
  compare('find -exec sha256sum', new Map([...corpus].map(([file, facts]) => [file, facts.sha256])), actual, errors);
}

const READERS = [catReader, grepReader, findReader];

async function peakRssBytes(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)[1]) * 1024;
}

/** Mounts the corpus behind a delaying proxy, runs the readers, unmounts; resolves the figures. */
/** Without a corpus, the project's generated test corpus (test/support/test-corpus.mjs). */
export async function runLoad({ readers = 16, passes = 3, delayMs = 50, corpus, log = () => {} } = {}) {
  corpus ??= await testCorpusDir();
  const truth = await describeCorpus(corpus);
  const corpusBytes = [...truth.values()].reduce((sum, facts) => sum + facts.size, 0);
  const dir = await mkdtemp('/tmp/skills-mount-test-load-');
  const mountpoint = path.join(dir, 'mnt');
  const config = path.join(dir, 'config.json');
  const server = { command: process.execPath, args: [FAULT_PROXY, '--delay-ms', String(delayMs), '--', process.execPath, SKILLS_SERVE, corpus, '--lenient'] };
  await writeFile(config, JSON.stringify({ mcpServers: { corpus: server } }));
  const daemon = spawn(process.execPath, [SKILLS_MOUNT, mountpoint, '--config', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let daemonLog = '';
  const exited = new Promise((resolve) => daemon.once('exit', (code) => resolve(code)));
  try {
    await new Promise((resolve, reject) => {
      daemon.stderr.setEncoding('utf8').on('data', (chunk) => {
        daemonLog += chunk;
        if (/mounted /.test(daemonLog)) resolve();
      });
      void exited.then((code) => reject(new Error(`skills-mount exited (${code}) before mounting:\n${daemonLog}`)));
    });
    log(`mounted ${mountpoint}; ${readers} readers x ${passes} passes over ${truth.size} files (${corpusBytes} bytes), server delay ${delayMs} ms`);
    const root = path.join(mountpoint, 'corpus');
    const errors = [];
    const startedAt = performance.now();
    await Promise.all(
      Array.from({ length: readers }, async (_, i) => {
        const reader = READERS[i % READERS.length];
        for (let pass = 0; pass < passes; pass++) await reader(root, truth, errors);
      }),
    );
    const wallMs = Math.round(performance.now() - startedAt);
    const peakRss = await peakRssBytes(daemon.pid);
    const daemonErrors = daemonLog.split('\n').filter((line) => /Error|EIO|timed out|connection (closed|lost)/.test(line));
    return {
      readers,
      passes,
      delayMs,
      files: truth.size,
      bytesRead: corpusBytes * readers * passes,
      errors: errors.length + daemonErrors.length,
      errorSamples: [...errors, ...daemonErrors].slice(0, 10),
      wallMs,
      peakRssMiB: Math.round(peakRss / (1024 * 1024)),
    };
  } finally {
    daemon.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
    await exec('bash', [CLEANUP, dir]);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      readers: { type: 'string', default: '16' },
      passes: { type: 'string', default: '3' },
      'delay-ms': { type: 'string', default: '50' },
      corpus: { type: 'string' },
    },
  });
  const figures = await runLoad({
    readers: Number(values.readers),
    passes: Number(values.passes),
    delayMs: Number(values['delay-ms']),
    corpus: values.corpus,
    log: (line) => process.stderr.write(`load-test: ${line}\n`),
  });
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  process.exit(figures.errors === 0 ? 0 : 1);
}
