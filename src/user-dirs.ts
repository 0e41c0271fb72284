// Where a user's own files go by default, per platform: the base folders for configuration, data
// and cache, and the folder one application keeps in each. Knows paths only (no fs, no process
// state beyond its defaults), so every layer may use it and tests inject env, home and platform.
import path from 'node:path';

type Env = Readonly<Record<string, string | undefined>>;

/** What a folder holds: settings a user edits or keeps (config), state that must last (data), what can be refetched (cache). */
export type UserDirKind = 'config' | 'data' | 'cache';

/** Whose folders, on which platform: the environment and home directory, and process.platform unless given. */
export interface UserDirsWhere {
  env: Env;
  home: string;
  platform?: NodeJS.Platform | undefined;
}

const XDG_VARIABLE: Readonly<Record<UserDirKind, string>> = { config: 'XDG_CONFIG_HOME', data: 'XDG_DATA_HOME', cache: 'XDG_CACHE_HOME' };
const XDG_DEFAULT: Readonly<Record<UserDirKind, readonly string[]>> = { config: ['.config'], data: ['.local', 'share'], cache: ['.cache'] };

/** The path functions of `platform` (win32 or posix), so a Windows path is built with backslashes even in a test on Linux. */
export function platformPath(platform: NodeJS.Platform = process.platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

// macOS gets the XDG folders, not ~/Library/Application Support: that is where command-line tools
// keep theirs there (OpenCode through xdg-basedir, goose through etcetera's XDG strategy, git,
// gh), where users look for a CLI's dotfiles, and the same paths as on Linux let the docs, shell
// lines and dotfile repositories carry over; a path with a space would also break unquoted use.
/**
 * The base folder of `kind`. An XDG variable (`XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `XDG_CACHE_HOME`)
 * wins on every platform when it is absolute (the XDG rule: a relative one is ignored). Otherwise:
 * Linux, macOS and other Unix: `~/.config`, `~/.local/share`, `~/.cache`; Windows: `%APPDATA%` for
 * config, `%LOCALAPPDATA%` for data and cache.
 */
export function userDir(kind: UserDirKind, where: UserDirsWhere): string {
  const platform = where.platform ?? process.platform;
  const p = platformPath(platform);
  const xdg = absolute(where.env[XDG_VARIABLE[kind]], p);
  if (xdg !== undefined) return xdg;
  if (platform === 'win32') return windowsAppData(kind === 'config' ? 'roaming' : 'local', where.env, where.home);
  return p.join(where.home, ...XDG_DEFAULT[kind]);
}

/**
 * The folder `app` keeps its files of `kind` in: `<base>/<app>`. On Windows with no XDG variable,
 * data and cache share `%LOCALAPPDATA%`, so the cache gets its own `<app>\cache` beneath (the
 * Windows habit), where no sweep of the cache can reach the data.
 */
export function appDir(kind: UserDirKind, app: string, where: UserDirsWhere): string {
  const platform = where.platform ?? process.platform;
  const p = platformPath(platform);
  const base = p.join(userDir(kind, where), app);
  const sharesData = kind === 'cache' && platform === 'win32' && absolute(where.env[XDG_VARIABLE.cache], p) === undefined;
  return sharesData ? p.join(base, 'cache') : base;
}

/** `%APPDATA%` (roaming) or `%LOCALAPPDATA%` (local) when absolute, else `<home>\AppData\Roaming` or `<home>\AppData\Local`. */
export function windowsAppData(which: 'roaming' | 'local', env: Env, home: string): string {
  const given = absolute(env[which === 'roaming' ? 'APPDATA' : 'LOCALAPPDATA'], path.win32);
  return given ?? path.win32.join(home, 'AppData', which === 'roaming' ? 'Roaming' : 'Local');
}

/**
 * `$XDG_CONFIG_HOME` when absolute, else `<home>/.config`, on every platform: the rule of tools
 * that apply XDG everywhere (OpenCode's xdg-basedir keeps `~/.config/opencode` on macOS and
 * Windows too), as opposed to userDir('config'), which is this program's own choice per platform.
 */
export function xdgConfigHome(where: UserDirsWhere): string {
  const p = platformPath(where.platform);
  return absolute(where.env[XDG_VARIABLE.config], p) ?? p.join(where.home, ...XDG_DEFAULT.config);
}

function absolute(value: string | undefined, p: path.PlatformPath): string | undefined {
  return value !== undefined && value !== '' && p.isAbsolute(value) ? value : undefined;
}
