// `skills-mount snapshot` on a disk that fills up (issue 20): a small real tmpfs holds the
// destination; a snapshot that no longer fits fails, says so, and leaves the published one
// verifying and in place; once the server shrinks again, the next run publishes.
import { spawn } from 'node:child_process';
import { mkdir, readlink, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../support/fuse-harness.js';
import { SKILLS_MOUNT, SKILLS_SERVE, makeTestDir } from '../support/mount-harness.js';
import { writeSkill } from '../support/skill-builder.js';

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('exit', (code) => resolve({ code, stderr }));
  });
}

describe.skipIf(process.getuid?.() !== 0)('a snapshot on a disk that fills up', () => {
  it('fails naming the full disk and leaves the published snapshot in place; the next run that fits publishes', async () => {
    const dir = await makeTestDir();
    const small = path.join(dir, 'small');
    await mkdir(small);
    // mode=0755: a tmpfs's root is 1777 by default, a folder snapshot refuses for DEST (others could make its names first).
    const mounted = await run('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0755', 'tmpfs', small]);
    expect(mounted.code, mounted.stderr).toBe(0);
    try {
      const skills = path.join(dir, 'skills');
      await writeSkill(skills, 'alpha', { files: { 'notes.md': 'small\n' } });
      const dest = path.join(small, 'dest');
      const env = { XDG_CACHE_HOME: path.join(dir, 'cache'), XDG_CONFIG_HOME: path.join(dir, 'config') };
      const args = ['snapshot', dest, '--server', `s=${process.execPath} ${SKILLS_SERVE} ${skills}`];
      const first = await cli(args, env);
      expect(first.code, first.stderr).toBe(0);
      const published = await readlink(dest);

      // 2 MiB of new bytes on a 1 MiB disk.
      await writeFile(path.join(skills, 'alpha', 'big.bin'), Buffer.alloc(2 * 1024 * 1024, 7));
      const full = await cli(args, env);
      expect(full.code).toBe(1);
      expect(full.stderr).toMatch(/ENOSPC|no space left/i);
      expect(await readlink(dest)).toBe(published);
      const verified = await cli(['verify', dest], env);
      expect(verified.code, verified.stderr).toBe(0);
      // Nothing half-written is left behind to fill the disk further.
      const leftovers = (await readdir(small, { recursive: true })).filter((name) => String(name).includes('.build-'));
      expect(leftovers).toEqual([]);

      await rm(path.join(skills, 'alpha', 'big.bin'));
      await writeFile(path.join(skills, 'alpha', 'notes.md'), 'changed\n');
      const again = await cli(args, env);
      expect(again.code, again.stderr).toBe(0);
      expect(await readlink(dest)).not.toBe(published);
      expect((await run('cat', [path.join(dest, 's', 'alpha', 'notes.md')])).stdout).toBe('changed\n');
    } finally {
      await run('umount', ['-l', small]);
    }
  }, 120_000);
});
