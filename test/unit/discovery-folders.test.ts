// The discovery-folder check: MCP-served content must never land where an agent harness loads
// skills from, whether the path names such a folder directly, reaches it through a symlink, or
// sits in a project's folder at any depth.
import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DISCOVERY_FOLDERS, discoveryFolderProblem } from '../../src/cache/discovery-folders.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('discovery-');
const tempDir = () => temps.make();

afterEach(() => temps.removeAll());

const TAIL = 'MCP-served content must stay out of every discovery path';

describe('discovery folders', () => {
  it('lists the folders of the harnesses the issue names', () => {
    const listed = DISCOVERY_FOLDERS.map((folder) => `${folder.scope}:${folder.path}`);
    for (const wanted of ['home:.claude/skills', 'project:.claude/skills', 'home:.codex/skills', 'home:.agents/skills', 'project:.agents/skills', 'home:.gemini/skills', 'home:.config/goose/skills']) {
      expect(listed).toContain(wanted);
    }
  });

  it('names the folder and who loads from it for a path inside a home folder', async () => {
    const home = await tempDir();
    const problem = await discoveryFolderProblem(path.join(home, '.claude/skills/mcp-cache'), { home });
    expect(problem).toBe(`~/.claude/skills/mcp-cache is inside ~/.claude/skills, a folder Claude Code, OpenCode, Cursor, GitHub Copilot and goose load skills from; ${TAIL}`);
    expect(await discoveryFolderProblem(path.join(home, '.config/goose/skills/x'), { home })).toBe(`~/.config/goose/skills/x is inside ~/.config/goose/skills, a folder goose loads skills from; ${TAIL}`);
  });

  it('refuses the folder itself, but not its parent, a look-alike sibling or the default cache', async () => {
    const home = await tempDir();
    expect(await discoveryFolderProblem(path.join(home, '.gemini/skills'), { home })).toBe(`~/.gemini/skills is ~/.gemini/skills, a folder Gemini CLI loads skills from; ${TAIL}`);
    expect(await discoveryFolderProblem(path.join(home, '.claude'), { home })).toBeUndefined();
    expect(await discoveryFolderProblem(path.join(home, '.claude/skillset/x'), { home })).toBeUndefined();
    expect(await discoveryFolderProblem(path.join(home, '.cache/skills-mount'), { home })).toBeUndefined();
  });

  it("catches a project's folder at any depth", async () => {
    const home = await tempDir();
    const project = await tempDir();
    const deep = path.join(project, 'packages/web/.github/skills/cache');
    expect(await discoveryFolderProblem(deep, { home })).toBe(`${deep} is inside ${path.join(project, 'packages/web/.github/skills')} (a project's .github/skills), a folder GitHub Copilot loads skills from; ${TAIL}`);
    expect(await discoveryFolderProblem(path.join(project, 'a/b/c/.claude/skills/x'), { home })).toMatch(/a project's \.claude\/skills\), a folder Claude Code/);
  });

  it('every listed folder is refused', async () => {
    const home = await tempDir();
    const project = await tempDir();
    for (const folder of DISCOVERY_FOLDERS) {
      const inside = folder.scope === 'home' ? path.join(home, folder.path, 'x') : folder.scope === 'project' ? path.join(project, 'repo', folder.path, 'x') : path.join(folder.path, 'x');
      const problem = await discoveryFolderProblem(inside, { home });
      expect(problem, `${folder.scope} ${folder.path}`).toContain(folder.path);
      expect(problem).toContain(folder.harnesses[0]);
    }
  });

  it('follows a symlink of an existing ancestor into a discovery folder', async () => {
    const home = await tempDir();
    const elsewhere = await tempDir();
    await mkdir(path.join(home, '.gemini/skills'), { recursive: true });
    const link = path.join(elsewhere, 'innocent');
    await symlink(path.join(home, '.gemini/skills'), link);
    const problem = await discoveryFolderProblem(path.join(link, 'cache/skills-mount'), { home });
    expect(problem).toBe(`${link}/cache/skills-mount (which resolves to ~/.gemini/skills/cache/skills-mount) is inside ~/.gemini/skills, a folder Gemini CLI loads skills from; ${TAIL}`);
    // The same path without the link is fine.
    expect(await discoveryFolderProblem(path.join(elsewhere, 'plain/cache'), { home })).toBeUndefined();
  });

  it("follows a symlink into a project's folder", async () => {
    const home = await tempDir();
    const project = await tempDir();
    await mkdir(path.join(project, 'repo/.cursor/skills'), { recursive: true });
    const link = path.join(project, 'alias');
    await symlink(path.join(project, 'repo/.cursor/skills'), link);
    expect(await discoveryFolderProblem(path.join(link, 'cache'), { home })).toMatch(/resolves to .*\/repo\/\.cursor\/skills\/cache\) is inside .*a folder Cursor loads skills from/);
  });

  it('catches a path inside the real directory a home folder links to', async () => {
    const home = await tempDir();
    const dotfiles = await tempDir();
    await mkdir(path.join(home, '.codex'), { recursive: true });
    await symlink(dotfiles, path.join(home, '.codex/skills'));
    expect(await discoveryFolderProblem(path.join(dotfiles, 'cache'), { home })).toMatch(/is inside ~\/\.codex\/skills, a folder Codex and Cursor load skills from/);
  });

  it('knows the system folder and the folders that move with the environment', async () => {
    const home = await tempDir();
    expect(await discoveryFolderProblem('/etc/codex/skills/cache', { home })).toMatch(/is inside \/etc\/codex\/skills, a folder Codex loads/);
    const codexHome = await tempDir();
    expect(await discoveryFolderProblem(path.join(codexHome, 'skills/cache'), { home })).toBeUndefined();
    expect(await discoveryFolderProblem(path.join(codexHome, 'skills/cache'), { home, env: { CODEX_HOME: codexHome } })).toMatch(/is inside \$CODEX_HOME\/skills, a folder Codex loads/);
    const configHome = await tempDir();
    expect(await discoveryFolderProblem(path.join(configHome, 'opencode/skills/x'), { home, env: { XDG_CONFIG_HOME: configHome } })).toMatch(/\$XDG_CONFIG_HOME\/opencode\/skills, a folder OpenCode loads/);
    // A relative value is not a location (the XDG rule) and is ignored.
    expect(await discoveryFolderProblem(path.join(home, 'skills/x'), { home, env: { CODEX_HOME: 'relative' } })).toBeUndefined();
  });

  it("keeps out of goose's own folder on Windows (%APPDATA%\\Block\\goose\\config\\skills), only there", async () => {
    const home = await tempDir();
    const appData = path.join(home, 'AppData/Roaming');
    const inside = path.join(appData, 'Block/goose/config/skills/cache');
    expect(await discoveryFolderProblem(inside, { home, env: { APPDATA: appData }, platform: 'win32' })).toMatch(/is inside %APPDATA%\\Block\\goose\\config\\skills, a folder goose loads skills from/);
    expect(await discoveryFolderProblem(inside, { home, env: { APPDATA: appData }, platform: 'linux' })).toBeUndefined();
    expect(await discoveryFolderProblem(inside, { home, env: { APPDATA: appData }, platform: 'darwin' })).toBeUndefined();
  });

  it('matches without regard to case (macOS and Windows folders are case-insensitive)', async () => {
    const home = await tempDir();
    expect(await discoveryFolderProblem(path.join(home, '.Claude/Skills/x'), { home })).toMatch(/is inside ~\/\.claude\/skills/);
  });
});
