// The one documented list of folders that agent harnesses load skills from, and the check that
// keeps MCP-served content (the disk cache) out of every one of them (SEP-2640, "Cache
// integrity, cache isolation, and durable origin"). Knows paths only: nothing of the cache or the mount.
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { windowsAppData } from '../user-dirs.js';

/** One folder a harness scans for skills. */
export interface DiscoveryFolder {
  /**
   * `home`: `path` is relative to the home directory; `project`: `path` is the trailing
   * segments of a folder found in any project at any depth; `system`: `path` is absolute.
   */
  scope: 'home' | 'project' | 'system';
  path: string;
  /** Harnesses that load skills from it. */
  harnesses: readonly string[];
}

// Sources, each read when this list was written (re-check them when a harness changes its docs):
// - Claude Code: https://code.claude.com/docs/en/skills (personal ~/.claude/skills, project
//   .claude/skills, nested .claude/skills in subdirectories; custom commands in .claude/commands
//   "have been merged into skills" and create the same /name).
// - Codex: https://developers.openai.com/codex/skills (REPO $CWD/.agents/skills up to the repo
//   root, USER $HOME/.agents/skills, ADMIN /etc/codex/skills; earlier revisions of that page:
//   $CODEX_HOME/skills, default ~/.codex/skills, and .codex/skills in the repo).
// - OpenCode: https://opencode.ai/docs/skills (.opencode/skills, ~/.config/opencode/skills, and
//   .claude/skills, ~/.claude/skills, .agents/skills, ~/.agents/skills for compatibility; project
//   folders at every level from the working directory up).
// - Cursor: https://cursor.com/docs/skills (.agents/skills, .cursor/skills, ~/.agents/skills,
//   ~/.cursor/skills, and for compatibility .claude/skills, .codex/skills, ~/.claude/skills, ~/.codex/skills).
// - GitHub Copilot: https://docs.github.com/en/copilot/how-tos/use-copilot-agents/cloud-agent/create-skills
//   (.github/skills, .claude/skills, .agents/skills; ~/.copilot/skills, ~/.claude/skills, ~/.agents/skills).
// - Gemini CLI: https://geminicli.com/docs/cli/using-agent-skills/ (~/.gemini/skills, ~/.agents/skills;
//   workspace .gemini/skills, .agents/skills).
// - goose: https://block.github.io/goose/docs/guides/context-engineering/using-skills (~/.claude/skills,
//   ~/.config/agents/skills, ~/.config/goose/skills; ./.claude/skills, ./.goose/skills, ./.agents/skills).
//   On Windows its own folder is %APPDATA%\Block\goose\config\skills
//   (https://block.github.io/goose/docs/guides/config-files: config in %APPDATA%\Block\goose\config).
// Every other home folder here is the same on Linux, macOS and Windows (see harness-roots.ts).
// Not listed: plugin folders (Claude Code's ~/.claude/plugins, Codex plugins), which a harness
// loads only for a plugin installed through its own command, never for a folder that merely exists.
const CLAUDE = 'Claude Code';
const CODEX = 'Codex';
const OPENCODE = 'OpenCode';
const CURSOR = 'Cursor';
const COPILOT = 'GitHub Copilot';
const GEMINI = 'Gemini CLI';
const GOOSE = 'goose';

