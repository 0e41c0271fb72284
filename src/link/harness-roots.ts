// Where `skills-mount link HARNESS` puts approved skills: one skills root per harness and scope,
// each a folder the harness lists one level down (`<root>/<name>/SKILL.md`). Every root here is
// one of the discovery folders src/cache/discovery-folders.ts documents, with its sources; the
// choice among a harness's several folders is made here. Knows paths only.
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { platformPath, xdgConfigHome } from '../user-dirs.js';

type Env = Readonly<Record<string, string | undefined>>;

export type Scope = 'user' | 'project';

export interface Harness {
  /** The name on the command line. */
  name: string;
  /** How people call it. */
  title: string;
  /** The user root, relative to the home directory (or to XDG_CONFIG_HOME where `configRelative`). */
  user: string;
  /** The user root lies under XDG_CONFIG_HOME (default ~/.config, on every platform: the harness applies XDG everywhere) rather than the home directory. */
  configRelative?: boolean;
  /** The project root, relative to the project folder. */
  project: string;
}

// Codex reads both ~/.codex/skills (where it writes its own bundled skills, in .system) and
// ~/.agents/skills; its own root is the one linked for `codex`, the shared one for `agents`.
// OpenCode's project root is the shared .agents/skills, which it reads too (measured): a
// .opencode/ folder made for it would be a config folder to OpenCode, which then writes into it
// on every start (its .gitignore, and online an npm install of its plugin).
// The same roots on Linux, macOS and Windows (each under the home directory, %USERPROFILE% on
// Windows): Claude Code, Codex, Gemini CLI, Cursor and Copilot keep dot-folders in the home
// directory everywhere; OpenCode's folders come from xdg-basedir, which answers ~/.config on
// every platform; goose reads ~/.config/agents/skills as that literal path on every platform
// (its source: home_dir().join(".config").join("agents")), not under XDG_CONFIG_HOME. Only goose's own
// folder differs (~/.config/goose/skills; %APPDATA%\Block\goose\config\skills on Windows):
// discovery-folders.ts keeps the cache out of it, and nothing is linked there.
export const HARNESSES: readonly Harness[] = Object.freeze([
  { name: 'claude-code', title: 'Claude Code', user: '.claude/skills', project: '.claude/skills' },
  { name: 'codex', title: 'Codex', user: '.codex/skills', project: '.agents/skills' },
  { name: 'gemini', title: 'Gemini CLI', user: '.gemini/skills', project: '.gemini/skills' },
  { name: 'opencode', title: 'OpenCode', user: 'opencode/skills', configRelative: true, project: '.agents/skills' },
  { name: 'cursor', title: 'Cursor', user: '.cursor/skills', project: '.cursor/skills' },
  { name: 'vscode', title: 'VS Code (GitHub Copilot)', user: '.copilot/skills', project: '.github/skills' },
  { name: 'goose', title: 'goose', user: '.config/agents/skills', project: '.agents/skills' },
  { name: 'agents', title: 'the shared .agents folder (Codex, Gemini CLI, OpenCode, Cursor, VS Code, goose)', user: '.agents/skills', project: '.agents/skills' },
]);

export function harnessNamed(name: string): Harness {
  const found = HARNESSES.find((harness) => harness.name === name);
  if (found === undefined) throw new ConfigError(`unknown harness "${name}": one of ${HARNESSES.map((harness) => harness.name).join(', ')}`);
  return found;
}

/** The absolute skills root of `harness` in `scope` (a project's root needs `projectDir`); `platform` defaults to process.platform. */
export function harnessRoot(harness: Harness, scope: Scope, where: { home: string; env: Env; projectDir?: string | undefined; platform?: NodeJS.Platform | undefined }): string {
  const p = platformPath(where.platform);
  if (scope === 'project') {
    if (where.projectDir === undefined) throw new ConfigError('a project root needs --project DIR');
    return p.join(p.resolve(where.projectDir), harness.project);
  }
  if (harness.configRelative) return p.join(xdgConfigHome(where), harness.user);
  return p.join(where.home, harness.user);
}

/**
 * The folders from a project folder down to a project root of one of `harnesses` (`P/.claude`,
 * `P/.claude/skills`), shallowest first: each must be the project's own, no symbolic link out of
 * it. Undefined when `root` is no project root of theirs.
 */
export function projectFolders(root: string, harnesses: readonly string[]): string[] | undefined {
  for (const name of harnesses) {
    const relative = HARNESSES.find((harness) => harness.name === name)?.project;
    if (relative === undefined) continue;
    const tail = path.join(path.sep, relative);
    if (!root.endsWith(tail)) continue;
    const project = root.slice(0, root.length - tail.length);
    const parts = relative.split('/');
    return parts.map((_, index) => path.join(project, ...parts.slice(0, index + 1)));
  }
  return undefined;
}
