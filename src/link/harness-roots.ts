// Where `skills-mount link HARNESS` puts approved skills: one skills root per harness and scope,
// each a folder the harness lists one level down (`<root>/<name>/SKILL.md`). Every root here is
// one of the discovery folders src/cache/discovery-folders.ts documents, with its sources; the
// choice among a harness's several folders is made here. Knows paths only.
import path from 'node:path';
import { ConfigError } from '../errors.js';

type Env = Readonly<Record<string, string | undefined>>;

export type Scope = 'user' | 'project';

export interface Harness {
  /** The name on the command line. */
  name: string;
  /** How people call it. */
  title: string;
  /** The user root, relative to the home directory (or to XDG_CONFIG_HOME where `configRelative`). */
  user: string;
  /** The user root lies under XDG_CONFIG_HOME (default ~/.config) rather than the home directory. */
  configRelative?: boolean;
  /** The project root, relative to the project folder. */
  project: string;
}

// Codex reads both ~/.codex/skills (where it writes its own bundled skills, in .system) and
// ~/.agents/skills; its own root is the one linked for `codex`, the shared one for `agents`.
// OpenCode's project root is the shared .agents/skills, which it reads too (measured): a
// .opencode/ folder made for it would be a config folder to OpenCode, which then writes into it
// on every start (its .gitignore, and online an npm install of its plugin).
export const HARNESSES: readonly Harness[] = Object.freeze([
  { name: 'claude-code', title: 'Claude Code', user: '.claude/skills', project: '.claude/skills' },
  { name: 'codex', title: 'Codex', user: '.codex/skills', project: '.agents/skills' },
  { name: 'gemini', title: 'Gemini CLI', user: '.gemini/skills', project: '.gemini/skills' },
  { name: 'opencode', title: 'OpenCode', user: 'opencode/skills', configRelative: true, project: '.agents/skills' },
  { name: 'cursor', title: 'Cursor', user: '.cursor/skills', project: '.cursor/skills' },
  { name: 'vscode', title: 'VS Code (GitHub Copilot)', user: '.copilot/skills', project: '.github/skills' },
  { name: 'goose', title: 'goose', user: 'agents/skills', configRelative: true, project: '.agents/skills' },
  { name: 'agents', title: 'the shared .agents folder (Codex, Gemini CLI, OpenCode, Cursor, VS Code, goose)', user: '.agents/skills', project: '.agents/skills' },
]);

export function harnessNamed(name: string): Harness {
  const found = HARNESSES.find((harness) => harness.name === name);
  if (found === undefined) throw new ConfigError(`unknown harness "${name}": one of ${HARNESSES.map((harness) => harness.name).join(', ')}`);
  return found;
}

/** The absolute skills root of `harness` in `scope` (a project's root needs `projectDir`). */
export function harnessRoot(harness: Harness, scope: Scope, where: { home: string; env: Env; projectDir?: string | undefined }): string {
  if (scope === 'project') {
    if (where.projectDir === undefined) throw new ConfigError('a project root needs --project DIR');
    return path.join(path.resolve(where.projectDir), harness.project);
  }
  if (harness.configRelative) {
    const xdg = where.env['XDG_CONFIG_HOME'];
    const base = xdg !== undefined && xdg !== '' && path.isAbsolute(xdg) ? xdg : path.join(where.home, '.config');
    return path.join(base, harness.user);
  }
  return path.join(where.home, harness.user);
}