/** Every documented skill-discovery folder of the harnesses we know (see the sources above). */
export const DISCOVERY_FOLDERS: readonly DiscoveryFolder[] = [
  { scope: 'home', path: '.claude/skills', harnesses: [CLAUDE, OPENCODE, CURSOR, COPILOT, GOOSE] },
  { scope: 'home', path: '.claude/commands', harnesses: [CLAUDE] },
  { scope: 'home', path: '.agents/skills', harnesses: [CODEX, OPENCODE, CURSOR, COPILOT, GEMINI] },
  { scope: 'home', path: '.codex/skills', harnesses: [CODEX, CURSOR] },
  { scope: 'home', path: '.cursor/skills', harnesses: [CURSOR] },
  { scope: 'home', path: '.copilot/skills', harnesses: [COPILOT] },
  { scope: 'home', path: '.gemini/skills', harnesses: [GEMINI] },
  { scope: 'home', path: '.config/opencode/skills', harnesses: [OPENCODE] },
  { scope: 'home', path: '.config/goose/skills', harnesses: [GOOSE] },
  { scope: 'home', path: '.config/agents/skills', harnesses: [GOOSE] },
  { scope: 'system', path: '/etc/codex/skills', harnesses: [CODEX] },
  { scope: 'project', path: '.claude/skills', harnesses: [CLAUDE, OPENCODE, CURSOR, COPILOT, GOOSE] },
  { scope: 'project', path: '.claude/commands', harnesses: [CLAUDE] },
  { scope: 'project', path: '.agents/skills', harnesses: [CODEX, OPENCODE, CURSOR, COPILOT, GEMINI, GOOSE] },
  { scope: 'project', path: '.codex/skills', harnesses: [CODEX, CURSOR] },
  { scope: 'project', path: '.cursor/skills', harnesses: [CURSOR] },
  { scope: 'project', path: '.github/skills', harnesses: [COPILOT] },
  { scope: 'project', path: '.gemini/skills', harnesses: [GEMINI] },
  { scope: 'project', path: '.opencode/skills', harnesses: [OPENCODE] },
  { scope: 'project', path: '.goose/skills', harnesses: [GOOSE] },
];

export interface DiscoveryCheckOptions {
  /** The user's home directory. */
  home: string;
  /** For folders that move with the environment: $CODEX_HOME/skills, $XDG_CONFIG_HOME/{opencode,goose,agents}/skills, %APPDATA%. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Whose folders to add (goose's Windows folder on win32); default process.platform. */
  platform?: NodeJS.Platform | undefined;
}

/** A folder with its location settled: absolute for home and system folders. */
interface PlacedFolder {
  folder: DiscoveryFolder;
  /** Absolute path (home, system) or trailing segments (project). */
  where: string;
  /** How to name it in a message: `~/.claude/skills`, `$CODEX_HOME/skills`, `a project's .claude/skills`. */
  shown: string;
}

/**
 * Why `absolutePath` must not hold MCP-served content: a sentence naming the discovery folder it
 * is inside of (or equal to) and who loads skills from there; undefined when it is in none.
 * Symlinks of the longest existing prefix are resolved, on the path and on every home folder.
 */
export async function discoveryFolderProblem(absolutePath: string, options: DiscoveryCheckOptions): Promise<string | undefined> {
  const home = path.resolve(options.home);
  const lexical = path.resolve(absolutePath);
  const resolved = await resolveExistingPrefix(lexical);
  const candidates = resolved === lexical ? [lexical] : [lexical, resolved];
  const describe = (candidate: string) =>
    candidate === lexical ? tilde(lexical, home) : `${tilde(lexical, home)} (which resolves to ${tilde(resolved, home)})`;

  for (const placed of placedFolders(home, options.env, options.platform ?? process.platform)) {
    const scope = placed.folder.scope;
    if (scope === 'project') {
      for (const candidate of candidates) {
        const folder = projectFolderContaining(candidate, placed.where);
        if (folder !== undefined) return sentence(describe(candidate), candidate === folder, `${tilde(folder, home)} (${placed.shown})`, placed.folder);
      }
      continue;
    }
    // The folder itself may be a symlink (~/.claude/skills -> ~/dotfiles/skills): compare against both spellings.
    const folderResolved = await resolveExistingPrefix(placed.where);
    for (const candidate of candidates) {
      for (const folder of new Set([placed.where, folderResolved])) {
        if (isInside(candidate, folder)) return sentence(describe(candidate), samePath(candidate, folder), placed.shown, placed.folder);
      }
    }
  }
  return undefined;
}

function sentence(what: string, equal: boolean, folder: string, discovery: DiscoveryFolder): string {
  const who = discovery.harnesses;
  const names = who.length === 1 ? who[0] : `${who.slice(0, -1).join(', ')} and ${who[who.length - 1]}`;
  const verb = who.length === 1 ? 'loads' : 'load';
  return `${what} is ${equal ? '' : 'inside '}${folder}, a folder ${names} ${verb} skills from; MCP-served content must stay out of every discovery path`;
}

