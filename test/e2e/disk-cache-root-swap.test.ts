// Issue 22, item 10, through a real mount: while mounted, the cache root is moved away and a
// symbolic link to ~/.claude/skills put in its place; the next verified file read through the
// mount must not land in the discovery folder (nor anywhere else), and the daemon says why it
// stopped writing. Reads keep working.
import { mkdir, readdir, rename, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../support/fuse-harness.js';
import { SKILLS_SERVE, makeTestDir, startMount, type RunningMount } from '../support/mount-harness.js';
import { requireFuse } from '../support/require-fuse.js';
import { skillMd, writeTree } from '../support/skill-builder.js';
import { waitFor } from '../support/poll.js';

requireFuse();

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    out.push(full);
    if (entry.isDirectory()) out.push(...(await walk(full)));
  }
  return out;
}

describe('a cache root swapped while mounted', () => {
  let mount: RunningMount | undefined;
  afterEach(async () => {
    await mount?.stop();
    mount = undefined;
  });

  it('writes nothing into the discovery folder the link points to, logs one line, and keeps serving', async () => {
    const dir = await makeTestDir();
    const home = path.join(dir, 'home');
    const discovery = path.join(home, '.claude', 'skills');
    await mkdir(path.join(discovery, 'my-own-skill'), { recursive: true });
    const served = path.join(dir, 'served');
    await writeTree(served, { 'alpha/SKILL.md': skillMd('alpha', 'Read before the swap'), 'beta/SKILL.md': skillMd('beta', 'Read after the swap'), 'beta/ref.md': 'after\n' });
    const cacheDir = path.join(home, '.cache', 'skills-mount');
    mount = await startMount({
      dir,
      config: { srv: { command: process.execPath, args: [SKILLS_SERVE, served] } },
      diskCache: true,
      args: ['--cache-dir', cacheDir],
      env: { ...process.env, HOME: home },
    });
    const at = (...parts: string[]) => path.join(mount!.mountpoint, 'srv', ...parts);
    expect((await run('cat', [at('alpha', 'SKILL.md')])).stdout).toContain('Read before the swap');
    await waitFor(async () => (await walk(cacheDir)).some((file) => /[0-9a-f]{64}$/.test(file)), 10_000, 'alpha cached');

    await rename(cacheDir, `${cacheDir}.moved`);
    await symlink(discovery, cacheDir);
    const movedBefore = await walk(`${cacheDir}.moved`);
    expect((await run('cat', [at('beta', 'SKILL.md')])).stdout).toContain('Read after the swap');
    expect((await run('cat', [at('beta', 'ref.md')])).stdout).toBe('after\n');
    await mount.waitForLog(/disk cache: .* no longer names the cache root opened at start/, 10_000);
    await mount.stop();
    mount = undefined;

    expect(await walk(discovery)).toEqual([path.join(discovery, 'my-own-skill')]);
    // The moved root got no new cache file either (its record may have been rewritten at stop: not a cache file).
    const cacheFiles = (files: string[]) => files.filter((file) => /[0-9a-f]{64}$/.test(file));
    expect(cacheFiles(await walk(`${cacheDir}.moved`))).toEqual(cacheFiles(movedBefore));
  });
});
