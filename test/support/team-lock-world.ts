// The people of a team as the lockfile tests need them, with no FUSE anywhere: each a HOME with
// XDG folders of its own (config, data, cache, state), a config file naming the team's server, and
// the built skills-mount CLI run as a child process in it; project folders as git repositories;
// a lockfile replaced by one rename (as a checkout or a merge tool does), and `link --watch` kept
// running as a child until stopped.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { lstat, mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { exitOf, stopChild } from './children.js';

/** The built CLI (rebuild dist after changing src). */
export const SKILLS_MOUNT = fileURLToPath(new URL('../../dist/cli/skills-mount.js', import.meta.url));

const run = promisify(execFile);

export interface Person {
  home: string;
  env: NodeJS.ProcessEnv;
  /** Their default config file (`$XDG_CONFIG_HOME/skills-mount/config.json`). */
  configFile: string;
  /** Their own policy file (`$XDG_CONFIG_HOME/skills-mount/policy.json`). */
  policyFile: string;
  /** Where link keeps its store (`$XDG_DATA_HOME/skills-mount/links`). */
  linkStore: string;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A person with an empty HOME under `base/name`: no config, no approvals, nothing linked. */
export async function person(base: string, name: string): Promise<Person> {
  const home = path.join(base, name);
  await mkdir(home, { recursive: true, mode: 0o700 });
  const config = path.join(home, '.config');
  const data = path.join(home, '.local', 'share');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: config,
    XDG_DATA_HOME: data,
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
  };
  return { home, env, configFile: path.join(config, 'skills-mount', 'config.json'), policyFile: path.join(config, 'skills-mount', 'policy.json'), linkStore: path.join(data, 'skills-mount', 'links') };
}

/** Writes the person's config file: `servers` is its "mcpServers" object. */
export async function writeConfig(who: Person, servers: Record<string, unknown>): Promise<void> {
  await mkdir(path.dirname(who.configFile), { recursive: true, mode: 0o700 });
  await writeFile(who.configFile, JSON.stringify({ mcpServers: servers }), { mode: 0o600 });
}

/** Writes the person's own policy file (theirs, not writable by others, as it must be to be honoured). */
export async function writePolicy(who: Person, policy: unknown): Promise<void> {
  await mkdir(path.dirname(who.policyFile), { recursive: true, mode: 0o700 });
  await writeFile(who.policyFile, JSON.stringify(policy), { mode: 0o600 });
}

/** `skills-mount ARGS` as `who`, in `cwd`; SIGKILLed after `timeoutMs`. */
export function cli(who: Person, args: readonly string[], options: { cwd?: string; timeoutMs?: number; runUnder?: readonly string[] } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    // runUnder: a command line the CLI runs under (it ends in one that execs its arguments).
    const [program, ...leading] = [...(options.runUnder ?? []), process.execPath, SKILLS_MOUNT, ...args];
    const child = spawn(program!, leading, { env: who.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A child `skills-mount ARGS` left running (link --watch), its output kept (stdout and stderr as they come). */
export interface RunningCli {
  child: ChildProcess;
  stderr(): string;
  /** SIGTERM (as Ctrl-C would), then SIGKILL after 5 s; resolves its exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startCli(who: Person, args: readonly string[]): RunningCli {
  const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env: who.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  // Its report (stdout) goes with its log: a failed wait shows both.
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return { child, stderr: () => stderr, stop: () => stopChild(child) };
}

/** Resolves once `running` has written `text` to stderr; rejects when it exits first or `timeoutMs` passes. */
export async function stderrSays(running: RunningCli, pattern: RegExp, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const exited = exitOf(running.child).then(() => true);
  let gone = false;
  void exited.then(() => (gone = true));
  while (!pattern.test(running.stderr())) {
    if (gone) throw new Error(`exited before saying ${pattern}:\n${running.stderr()}`);
    if (Date.now() > deadline) throw new Error(`did not say ${pattern} within ${timeoutMs} ms:\n${running.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `git ARGS` in `dir`, with an identity of its own (none may be configured here). */
export async function git(dir: string, ...args: string[]): Promise<string> {
  const env = { ...process.env, GIT_AUTHOR_NAME: 'Team', GIT_AUTHOR_EMAIL: 'team@example.com', GIT_COMMITTER_NAME: 'Team', GIT_COMMITTER_EMAIL: 'team@example.com', GIT_CONFIG_NOSYSTEM: '1', HOME: dir };
  const { stdout } = await run('git', ['-C', dir, ...args], { env });
  return stdout;
}

/** A new project folder that is a git repository. */
export async function gitProject(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await git(dir, 'init', '-q');
  return dir;
}

/** Replaces `file` with `text` by one rename over it, as a checkout or an editor's safe write does. */
export async function replaceByRename(file: string, text: string): Promise<void> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.new-${process.pid}-${Date.now()}`);
  await writeFile(temp, text);
  await rename(temp, file);
}

/** The names in a folder, sorted; none when it is missing. */
export async function namesIn(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).sort();
}

/** Every path under `dir` with its size and modification time: equal before and after when nothing was written. */
export async function treeStamp(dir: string): Promise<string[]> {
  const stamps: string[] = [];
  const walk = async (at: string): Promise<void> => {
    const stats = await lstat(at).catch(() => undefined);
    if (stats === undefined) return;
    stamps.push(`${path.relative(dir, at)} ${stats.size} ${stats.mtimeMs}`);
    if (stats.isDirectory()) for (const name of (await readdir(at)).sort()) await walk(path.join(at, name));
  };
  await walk(dir);
  return stamps;
}
