// Serves a real skills-mount from a child process (never from the test process, which
// would deadlock on its own mount) and always unmounts, even when a test fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { daemonEnv, exitOf, stopChild } from './children.js';
import { run } from './fuse-harness.js';
import { SKILLS_SERVE } from './http-server.js';
import { delay } from './poll.js';
import { makeTempDir } from './temp-dir.js';
import { testCorpusDir } from './test-corpus.mjs';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The project's own generated corpus (test/support/test-corpus.mjs), made once per test process. */
export const CORPUS_DIR = await testCorpusDir();
export const SKILLS_MOUNT = path.join(REPO, 'dist', 'cli', 'skills-mount.js');
export { SKILLS_SERVE };
const CLEANUP = path.join(REPO, 'scripts', 'fuse-cleanup.sh');

/** Temp dirs share this prefix so scripts/test.sh can clean up after a crashed run. */
export function makeTestDir(): Promise<string> {
  return makeTempDir('skills-mount-test-', '/tmp');
}

/** A stdio config entry running the reference server on `dir` with extra flags. */
export function serveEntry(dir: string, ...flags: string[]) {
  return { command: process.execPath, args: [SKILLS_SERVE, dir, ...flags] };
}

export interface RunningMount {
  readonly mountpoint: string;
  readonly dir: string;
  /** Everything the daemon wrote to stderr so far. */
  log(): string;
  /** Resolves once a log line matches. */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<void>;
  readonly child: ChildProcess;
  /** SIGTERM, wait for exit, then force-clean whatever is left; resolves the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  config?: Record<string, unknown>;
  args?: string[];
  dir?: string;
  env?: NodeJS.ProcessEnv;
  readyTimeoutMs?: number;
  /** The program and leading arguments that run skills-mount (default: node dist/cli/skills-mount.js). */
  command?: string[];
  /** Use the disk cache (args then say where); off by default, so request counts do not depend on earlier runs. */
  diskCache?: boolean;
}

/** Starts skills-mount on DIR/mnt and resolves once it reports the mount is ready. */
export async function startMount(options: StartOptions = {}): Promise<RunningMount> {
  const dir = options.dir ?? (await makeTestDir());
  const mountpoint = path.join(dir, 'mnt');
  const [program, ...leading] = options.command ?? [process.execPath, SKILLS_MOUNT];
  const args = [...leading, mountpoint, ...(options.args ?? []), ...(options.diskCache ? [] : ['--no-disk-cache'])];
  if (options.config) {
    const configPath = path.join(dir, 'config.json');
    await writeFile(configPath, JSON.stringify({ mcpServers: options.config }));
    args.push('--config', configPath);
  }
  const child = spawn(program!, args, { stdio: ['ignore', 'ignore', 'pipe'], env: daemonEnv(options.env ?? process.env) });
  let stderr = '';
  const waiters: Array<() => void> = [];
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const waiter of waiters.splice(0)) waiter();
  });
  const exited = exitOf(child).then((exit) => exit.code);
  let stopped: Promise<number | null> | undefined;

  const mount: RunningMount = {
    mountpoint,
    dir,
    child,
    log: () => stderr,
    waitForLog(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern} in:\n${stderr}`)), timeoutMs);
        const check = () => {
          if (pattern.test(stderr)) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        void exited.then((code) => {
          clearTimeout(timer);
          if (!pattern.test(stderr)) reject(new Error(`skills-mount exited (${code}) before ${pattern}:\n${stderr}`));
        });
        check();
      });
    },
    stop(signal = 'SIGTERM') {
      stopped ??= (async () => {
        // A daemon stuck on its own mount may outlive even SIGKILL until the cleanup aborts
        // that mount: wait a bounded time, then clean up regardless.
        const stoppedChild = stopChild(child, { signal, graceMs: 5_000 }).then((exit) => exit.code);
        const code = await Promise.race([stoppedChild, delay(10_000).then(() => null)]);
        await run('bash', [CLEANUP, dir]);
        return code;
      })();
      return stopped;
    },
  };
  try {
    await mount.waitForLog(/mounted /, options.readyTimeoutMs ?? 30_000);
  } catch (error) {
    await mount.stop();
    throw error;
  }
  return mount;
}
