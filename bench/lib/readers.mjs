// The ways the benchmark reads a tree, identical for the mount and for local disk: async
// reads from this process, one `cat` process per file, `ls -lR`, and per-call latency
// probes run in separate processes. Nothing here serves a mount, so async access is safe.
import { execFile, spawn } from 'node:child_process';
import { open, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pinned } from './mount-child.mjs';
import { inParallel } from './stats.mjs';

/**
 * Reads every file ({path, sizeBytes}) under `root` with `concurrency` reads in flight;
 * resolves the total bytes, or rejects naming the files whose length was not the listed size.
 */
export async function readFiles(root, files, concurrency) {
  let totalBytes = 0;
  const wrong = [];
  await inParallel(files, concurrency, async (file) => {
    const length = (await readFile(path.join(root, file.path))).length;
    totalBytes += length;
    if (length !== file.sizeBytes) wrong.push(`${file.path}: ${length} bytes, listed ${file.sizeBytes}`);
  });
  if (wrong.length > 0) throw new Error(`${root}: ${wrong.length} of ${files.length} files read with the wrong length, e.g. ${wrong.slice(0, 3).join('; ')}`);
  return totalBytes;
}

/** stat(2) of every file, sequentially; resolves the total of their sizes. */
export async function statFiles(root, paths) {
  let totalBytes = 0;
  for (const relative of paths) totalBytes += (await stat(path.join(root, relative))).size;
  return totalBytes;
}

/** Writes the newline-separated list that catEach feeds to xargs. */
export async function writePathList(file, paths) {
  await writeFile(file, paths.map((relative) => `${relative}\n`).join(''));
}

/** One `cat` process per file (how agents read), via xargs; resolves once all have run. */
export function catEach(root, listFile) {
  return runQuiet('xargs', ['-a', listFile, '-d', '\n', '-n', '1', 'cat'], root);
}

/** `ls -lR` of `root`, output discarded. */
export function listRecursive(root) {
  return runQuiet('ls', ['-lR', '.'], root);
}

/** `ls -lR` of `root`, resolving the number of output lines (for checking, not timing). */
export function listRecursiveLines(root) {
  return new Promise((resolve, reject) => {
    execFile('ls', ['-lR', '.'], { cwd: root, maxBuffer: 1 << 30, env: cEnv() }, (error, stdout) =>
      error ? reject(error) : resolve(stdout.split('\n').filter((line) => !line.startsWith('total ')).length),
    );
  });
}

/** Microseconds of `count` stat(2) calls on one file, timed call by call in a separate process (on the CPUs `cpus`, a taskset list, when given). */
export function statLatencySamples(file, count, cpus) {
  const script = `
    const { statSync } = require('node:fs');
    const [file, count] = process.argv.slice(1);
    const samples = [];
    for (let i = 0; i < Number(count); i++) {
      const t0 = process.hrtime.bigint();
      statSync(file);
      samples.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
    process.stdout.write(JSON.stringify(samples));`;
  const [program, ...args] = pinned([process.execPath, '-e', script, file, String(count)], cpus);
  return new Promise((resolve, reject) => {
    execFile(program, args, { maxBuffer: 1 << 26 }, (error, stdout) => (error ? reject(error) : resolve(JSON.parse(stdout))));
  });
}

/** Microseconds of `count` runs of `cat FILE`, each a new process, timed by bash's clock around it. */
export function catLatencySamples(file, count) {
  const script = `
    for ((i = 0; i < $2; i++)); do
      t0=$EPOCHREALTIME; cat "$1" >/dev/null; t1=$EPOCHREALTIME
      echo "\${t0/./} \${t1/./}"
    done`;
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', script, 'bash', file, String(count)], { maxBuffer: 1 << 26 }, (error, stdout) => {
      if (error) return reject(error);
      resolve(
        stdout
          .trim()
          .split('\n')
          .map((line) => {
            const [t0, t1] = line.split(' ').map(Number);
            return t1 - t0;
          }),
      );
    });
  });
}

/** Byte-compares every file of two trees; resolves the paths that differ. */
export async function differingFiles(rootA, rootB, paths) {
  const differing = [];
  await inParallel(paths, 8, async (relative) => {
    const [a, b] = await Promise.all([readFile(path.join(rootA, relative)), readFile(path.join(rootB, relative))]);
    if (!a.equals(b)) differing.push(relative);
  });
  return differing;
}

function runQuiet(command, args, cwd) {
  return new Promise((resolve, reject) => {
    void open('/dev/null', 'w').then((devNull) => {
      const child = spawn(command, args, { cwd, stdio: ['ignore', devNull.fd, 'pipe'], env: cEnv() });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
      child.on('error', reject);
      child.on('exit', (code) => {
        void devNull.close();
        code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} in ${cwd} failed (${code}): ${stderr.slice(0, 500)}`));
      });
    }, reject);
  });
}

function cEnv() {
  // The C locale: no locale-aware sorting or formatting cost that differs between runs.
  return { ...process.env, LC_ALL: 'C' };
}