/** Home and system folders first, so a path under ~/.claude/skills is named as that, not as "a project's". */
function placedFolders(home: string, env: DiscoveryCheckOptions['env'], platform: NodeJS.Platform): PlacedFolder[] {
  const placed: PlacedFolder[] = [];
  for (const folder of DISCOVERY_FOLDERS) {
    if (folder.scope === 'home') placed.push({ folder, where: path.join(home, folder.path), shown: `~/${folder.path}` });
    if (folder.scope === 'system') placed.push({ folder, where: folder.path, shown: folder.path });
  }
  const codexHome = absoluteOrUndefined(env?.CODEX_HOME);
  if (codexHome !== undefined) placed.push({ folder: { scope: 'home', path: '$CODEX_HOME/skills', harnesses: [CODEX] }, where: path.join(codexHome, 'skills'), shown: '$CODEX_HOME/skills' });
  const configHome = absoluteOrUndefined(env?.XDG_CONFIG_HOME);
  if (configHome !== undefined) {
    for (const [app, harness] of [['opencode', OPENCODE], ['goose', GOOSE], ['agents', GOOSE]] as const) {
      const folder: DiscoveryFolder = { scope: 'home', path: `$XDG_CONFIG_HOME/${app}/skills`, harnesses: [harness] };
      placed.push({ folder, where: path.join(configHome, app, 'skills'), shown: folder.path });
    }
  }
  if (platform === 'win32') {
    const folder: DiscoveryFolder = { scope: 'home', path: '%APPDATA%\\Block\\goose\\config\\skills', harnesses: [GOOSE] };
    placed.push({ folder, where: path.join(windowsAppData('roaming', env ?? {}, home), 'Block', 'goose', 'config', 'skills'), shown: folder.path });
  }
  for (const folder of DISCOVERY_FOLDERS) {
    if (folder.scope === 'project') placed.push({ folder, where: folder.path, shown: `a project's ${folder.path}` });
  }
  return placed;
}

/** The prefix of `candidate` that ends in the `trailing` segments (e.g. `.claude/skills`), if any. */
function projectFolderContaining(candidate: string, trailing: string): string | undefined {
  const segments = candidate.split(path.sep);
  const wanted = trailing.split('/').map(fold);
  for (let start = 0; start + wanted.length <= segments.length; start++) {
    if (wanted.every((segment, offset) => fold(segments[start + offset] ?? '') === segment)) {
      return segments.slice(0, start + wanted.length).join(path.sep) || path.sep;
    }
  }
  return undefined;
}

function isInside(candidate: string, folder: string): boolean {
  const relative = path.relative(fold(folder), fold(candidate));
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

function samePath(a: string, b: string): boolean {
  return fold(a) === fold(b);
}

// Case-insensitive everywhere: on macOS and Windows `~/.Claude/Skills` is the same folder, and
// refusing a harmless look-alike on Linux costs one config change, while missing an alias would not.
function fold(text: string): string {
  return text.toLowerCase();
}

/** The path with symlinks of its longest existing prefix resolved; the rest appended unchanged. */
export async function resolveExistingPrefix(absolutePath: string): Promise<string> {
  const missing: string[] = [];
  let existing = absolutePath;
  for (;;) {
    try {
      return path.join(await realpath(existing), ...missing.reverse());
    } catch {
      // Missing, not a directory, or not searchable: resolve what lies above it.
      const parent = path.dirname(existing);
      if (parent === existing) return absolutePath;
      missing.push(path.basename(existing));
      existing = parent;
    }
  }
}

function absoluteOrUndefined(value: string | undefined): string | undefined {
  return value !== undefined && value !== '' && path.isAbsolute(value) ? path.resolve(value) : undefined;
}

function tilde(absolutePath: string, home: string): string {
  if (absolutePath === home) return '~';
  return absolutePath.startsWith(home + path.sep) ? `~${absolutePath.slice(home.length)}` : absolutePath;
}
