// Everywhere Node runs (macOS, Windows, a container without /dev/fuse): the commands that need no
// FUSE never load the libfuse 3 addon. SKILLS_FUSE_ADDON names a tripwire that records being
// loaded; `snapshot`, `verify`, `approve --config`, `link`, `status` and `--version` run through the
// built CLI and must leave it untouched. The mount, with FUSE unusable, says in one line what this
// platform needs and exits 2 before any server starts. No kernel mount anywhere.
import { spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKILLS_SERVE } from '../support/http-server.js';
import { writeSkill } from '../support/skill-builder.js';
import { TempDirs } from '../support/temp-dir.js';

const SKILLS_MOUNT = fileURLToPath(new URL('../../dist/cli/skills-mount.js', import.meta.url));
const temps = new TempDirs('skills-mount-no-fuse-');
afterAll(() => temps.removeAll());

let dir: string;
let env: NodeJS.ProcessEnv;
let marks: string;
let config: string;

beforeAll(async () => {
  dir = await temps.make();
  const served = path.join(dir, 'skills');
  await writeSkill(served, 'guide', { description: 'House style guide', files: { 'references/tone.md': 'Be brief.\n' } });
  const home = path.join(dir, 'home');
  await mkdir(home, { mode: 0o700 });
  marks = path.join(dir, 'marks');
  await mkdir(marks);
  // Loaded by require() as the addon would be: leaves a mark naming the command, then fails.
  const tripwire = path.join(dir, 'tripwire.cjs');
  await writeFile(tripwire, "require('fs').writeFileSync(require('path').join(process.env.TRIPWIRE_MARKS, String(process.pid)), process.argv.slice(2).join(' '));\nthrow new Error('tripwire: the addon was loaded');\n");
  config = path.join(dir, 'config.json');
  await writeFile(config, JSON.stringify({ mcpServers: { docs: { command: process.execPath, args: [SKILLS_SERVE, served] } } }));
  env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    SKILLS_FUSE_ADDON: tripwire,
    TRIPWIRE_MARKS: marks,
  };
});

function cli(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('commands that need no FUSE never load the addon', () => {
  it('snapshot, verify, approve --config, link, status and --version all run, and the tripwire addon is never loaded', async () => {
    const snapshot = path.join(dir, 'snap');
    const steps: Array<[string, string[], number]> = [
      ['--version', ['--version'], 0],
      ['snapshot', ['snapshot', snapshot, '--config', config, '--no-disk-cache'], 0],
      ['verify', ['verify', snapshot], 0],
      ['approve --config', ['approve', 'docs/guide', '--config', config, '--yes'], 0],
      ['link', ['link', 'claude-code', '--config', config], 0],
      // 1 when some mount on this machine (another's) is stale: the exit is not the point here.
      ['status', ['status'], -1],
    ];
    for (const [name, args, code] of steps) {
      const result = await cli(args);
      if (code >= 0) expect(result.code, `${name}: ${result.stderr}`).toBe(code);
      else expect(result.code === 0 || result.code === 1, `${name}: ${result.stderr}`).toBe(true);
      expect(await readdir(marks), `${name} loaded the addon`).toEqual([]);
    }
  }, 60_000);

  it('the mount with FUSE unusable: one line saying what is needed, exit 2, before any server starts', async () => {
    const result = await cli([path.join(dir, 'mnt'), '--config', config], { SKILLS_MOUNT_NO_FUSE: '1' });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('skills-mount: FUSE is turned off here (SKILLS_MOUNT_NO_FUSE=1); skills-mount snapshot DIR or skills-mount link work without FUSE\n');
    expect(await readdir(marks)).toEqual([]);
  });

  it('the mount where the addon does not load: the reason per place looked, and how to build it; exit 2', async () => {
    // Past the platform checks only where FUSE is usable (not in the no-FUSE pass).
    if (process.env['SKILLS_MOUNT_NO_FUSE'] === '1') return;
    const result = await cli([path.join(dir, 'mnt2'), '--config', config]);
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/no libfuse 3 addon loads on linux-\w+ \(override .*tripwire\.cjs: tripwire: the addon was loaded\); build it from source/);
  });
});
