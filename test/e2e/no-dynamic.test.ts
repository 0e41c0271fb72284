// "dynamic" skills (no digests) through a real mount: shown and served unverified by
// default, never written to the disk cache; hidden whole by --no-dynamic, with the reason
// in skills.json.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run, runBytes } from '../support/fuse-harness.js';
import { hostileEntry, hostileSkill } from '../support/hostile-scenario.js';
import { SKILLS_MOUNT, makeTestDir, startMount, type RunningMount } from '../support/mount-harness.js';
import { requireFuse } from '../support/require-fuse.js';

requireFuse();

const SKILLS = [
  hostileSkill('fixed', 'Every file has a digest', { 'ref.md': { text: 'fixed reference\n' } }),
  hostileSkill('live', 'Generated per read', { 'data.txt': { text: 'generated\n' } }, { dynamic: true }),
];

describe('dynamic skills', () => {
  let mount: RunningMount | undefined;
  afterEach(async () => {
    await mount?.stop();
    mount = undefined;
  });
  const skillsJson = async (dir: string) => JSON.parse((await runBytes('cat', [path.join(dir, 'mnt', 'skills.json')])).stdout.toString()).servers[0];

  it('are served unverified by default, and their files never reach the disk cache', async () => {
    const dir = await makeTestDir();
    const cacheDir = path.join(dir, 'cache');
    mount = await startMount({ dir, config: { srv: await hostileEntry(dir, 'srv', { listing: true, skills: SKILLS }) }, diskCache: true, args: ['--cache-dir', cacheDir] });
    const root = path.join(mount.mountpoint, 'srv');
    expect((await run('ls', [root])).stdout.split('\n').filter(Boolean).sort()).toEqual(['fixed', 'live']);
    expect((await run('cat', [path.join(root, 'live', 'data.txt')])).stdout).toBe('generated\n');
    expect((await run('cat', [path.join(root, 'fixed', 'ref.md')])).stdout).toBe('fixed reference\n');
    const live = (await skillsJson(dir)).skills.find((skill: { name: string }) => skill.name === 'live');
    expect(live).toMatchObject({ integrity: 'dynamic', state: 'ok', resourcesDigest: null });
    // Two files of the fixed skill (its SKILL.md is loaded first) and none of the dynamic one.
    await expect
      .poll(async () => (await run(process.execPath, [SKILLS_MOUNT, 'cache', 'status', '--cache-dir', cacheDir])).stdout, { timeout: 10_000 })
      .toMatch(/srv\s+2 files/);
  });

  it('--no-dynamic hides them whole: absent from the tree, declined in skills.json with the reason', async () => {
    const dir = await makeTestDir();
    mount = await startMount({ dir, config: { srv: await hostileEntry(dir, 'srv', { listing: true, skills: SKILLS }) }, args: ['--no-dynamic'] });
    const root = path.join(mount.mountpoint, 'srv');
    expect((await run('ls', [root])).stdout.split('\n').filter(Boolean)).toEqual(['fixed']);
    const hidden = await run('cat', [path.join(root, 'live', 'data.txt')]);
    expect(hidden.code).not.toBe(0);
    expect(hidden.stderr).toMatch(/No such file or directory/);
    const live = (await skillsJson(dir)).skills.find((skill: { name: string }) => skill.name === 'live');
    expect(live).toMatchObject({ state: 'declined', declined: 'dynamic skill hidden by --no-dynamic' });
    expect((await run('cat', [path.join(root, 'fixed', 'ref.md')])).stdout).toBe('fixed reference\n');
  });
});
