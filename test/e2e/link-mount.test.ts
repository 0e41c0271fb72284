// skills-mount link with a running mount: approve and revoke update the linked root before they
// return, and the daemon keeps it current by itself: a skill its server changed leaves the root
// within a second of the daemon learning of it (nothing reads the mount meanwhile), with the
// revocation recorded in approvals.json, and a re-approval brings the new version back.
import { spawn } from 'node:child_process';
import { lstat, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { SKILLS_MOUNT, makeTestDir, serveEntry, startMount } from '../support/mount-harness.js';
import { waitFor } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';
import { skillMd, writeSkill } from '../support/skill-builder.js';

requireFuse();

function cli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('skills-mount link with a running mount', () => {
  it('approve and revoke update the root before they return; a skill its server changed leaves within a second of the daemon learning of it', async () => {
    const dir = await makeTestDir();
    const skills = path.join(dir, 'skills');
    await writeSkill(skills, 'alpha', { files: { 'references/x.md': 'x\n' } });
    await writeSkill(skills, 'beta');
    const home = path.join(dir, 'home');
    await mkdir(home, { mode: 0o700 });
    const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local', 'share'), XDG_CACHE_HOME: path.join(home, '.cache') };
    const mount = await startMount({ dir, config: { s: serveEntry(skills) }, env });
    const root = path.join(home, '.claude', 'skills');
    try {
      expect((await cli(env, 'link', 'claude-code')).code).toBe(0);
      const approved = await cli(env, 'approve', path.join(mount.mountpoint, 's', 'alpha'), path.join(mount.mountpoint, 's', 'beta'), '--yes');
      expect(approved.code, approved.stderr).toBe(0);
      // Before approve returned: both entries are in the root.
      expect((await readdir(root)).sort()).toEqual(['alpha', 'beta']);
      expect(await readFile(path.join(root, 'alpha', 'references', 'x.md'), 'utf8')).toBe('x\n');
      expect((await cli(env, 'revoke', path.join(mount.mountpoint, 's', 'beta'))).code).toBe(0);
      expect(await readdir(root)).toEqual(['alpha']);

      // The server changes alpha (skills-serve watches its folder and says list_changed).
      await writeFile(path.join(skills, 'alpha', 'SKILL.md'), skillMd('alpha', 'Does alpha things, now differently'));
      const learned = /skill skill:\/\/alpha\/SKILL\.md changed: resources/;
      await mount.waitForLog(learned, 10_000);
      const learnedAt = performance.now();
      await waitFor(async () => (await lstat(path.join(root, 'alpha')).catch(() => undefined)) === undefined, 5_000, 'the changed skill left the root');
      const tookMs = performance.now() - learnedAt;
      expect(tookMs).toBeLessThan(1_000);
      const approvals = JSON.parse(await readFile(path.join(home, '.config', 'skills-mount', 'approvals.json'), 'utf8')) as { approvals: Array<{ name: string; revokedAt: string | null }> };
      expect(approvals.approvals.find((approval) => approval.name === 'alpha')?.revokedAt).toEqual(expect.any(String));
      console.log(`server change learned -> entry gone: ${tookMs.toFixed(0)} ms`);

      // Approved anew: the new version is linked.
      expect((await cli(env, 'approve', path.join(mount.mountpoint, 's', 'alpha'), '--yes')).code).toBe(0);
      expect(await readFile(path.join(root, 'alpha', 'SKILL.md'), 'utf8')).toContain('now differently');
      expect(await cli(env, 'verify', '--links')).toMatchObject({ code: 0 });
    } finally {
      await mount.stop();
      await removeReadOnlyTree(home);
    }
  });
});
