// Runs one non-interactive session of a real harness against a fresh mock model, and returns what
// it printed and every request it sent. The harness and all it started are ended at the deadline,
// and in any case before this returns.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, lchown, mkdtemp, readdir } from 'node:fs/promises';
import path from 'node:path';
import { harnessPrefix, harnesses, isInstalled, type HarnessKind } from './harnesses.js';
import { startMockModel, type ModelScript, type RecordedRequest } from './mock-model.mjs';
import { ProcessTree } from './process-tree.js';

export interface RunOptions {
  /** The HOME for the session (a temp dir); the harness's config is written under it. */
  home: string;
  cwd: string;
  prompt: string;
  /** The model's answers (default: "done" to everything). */
  script?: ModelScript;
  /** The whole session's deadline (default 90 s); the process tree is killed then. */
  timeoutMs?: number;
  extraArgs?: readonly string[];
  /** Added to (or overriding) the harness's environment. */
  env?: Record<string, string>;
  /**
   * Run as this user (and `gid`): HOME and cwd are handed to it first, modes kept. Root ignores file
   * modes, so a test of a read-only root running as root needs this to mean anything.
   */
  uid?: number;
  gid?: number;
}

export interface RunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Every request the mock received, in order (model turns, probes, refused proxy attempts). */
  requests: RecordedRequest[];
  durationMs: number;
}

/** How long a killed harness gets between SIGTERM and SIGKILL. */
const GRACE_MS = 2_000;

/** One session of harness `kind`: mock started, config prepared, harness run, everything ended. */
export async function runHarness(kind: HarnessKind, options: RunOptions): Promise<RunResult> {
  const harness = harnesses[kind];
  // spawn says ENOENT for a missing executable and a missing cwd alike: say which.
  if (!isInstalled(kind)) throw new Error(`${kind} is not installed: no ${harness.bin} (scripts/harnesses.sh installs it)`);
  if (!existsSync(options.cwd)) throw new Error(`the working directory ${options.cwd} does not exist`);
  const mock = await startMockModel({ harness: kind, script: options.script ?? (() => 'done') });
  try {
    await harness.prepare(options.home, mock.url);
    const { argv, env } = harness.command(options.prompt, { home: options.home, cwd: options.cwd, mockUrl: mock.url, extraArgs: options.extraArgs ?? [] });
    if (options.uid !== undefined) {
      for (const dir of [options.home, options.cwd]) await chownTree(dir, options.uid, options.gid ?? options.uid);
      argv[0] = await reachableBy(options.uid, kind, argv[0]!);
    }
    const started = Date.now();
    const outcome = await runTree(argv, { cwd: options.cwd, env: { ...env, ...options.env }, timeoutMs: options.timeoutMs ?? 90_000, uid: options.uid, gid: options.gid ?? options.uid });
    return { ...outcome, requests: [...mock.requests], durationMs: Date.now() - started };
  } finally {
    await mock.close();
  }
}

/** Per harness, its install where another uid can reach it (made once per process). */
const mirrors = new Map<HarnessKind, Promise<string>>();

/**
 * `bin` where `uid` can run it: as it is when it can, else from hard links of the harness's
 * install under /tmp (the clone may sit under a folder only its owner enters, as root's home or a
 * `mktemp -d` folder does). Removed with the other test folders (scripts/test.sh's skills-mount-test-*).
 */
async function reachableBy(uid: number, kind: HarnessKind, bin: string): Promise<string> {
  if ((await runQuiet('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', 'test', '-x', bin])) === 0) return bin;
  const installed = path.join(harnessPrefix(), kind);
  const relative = path.relative(installed, bin);
  let mirror = mirrors.get(kind);
  if (mirror === undefined) {
    mirror = (async () => {
      const dir = await mkdtemp(path.join('/tmp', `skills-mount-test-harness-${kind}-`));
      await chmod(dir, 0o755);
      if ((await runQuiet('cp', ['-al', installed, path.join(dir, kind)])) !== 0 && (await runQuiet('cp', ['-a', installed, path.join(dir, kind)])) !== 0) throw new Error(`cannot copy ${installed} for uid ${uid}`);
      return path.join(dir, kind);
    })();
    mirrors.set(kind, mirror);
  }
  return path.join(await mirror, relative);
}

function runQuiet(command: string, args: string[]): Promise<number | null> {
  return new Promise((resolve) => spawn(command, args, { stdio: 'ignore' }).on('close', resolve).on('error', () => resolve(null)));
}

/** Gives `dir` and everything below it (symlinks themselves, not their targets) to uid:gid. */
async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  await lchown(dir, uid, gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const child = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(child, uid, gid);
    else await lchown(child, uid, gid);
  }
}

interface TreeOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/** Runs argv in a process group of its own (stdin /dev/null); ends the whole tree at the deadline and after exit. */
async function runTree(argv: string[], options: { cwd: string; env: Record<string, string>; timeoutMs: number; uid: number | undefined; gid: number | undefined }): Promise<TreeOutcome> {
  const ids = options.uid === undefined ? {} : { uid: options.uid, gid: options.gid ?? options.uid };
  const child = spawn(argv[0]!, argv.slice(1), { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...ids });
  const tree = new ProcessTree(child.pid!);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  // Output is complete when the pipes close, which a leftover grandchild can delay until it is killed.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let timedOut = false;
  const scanner = setInterval(() => tree.scan(), 200);
  const deadline = setTimeout(() => {
    timedOut = true;
    tree.signal('SIGTERM');
    setTimeout(() => tree.signal('SIGKILL'), GRACE_MS).unref();
  }, options.timeoutMs);
  try {
    const { code, signal } = await exited;
    // Whatever the harness left running (a shell, a PTY, an MCP server) ends with it.
    tree.signal('SIGKILL');
    await closed;
    return { exitCode: code, signal, timedOut, stdout, stderr };
  } finally {
    clearInterval(scanner);
    clearTimeout(deadline);
    tree.signal('SIGKILL');
  }
}
