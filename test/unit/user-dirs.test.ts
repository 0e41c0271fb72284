// Where skills-mount keeps a user's files on Linux, macOS and Windows: the base folders of
// user-dirs.ts and every default path built on them (config, approvals, sign-ins, link store,
// disk cache), with env, home and platform injected, as docs/configuration.md's table states them.
import { describe, expect, it } from 'vitest';
import { appDir, userDir, windowsAppData, xdgConfigHome } from '../../src/user-dirs.js';
import { defaultConfigPath } from '../../src/config/config.js';
import { defaultApprovalsPath } from '../../src/approvals/approval-store.js';
import { defaultTokenStorePath } from '../../src/auth/token-store.js';
import { defaultLinkStore } from '../../src/link/link-state.js';
import { defaultCacheRoot } from '../../src/cache/disk-cache.js';

const UNIX_HOME = '/home/me';
const MAC_HOME = '/Users/me';
const WIN_HOME = 'C:\\Users\\me';
const WIN_ENV = { APPDATA: 'C:\\Users\\me\\AppData\\Roaming', LOCALAPPDATA: 'C:\\Users\\me\\AppData\\Local' };

type Env = Record<string, string | undefined>;

/** Every default path, in the order of the docs' table. */
function defaults(env: Env, home: string, platform: NodeJS.Platform) {
  return {
    config: defaultConfigPath(env, home, platform),
    approvals: defaultApprovalsPath(env, home, platform),
    tokens: defaultTokenStorePath(env, home, platform),
    links: defaultLinkStore(env, home, platform),
    cache: defaultCacheRoot(env, home, platform),
  };
}

describe('base folders', () => {
  it('Linux and other Unix: ~/.config, ~/.local/share, ~/.cache', () => {
    for (const platform of ['linux', 'freebsd', 'openbsd'] as const) {
      const where = { env: {}, home: UNIX_HOME, platform };
      expect([userDir('config', where), userDir('data', where), userDir('cache', where)]).toEqual(['/home/me/.config', '/home/me/.local/share', '/home/me/.cache']);
    }
  });

  it('macOS: the same XDG-style folders, not ~/Library', () => {
    const where = { env: {}, home: MAC_HOME, platform: 'darwin' as const };
    expect([userDir('config', where), userDir('data', where), userDir('cache', where)]).toEqual(['/Users/me/.config', '/Users/me/.local/share', '/Users/me/.cache']);
  });

  it('Windows: %APPDATA% for config, %LOCALAPPDATA% for data and cache', () => {
    const where = { env: WIN_ENV, home: WIN_HOME, platform: 'win32' as const };
    expect([userDir('config', where), userDir('data', where), userDir('cache', where)]).toEqual([WIN_ENV.APPDATA, WIN_ENV.LOCALAPPDATA, WIN_ENV.LOCALAPPDATA]);
  });

  it('Windows without (or with a relative) %APPDATA%/%LOCALAPPDATA%: the folders under the profile', () => {
    for (const env of [{}, { APPDATA: 'Roaming', LOCALAPPDATA: '' }]) {
      const where = { env, home: WIN_HOME, platform: 'win32' as const };
      expect(userDir('config', where)).toBe('C:\\Users\\me\\AppData\\Roaming');
      expect(userDir('data', where)).toBe('C:\\Users\\me\\AppData\\Local');
    }
    expect(windowsAppData('roaming', { APPDATA: 'D:\\Roam' }, WIN_HOME)).toBe('D:\\Roam');
  });

  it('an absolute XDG variable wins on every platform; an empty or relative one is ignored', () => {
    const xdg = { XDG_CONFIG_HOME: '/x/conf', XDG_DATA_HOME: '/x/data', XDG_CACHE_HOME: '/x/cache' };
    for (const [platform, home] of [['linux', UNIX_HOME], ['darwin', MAC_HOME]] as const) {
      expect(userDir('config', { env: xdg, home, platform })).toBe('/x/conf');
      expect(userDir('data', { env: xdg, home, platform })).toBe('/x/data');
      expect(userDir('cache', { env: xdg, home, platform })).toBe('/x/cache');
      expect(userDir('config', { env: { XDG_CONFIG_HOME: 'rel/conf' }, home, platform })).toBe(`${home}/.config`);
      expect(userDir('data', { env: { XDG_DATA_HOME: '' }, home, platform })).toBe(`${home}/.local/share`);
    }
    const windowsXdg = { ...WIN_ENV, XDG_CONFIG_HOME: 'D:\\xdg\\config', XDG_CACHE_HOME: 'relative' };
    expect(userDir('config', { env: windowsXdg, home: WIN_HOME, platform: 'win32' })).toBe('D:\\xdg\\config');
    expect(userDir('cache', { env: windowsXdg, home: WIN_HOME, platform: 'win32' })).toBe(WIN_ENV.LOCALAPPDATA);
  });

  it("xdgConfigHome is ~/.config on every platform (the harnesses' rule), unlike userDir('config') on Windows", () => {
    expect(xdgConfigHome({ env: WIN_ENV, home: WIN_HOME, platform: 'win32' })).toBe('C:\\Users\\me\\.config');
    expect(xdgConfigHome({ env: {}, home: MAC_HOME, platform: 'darwin' })).toBe('/Users/me/.config');
    expect(xdgConfigHome({ env: { XDG_CONFIG_HOME: '/x/conf' }, home: UNIX_HOME, platform: 'linux' })).toBe('/x/conf');
  });
});

