// Where `skills-mount link HARNESS` links on Linux, macOS and Windows: the same folder under the
// home directory on each (what every harness reads there), OpenCode's under XDG_CONFIG_HOME when
// set, and goose's ~/.config/agents/skills literally (goose does not apply XDG_CONFIG_HOME to it).
import { describe, expect, it } from 'vitest';
import { HARNESSES, harnessNamed, harnessRoot, projectFolders } from '../../src/link/harness-roots.js';

const USER_ROOTS: Readonly<Record<string, string>> = {
  'claude-code': '.claude/skills',
  codex: '.codex/skills',
  gemini: '.gemini/skills',
  opencode: '.config/opencode/skills',
  cursor: '.cursor/skills',
  vscode: '.copilot/skills',
  goose: '.config/agents/skills',
  agents: '.agents/skills',
};

describe('harness user roots per platform', () => {
  it('every harness has its root under the home directory on Linux and macOS', () => {
    expect(HARNESSES.map((harness) => harness.name).sort()).toEqual(Object.keys(USER_ROOTS).sort());
    for (const [platform, home] of [['linux', '/home/me'], ['darwin', '/Users/me']] as const) {
      for (const harness of HARNESSES) {
        expect(harnessRoot(harness, 'user', { home, env: {}, platform })).toBe(`${home}/${USER_ROOTS[harness.name]}`);
      }
    }
  });

  it('on Windows the same folders under %USERPROFILE%, not under %APPDATA%', () => {
    const env = { APPDATA: 'C:\\Users\\me\\AppData\\Roaming', LOCALAPPDATA: 'C:\\Users\\me\\AppData\\Local' };
    for (const harness of HARNESSES) {
      expect(harnessRoot(harness, 'user', { home: 'C:\\Users\\me', env, platform: 'win32' })).toBe(`C:\\Users\\me\\${USER_ROOTS[harness.name]!.replaceAll('/', '\\')}`);
    }
  });

  it("OpenCode's root follows an absolute XDG_CONFIG_HOME on every platform; goose's does not", () => {
    expect(harnessRoot(harnessNamed('opencode'), 'user', { home: '/home/me', env: { XDG_CONFIG_HOME: '/x/conf' }, platform: 'linux' })).toBe('/x/conf/opencode/skills');
    expect(harnessRoot(harnessNamed('opencode'), 'user', { home: '/Users/me', env: { XDG_CONFIG_HOME: '/x/conf' }, platform: 'darwin' })).toBe('/x/conf/opencode/skills');
    expect(harnessRoot(harnessNamed('opencode'), 'user', { home: 'C:\\Users\\me', env: { XDG_CONFIG_HOME: 'D:\\conf' }, platform: 'win32' })).toBe('D:\\conf\\opencode\\skills');
    expect(harnessRoot(harnessNamed('opencode'), 'user', { home: '/home/me', env: { XDG_CONFIG_HOME: 'relative' }, platform: 'linux' })).toBe('/home/me/.config/opencode/skills');
    expect(harnessRoot(harnessNamed('goose'), 'user', { home: '/home/me', env: { XDG_CONFIG_HOME: '/x/conf' }, platform: 'linux' })).toBe('/home/me/.config/agents/skills');
  });

  it('a project root is the same relative folder on every platform', () => {
    expect(harnessRoot(harnessNamed('claude-code'), 'project', { home: '/home/me', env: {}, projectDir: '/src/app', platform: 'linux' })).toBe('/src/app/.claude/skills');
    expect(harnessRoot(harnessNamed('gemini'), 'project', { home: 'C:\\Users\\me', env: {}, projectDir: 'D:\\src\\app', platform: 'win32' })).toBe('D:\\src\\app\\.gemini\\skills');
    expect(() => harnessRoot(harnessNamed('codex'), 'project', { home: '/home/me', env: {} })).toThrow('--project DIR');
  });
});

describe('the folders from a project to its root', () => {
  it('each folder link may not follow out of the project, shallowest first; none for a root that is no project root of the harness', () => {
    expect(projectFolders('/p/.claude/skills', ['claude-code'])).toEqual(['/p/.claude', '/p/.claude/skills']);
    expect(projectFolders('/p/.agents/skills', ['agents', 'codex'])).toEqual(['/p/.agents', '/p/.agents/skills']);
    expect(projectFolders('/p/.github/skills', ['vscode'])).toEqual(['/p/.github', '/p/.github/skills']);
    expect(projectFolders('/p/.claude/skills', ['codex'])).toBeUndefined();
    expect(projectFolders('/p/.claude/skills', ['unknown'])).toBeUndefined();
  });
});
