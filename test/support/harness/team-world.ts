// Two people sharing one project through git, for the lockfile tests through real harnesses: a
// skills-serve over HTTP (so both name it by one URL), a bare origin, A's clone (which commits the
// server config and skills-lock.json) and B's (cloned after A pushed), each with a HOME of its own;
// the skills-mount CLI and git run in a clone as that person. Every step is timed and printed as
// the command a person would type, as "team-lock:" lines.
import { spawn } from 'node:child_process';
import { mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { exitOf } from '../children.js';
import { startHttpServe, type ListeningServer } from '../http-server.js';
import { SKILLS_MOUNT, makeTestDir } from '../mount-harness.js';
import { writeTree } from '../skill-builder.js';
import { homeEnv, type CliResult } from './link-world.js';

export type Person = 'A' | 'B';

/** The server's label in the committed config, and so in the lockfile. */
export const LABEL = 'demo';
/** The config file committed in the project. */
export const CONFIG = '.mcp.json';
export const LOCKFILE = 'skills-lock.json';

/** Text that appears in one place only, per run: v1 and v2 of alpha's body, and the unlocked skill's description. */
export interface TeamMarkers {
  alphaV1: string;
  alphaV2: string;
  beta: string;
  gamma: string;
}

export function teamMarkers(): TeamMarkers {
  const tag = Math.random().toString(36).slice(2, 8);
  return { alphaV1: `alpha-v1-${tag}`, alphaV2: `alpha-v2-${tag}`, beta: `beta-body-${tag}`, gamma: `gamma-desc-${tag}` };
}

const md = (name: string, description: string, body: string) => `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;

/** alpha's SKILL.md as the server serves it in version 1 or 2: only the marker line differs. */
export function alphaMd(markers: TeamMarkers, version: 1 | 2): string {
  return md('alpha', 'Alpha, the team skill that changes. Use when asked for alpha.', `# Alpha\n\nMarker: ${version === 1 ? markers.alphaV1 : markers.alphaV2}\n`);
}

export interface TeamWorld {
  dir: string;
  markers: TeamMarkers;
  server: ListeningServer;
  /** The server's MCP URL, as both people's config names it. */
  url: string;
  skillsDir: string;
  repo: Record<Person, string>;
  home: Record<Person, string>;
  env: Record<Person, NodeJS.ProcessEnv>;
  /** `skills-mount ARGS` in the person's clone, as the person; timed and printed. */
  cli(who: Person, args: readonly string[], timeoutMs?: number): Promise<CliResult>;
  /** `git ARGS` in the person's clone; throws when git fails. */
  git(who: Person, args: readonly string[]): Promise<CliResult>;
  /** Prints one timed step (for steps that are not a CLI run: a harness session, a wait). */
  timed<T>(what: string, step: () => Promise<T>): Promise<T>;
  /** B clones the project (after A pushed). */
  cloneB(): Promise<void>;
  /** The server starts serving alpha version 2 (one file changed). */
  changeAlpha(): Promise<void>;
  stop(): Promise<void>;
}

/** An argument as a person types it: quoted when it has a space or a shell character. */
export function typed(args: readonly string[]): string {
  return args.map((arg) => (/^[\w@%+=:,./~-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** Prints `team-lock: <seconds> s  (<who>) <command>`. */
export function report(what: string, ms: number): void {
  console.log(`team-lock: ${(ms / 1000).toFixed(1).padStart(5)} s  ${what}`);
}

/**
 * The served skills (alpha v1, beta with a second file, gamma that nobody locks), the server, the
 * origin, and A's clone with the committed server config; B's clone is made by `cloneB`.
 */
export async function startTeamWorld(): Promise<TeamWorld> {
  const dir = await realpath(await makeTestDir());
  const markers = teamMarkers();
  const skillsDir = path.join(dir, 'skills');
  await writeTree(skillsDir, {
    'alpha/SKILL.md': alphaMd(markers, 1),
    'beta/SKILL.md': md('beta', 'Beta, the team skill that stays. Use when asked for beta.', `# Beta\n\n${markers.beta}\n\nSee notes.md.\n`),
    'beta/notes.md': '# Notes\n\nNothing changes here.\n',
    'gamma/SKILL.md': md('gamma', `Gamma, served but never locked (${markers.gamma}).`, '# Gamma\n'),
  });
  const server = await startHttpServe([skillsDir, '--ttl', '1']);
  const repo = { A: path.join(dir, 'a'), B: path.join(dir, 'b') };
  const home = { A: path.join(dir, 'home-a'), B: path.join(dir, 'home-b') };
  const env = {} as Record<Person, NodeJS.ProcessEnv>;
  for (const who of ['A', 'B'] as const) {
    await mkdir(home[who], { recursive: true, mode: 0o700 });
    env[who] = {
      ...homeEnv(home[who]),
      GIT_AUTHOR_NAME: who,
      GIT_AUTHOR_EMAIL: `${who.toLowerCase()}@example.com`,
      GIT_COMMITTER_NAME: who,
      GIT_COMMITTER_EMAIL: `${who.toLowerCase()}@example.com`,
      GIT_CONFIG_NOSYSTEM: '1',
    };
  }

  const exec = async (who: Person, cwd: string, program: string, args: readonly string[], timeoutMs: number): Promise<CliResult> => {
    const started = Date.now();
    const child = spawn(program, args, { cwd, env: env[who], stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    try {
      const exit = await exitOf(child);
      return { code: exit.code, stdout, stderr, durationMs: Date.now() - started };
    } finally {
      clearTimeout(timer);
    }
  };
  const git = async (who: Person, args: readonly string[], cwd = repo[who]): Promise<CliResult> => {
    const result = await exec(who, cwd, 'git', args, 30_000);
    if (result.code !== 0) throw new Error(`(${who}) git ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    report(shown(`(${who}) git ${typed(args)}`), result.durationMs);
    return result;
  };

  const origin = path.join(dir, 'origin.git');
  // Printed relative to the test's folder, as a person in it would type them.
  const shown = (text: string) => text.split(`${dir}/`).join('');
  const world: TeamWorld = {
    dir,
    markers,
    server,
    url: server.url,
    skillsDir,
    repo,
    home,
    env,
    async cli(who, args, timeoutMs = 60_000) {
      const result = await exec(who, repo[who], process.execPath, [SKILLS_MOUNT, ...args], timeoutMs);
      report(shown(`(${who}) skills-mount ${typed(args)}  [exit ${result.code}]`), result.durationMs);
      return result;
    },
    git: (who, args) => git(who, args),
    async cloneB() {
      await git('B', ['clone', '-q', origin, repo.B], dir);
    },
    async timed(what, step) {
      const started = Date.now();
      try {
        return await step();
      } finally {
        report(shown(what), Date.now() - started);
      }
    },
    changeAlpha: () => writeFile(path.join(skillsDir, 'alpha/SKILL.md'), alphaMd(markers, 2)),
    async stop() {
      await server.stop();
      // The link store's objects are read-only folders.
      await exec('A', dir, 'chmod', ['-R', 'u+w', dir], 30_000);
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await git('A', ['init', '-q', '--bare', '--initial-branch=main', origin], dir);
    await git('A', ['clone', '-q', origin, repo.A], dir);
    await git('A', ['checkout', '-q', '-b', 'main']);
    // The project names its server once, committed: every clone reaches the same URL under the same label.
    await writeFile(path.join(repo.A, CONFIG), `${JSON.stringify({ mcpServers: { [LABEL]: { url: server.url } } }, null, 2)}\n`);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return world;
}