describe('default paths per platform', () => {
  it('Linux', () => {
    expect(defaults({}, UNIX_HOME, 'linux')).toEqual({
      config: '/home/me/.config/skills-mount/config.json',
      approvals: '/home/me/.config/skills-mount/approvals.json',
      tokens: '/home/me/.config/skills-mount/auth/tokens.json',
      links: '/home/me/.local/share/skills-mount/links',
      cache: '/home/me/.cache/skills-mount',
    });
  });

  it('macOS', () => {
    expect(defaults({}, MAC_HOME, 'darwin')).toEqual({
      config: '/Users/me/.config/skills-mount/config.json',
      approvals: '/Users/me/.config/skills-mount/approvals.json',
      tokens: '/Users/me/.config/skills-mount/auth/tokens.json',
      links: '/Users/me/.local/share/skills-mount/links',
      cache: '/Users/me/.cache/skills-mount',
    });
  });

  it('Windows', () => {
    expect(defaults(WIN_ENV, WIN_HOME, 'win32')).toEqual({
      config: 'C:\\Users\\me\\AppData\\Roaming\\skills-mount\\config.json',
      approvals: 'C:\\Users\\me\\AppData\\Roaming\\skills-mount\\approvals.json',
      tokens: 'C:\\Users\\me\\AppData\\Roaming\\skills-mount\\auth\\tokens.json',
      links: 'C:\\Users\\me\\AppData\\Local\\skills-mount\\links',
      cache: 'C:\\Users\\me\\AppData\\Local\\skills-mount\\cache',
    });
  });

  it('with the XDG variables set, every platform uses them', () => {
    const env = { XDG_CONFIG_HOME: '/x/conf', XDG_DATA_HOME: '/x/data', XDG_CACHE_HOME: '/x/cache' };
    const expected = {
      config: '/x/conf/skills-mount/config.json',
      approvals: '/x/conf/skills-mount/approvals.json',
      tokens: '/x/conf/skills-mount/auth/tokens.json',
      links: '/x/data/skills-mount/links',
      cache: '/x/cache/skills-mount',
    };
    expect(defaults(env, UNIX_HOME, 'linux')).toEqual(expected);
    expect(defaults(env, MAC_HOME, 'darwin')).toEqual(expected);
    const windowsEnv = { ...WIN_ENV, XDG_CONFIG_HOME: 'D:\\conf', XDG_DATA_HOME: 'D:\\data', XDG_CACHE_HOME: 'D:\\cache' };
    expect(defaults(windowsEnv, WIN_HOME, 'win32')).toEqual({
      config: 'D:\\conf\\skills-mount\\config.json',
      approvals: 'D:\\conf\\skills-mount\\approvals.json',
      tokens: 'D:\\conf\\skills-mount\\auth\\tokens.json',
      links: 'D:\\data\\skills-mount\\links',
      cache: 'D:\\cache\\skills-mount',
    });
  });

  // The disk cache bounds and sweeps its root: by default the link store (whose entries harnesses
  // load) never lies inside it, nor the cache inside the store, even where data and cache share a
  // base (%LOCALAPPDATA%).
  it('the disk cache and the link store never contain one another', () => {
    const cases: Array<[Env, string, NodeJS.Platform]> = [
      [{}, UNIX_HOME, 'linux'],
      [{}, MAC_HOME, 'darwin'],
      [WIN_ENV, WIN_HOME, 'win32'],
      [{}, WIN_HOME, 'win32'],
    ];
    for (const [env, home, platform] of cases) {
      const sep = platform === 'win32' ? '\\' : '/';
      const cache = defaultCacheRoot(env, home, platform) + sep;
      const links = defaultLinkStore(env, home, platform) + sep;
      expect(links.startsWith(cache), `${platform}: ${links} inside ${cache}`).toBe(false);
      expect(cache.startsWith(links), `${platform}: ${cache} inside ${links}`).toBe(false);
    }
    expect(appDir('cache', 'skills-mount', { env: WIN_ENV, home: WIN_HOME, platform: 'win32' })).toBe('C:\\Users\\me\\AppData\\Local\\skills-mount\\cache');
  });
});
