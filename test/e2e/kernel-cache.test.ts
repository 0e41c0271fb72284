// The kernel's caches on the libfuse 3 edge, through a real mount with the default long kernel
// timeouts (600 s): a change the mount learns of (skills-serve watches its folder and says
// list_changed) reaches ls, stat and cat within seconds, never from the page cache of the old
// version; st_ino changes with the version; an open handle keeps its bytes. Also: unmount
// answers readers in flight, and a user who is not root can mount. SIGKILL: sigkill.test.ts.
import { spawn } from 'node:child_process';
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonEnv, exitOf } from '../support/children.js';
import { run, runBytes } from '../support/fuse-harness.js';
import { makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { waitFor } from '../support/poll.js';
import { envArgs, reachableInstall, type ReachableInstall } from '../support/reachable-install.js';
import { requireFuse } from '../support/require-fuse.js';
import { skillMd, writeSkill } from '../support/skill-builder.js';

requireFuse();

const CHANGE_SEEN_MS = 5_000;
const READ_RACE = fileURLToPath(new URL('../support/read-race.mjs', import.meta.url));

async function served(): Promise<{ dir: string; skills: string }> {
  const dir = await makeTestDir();
  const skills = path.join(dir, 'skills');
  await writeSkill(skills, 'alpha', { files: { 'notes.md': 'version-1\n' } });
  await writeSkill(skills, 'beta');
  return { dir, skills };
}

async function withMount(test: (mount: RunningMount, skills: string) => Promise<void>, args: string[] = []): Promise<void> {
  const { dir, skills } = await served();
  const mount = await startMount({ dir, config: { s: serveEntry(skills) }, args: ['--fuse-backend', 'libfuse3', ...args] });
  try {
    await test(mount, skills);
  } finally {
    await mount.stop();
  }
}

async function catText(file: string): Promise<string> {
  const result = await run('cat', [file]);
  return result.code === 0 ? result.stdout : `error: ${result.stderr}`;
}

async function inode(file: string): Promise<string> {
  return (await run('stat', ['-c', '%i', file])).stdout.trim();
}

describe('the libfuse 3 edge keeps the kernel current', () => {
  it('serves a same-size change with new bytes and a new inode; a handle opened before keeps the old bytes', async () => {
    await withMount(async (mount, skills) => {
      const file = path.join(mount.mountpoint, 's', 'alpha', 'notes.md');
      expect(await catText(file)).toBe('version-1\n');
      const firstInode = await inode(file);
      // An open handle, from a child process that reads once now and once after the change.
      const reader = spawn('sh', ['-c', 'exec 3<"$1"; head -c 5 <&3; read -r _; cat <&3', 'reader', file], { stdio: ['pipe', 'pipe', 'pipe'] });
      let readerOut = '';
      reader.stdout.setEncoding('utf8').on('data', (chunk: string) => (readerOut += chunk));
      await waitFor(() => readerOut.length >= 5, 5_000, 'the reader opened the file');

      await writeFile(path.join(skills, 'alpha', 'notes.md'), 'version-2\n'); // same size
      const changedAt = Date.now();
      await waitFor(async () => (await catText(file)) === 'version-2\n', CHANGE_SEEN_MS, 'cat shows the new bytes');
      const seenMs = Date.now() - changedAt;
      expect(await inode(file)).not.toBe(firstInode);
      // Never the old bytes again, from any new open.
      for (let i = 0; i < 5; i++) expect(await catText(file)).toBe('version-2\n');

      reader.stdin.end('\n');
      await exitOf(reader);
      expect(readerOut).toBe('version-1\n');
      console.log(`same-size change seen by cat after ${seenMs} ms (server watch + re-listing + invalidation)`);
    });
  });

  it('shows a new skill, a removed skill and a renamed file in ls soon after the change, with 600 s kernel timeouts', async () => {
    await withMount(async (mount, skills) => {
      const root = path.join(mount.mountpoint, 's');
      const ls = async (dir: string) => {
        const result = await run('ls', [dir]);
        if (result.code !== 0) throw new Error(`ls ${dir}: ${result.stderr}\n${mount.log()}`);
        return result.stdout.split('\n').filter(Boolean).sort();
      };
      expect(await ls(root)).toEqual(['alpha', 'beta']);
      expect(await ls(path.join(root, 'alpha'))).toEqual(['SKILL.md', 'notes.md']);
      // A name looked up and missing: the negative entry must not hide the new skill either.
      expect((await run('stat', [path.join(root, 'gamma')])).code).not.toBe(0);

      await writeSkill(skills, 'gamma');
      await waitFor(async () => (await ls(root)).includes('gamma'), CHANGE_SEEN_MS, 'ls shows the new skill');
      expect(await catText(path.join(root, 'gamma', 'SKILL.md'))).toBe(skillMd('gamma'));

      await rm(path.join(skills, 'beta'), { recursive: true });
      await waitFor(async () => !(await ls(root)).includes('beta'), CHANGE_SEEN_MS, 'ls drops the removed skill');
      expect((await run('stat', [path.join(root, 'beta', 'SKILL.md')])).code).not.toBe(0);

      await rename(path.join(skills, 'alpha', 'notes.md'), path.join(skills, 'alpha', 'renamed.md'));
      await waitFor(async () => (await ls(path.join(root, 'alpha'))).join() === 'SKILL.md,renamed.md', CHANGE_SEEN_MS, 'ls shows the renamed file');
      expect(await catText(path.join(root, 'alpha', 'renamed.md'))).toBe('version-1\n');
    });
  });

  it('answers every reader in flight when it unmounts', async () => {
    const { dir, skills } = await served();
    // A server that never answers resources/read would be the strongest case; a slow fetch of
    // many files under 8 parallel readers is what a user sees at Ctrl-C.
    for (let i = 0; i < 40; i++) await writeSkill(skills, `bulk-${i}`, { files: { 'big.md': 'x'.repeat(256 * 1024) } });
    const mount = await startMount({ dir, config: { s: serveEntry(skills) }, args: ['--fuse-backend', 'libfuse3'] });
    try {
      const readers = Array.from({ length: 8 }, (_, index) =>
        runBytes('sh', ['-c', `for i in $(seq ${index} 8 39); do cat "$1/bulk-$i/big.md" >/dev/null || exit 3; done`, 'r', path.join(mount.mountpoint, 's')], 30_000),
      );
      await new Promise((resolve) => setTimeout(resolve, 150));
      const code = await mount.stop();
      const results = await Promise.all(readers);
      expect(code).toBe(0);
      // Each reader returned (finished or failed), none hung past the runner's deadline.
      for (const result of results) expect(result.errno).not.toBe('ETIMEDOUT');
      const mounts = (await readFile('/proc/mounts', 'utf8')).split('\n').filter((line) => line.split(' ')[1] === mount.mountpoint);
      expect(mounts).toHaveLength(0);
    } finally {
      await mount.stop();
    }
  });
});

describe('skills.json and the kernel', () => {
  it('never names a version that the next open does not get, while a skill changes 10 times under a reading loop', async () => {
    await withMount(async (mount, skills) => {
      const reader = spawn(process.execPath, [READ_RACE, mount.mountpoint, 's', 'alpha', '14000'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      reader.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
      for (let change = 1; change <= 10; change++) {
        await new Promise((resolve) => setTimeout(resolve, 1_000 + 37 * change));
        await writeFile(path.join(skills, 'alpha', 'SKILL.md'), skillMd('alpha', `alpha, version ${change}`));
      }
      await exitOf(reader);
      const result = JSON.parse(out) as { rounds: number; older: number; versions: number; slowestJsonMs: number };
      console.log(`read race: ${out.trim()}`);
      // skills.json is rendered at most once a second: a version may come and go between two renderings.
      expect(result.versions, JSON.stringify(result)).toBeGreaterThanOrEqual(5);
      expect(result.rounds).toBeGreaterThan(1_000);
      expect(result, JSON.stringify(result)).toMatchObject({ older: 0 });
      // The kernel is told within milliseconds: a rendering never waits out the publication bound (500 ms).
      expect(result.slowestJsonMs).toBeLessThan(400);
    });
  }, 40_000);
});

describe('a user who is not root', () => {
  let install: ReachableInstall;
  beforeAll(async () => {
    install = await reachableInstall();
  });
  afterAll(async () => {
    await install?.remove();
  });

  it('is told plainly when /dev/fuse is closed to them', async () => {
    const dir = await makeTestDir();
    const mountpoint = path.join(dir, 'mnt');
    await mkdir(mountpoint);
    await run('chown', ['-R', 'nobody:nogroup', dir]);
    const deviceMode = (await stat('/dev/fuse')).mode & 0o777;
    await chmod('/dev/fuse', 0o600);
    try {
      // `env` carries the sanitizer pass's preload (daemonEnv) to the daemon: run() gives none.
      const preload = daemonEnv({})['LD_PRELOAD'];
      const result = await run('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', 'env', ...(preload ? [`LD_PRELOAD=${preload}`] : []), ...envArgs(install), install.node, install.skillsMount, mountpoint, '--no-disk-cache', '--fuse-backend', 'libfuse3', '--server', `s=${install.node} ${install.skillsServe} ${dir}`], 20_000);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/this user cannot open \/dev\/fuse\b.*mode 0666/);
    } finally {
      await chmod('/dev/fuse', deviceMode);
    }
  });

  it('mounts through fusermount3 and reads; another user cannot enter the mount', async () => {
    const dir = await makeTestDir();
    const skills = path.join(dir, 'skills');
    await writeSkill(skills, 'alpha');
    const mountpoint = path.join(dir, 'mnt');
    await mkdir(mountpoint);
    await run('chown', ['-R', 'nobody:nogroup', dir]);
    await chmod(dir, 0o755);
    // fusermount3 opens /dev/fuse as the calling user: Debian's udev makes it 0666; a VM or
    // container without udev may leave it 0600. The test sets the distribution's mode.
    const deviceMode = (await stat('/dev/fuse')).mode & 0o777;
    await chmod('/dev/fuse', 0o666);
    const child = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', install.node, install.skillsMount, mountpoint, '--no-disk-cache', '--fuse-backend', 'libfuse3', '--server', `s=${install.node} ${install.skillsServe} ${skills}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: daemonEnv({ ...process.env, ...install.env, HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_CACHE_HOME: path.join(dir, 'cache') }),
    });
    let log = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    try {
      await waitFor(() => /mounted /.test(log), 20_000, `the mount as nobody: ${log}`);
      const asNobody = await run('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'cat', path.join(mountpoint, 's', 'alpha', 'SKILL.md')]);
      expect(asNobody.stdout).toBe(skillMd('alpha'));
      const asOther = await run('setpriv', ['--reuid=65533', '--regid=65533', '--clear-groups', 'ls', path.join(mountpoint, 's')]);
      expect(asOther.code).not.toBe(0);
      expect(asOther.stderr).toMatch(/Permission denied/);
    } finally {
      child.kill('SIGTERM');
      await exitOf(child);
      await run('bash', [path.resolve('scripts/fuse-cleanup.sh'), dir]);
      await chmod('/dev/fuse', deviceMode);
    }
  });
});
