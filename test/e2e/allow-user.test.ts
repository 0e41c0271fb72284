// --allow-user through real kernel mounts on both backends: the allowed user reads every file
// (the tree, skills.json, the approved view), root reads, a third user gets EACCES; without the
// flag the allowed user gets EACCES too. A daemon that is not root needs user_allow_other in
// /etc/fuse.conf: without it, it stops saying so; with it, it serves another user. The tests
// that change /etc/fuse.conf or /dev/fuse's mode put them back, even on failure.
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daemonEnv } from '../support/children.js';
import { run } from '../support/fuse-harness.js';
import { makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { envArgs, reachableInstall, type ReachableInstall } from '../support/reachable-install.js';
import { requireFuse } from '../support/require-fuse.js';
import { skillMd, writeSkill } from '../support/skill-builder.js';

requireFuse();

const AS_NOBODY = ['--reuid=nobody', '--regid=nogroup', '--clear-groups'];
/** A user with no passwd entry and no rights anywhere, as a third party. */
const AS_THIRD = ['--reuid=65533', '--regid=65533', '--clear-groups'];
const THIRD_UID = '65533';
const FUSE_CONF = '/etc/fuse.conf';

function as(user: string[], command: string, ...args: string[]) {
  return run('setpriv', [...user, '--', command, ...args]);
}

/** A served folder and a mount dir every user may pass through (makeTestDir's are 0700). */
async function served(): Promise<{ dir: string; skills: string }> {
  const dir = await makeTestDir();
  await chmod(dir, 0o755);
  const skills = path.join(dir, 'skills');
  await writeSkill(skills, 'alpha', { files: { 'notes.md': 'alpha notes\n', 'reference/deep.md': 'deep\n' } });
  await writeSkill(skills, 'beta');
  return { dir, skills };
}

async function withMount(args: string[], test: (mount: RunningMount) => Promise<void>, daemon: { command: string[]; user: string; install: ReachableInstall } | undefined = undefined): Promise<void> {
  const { dir, skills } = await served();
  // A daemon of another user owns its files and keeps its state under its own HOME.
  if (daemon) await run('chown', ['-R', daemon.user, dir]);
  const env = daemon ? { ...process.env, ...daemon.install.env, HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_CACHE_HOME: path.join(dir, 'cache') } : process.env;
  // That daemon's server runs as its user too: from where that user can reach it.
  const server = daemon ? { command: daemon.install.node, args: [daemon.install.skillsServe, skills] } : serveEntry(skills);
  const mount = await startMount({ dir, config: { s: server }, args, env, ...(daemon ? { command: daemon.command } : {}) });
  try {
    await test(mount);
  } finally {
    await mount.stop();
  }
}

/** Every file under the mount's server folder, read whole by `user`: the first failure's message, or the files read. */
async function readEverythingAs(user: string[], root: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = 'find "$1" -type f | sort | while read -r f; do cat -- "$f" > /dev/null || exit 1; echo "$f"; done';
  const result = await as(user, 'sh', '-c', script, 'read-all', root);
  return { code: result.code ?? -1, stdout: result.stdout, stderr: result.stderr };
}

describe.each(['libfuse3'])('--allow-user on %s', (backend) => {
  it('lets nobody and root read every file and nobody else; every node is theirs, 0400 and 0500', async () => {
    await withMount(['--fuse-backend', backend, '--allow-user', 'nobody'], async (mount) => {
      const skill = path.join(mount.mountpoint, 's', 'alpha', 'SKILL.md');
      const everything = await readEverythingAs(AS_NOBODY, path.join(mount.mountpoint, 's'));
      expect(everything.stderr).toBe('');
      expect(everything.code).toBe(0);
      expect(everything.stdout.trim().split('\n').map((file) => path.relative(mount.mountpoint, file))).toEqual(
        ['s/alpha/SKILL.md', 's/alpha/notes.md', 's/alpha/reference/deep.md', 's/beta/SKILL.md'],
      );
      expect((await as(AS_NOBODY, 'cat', skill)).stdout).toBe(skillMd('alpha'));
      expect((await as(AS_NOBODY, 'cat', path.join(mount.mountpoint, 'skills.json'))).code).toBe(0);
      expect((await as(AS_NOBODY, 'ls', path.join(mount.mountpoint, '_approved'))).code).toBe(0);
      expect((await run('stat', ['-c', '%U:%G %a', skill])).stdout.trim()).toBe('nobody:nogroup 400');
      expect((await run('stat', ['-c', '%U:%G %a', path.join(mount.mountpoint, 's', 'alpha', 'reference')])).stdout.trim()).toBe('nobody:nogroup 500');
      expect((await run('stat', ['-c', '%U %a', mount.mountpoint])).stdout.trim()).toBe('nobody 500');

      const third = await as(AS_THIRD, 'cat', skill);
      expect(third.code).not.toBe(0);
      expect(third.stderr).toMatch(/Permission denied/);
      expect((await as(AS_THIRD, 'ls', mount.mountpoint)).stderr).toMatch(/Permission denied/);

      expect((await run('cat', [skill])).stdout).toBe(skillMd('alpha'));
      expect(await run('grep', ['-c', 'allow_other', '/proc/self/mounts'])).toMatchObject({ code: 0 });
      expect(mount.log()).toMatch(/readable by uid \d+ \(nobody\) and root only/);
    });
  });
});

describe('without --allow-user', () => {
  it('keeps the mount private: nobody gets EACCES', async () => {
    await withMount(['--fuse-backend', 'libfuse3'], async (mount) => {
      const result = await as(AS_NOBODY, 'cat', path.join(mount.mountpoint, 's', 'alpha', 'SKILL.md'));
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/Permission denied/);
      expect((await run('cat', [path.join(mount.mountpoint, 's', 'alpha', 'SKILL.md')])).stdout).toBe(skillMd('alpha'));
    });
  });
});

describe('--allow-user from a daemon that is not root', () => {
  let install: ReachableInstall;
  beforeAll(async () => {
    install = await reachableInstall();
  });
  afterAll(async () => {
    await install?.remove();
  });

  /** Runs `test` with /etc/fuse.conf saying (or not) user_allow_other and /dev/fuse open to users, then restores both. */
  async function withFuseConf(allowOther: boolean, test: () => Promise<void>): Promise<void> {
    const original = await readFile(FUSE_CONF, 'utf8').catch(() => undefined);
    const deviceMode = (await stat('/dev/fuse')).mode & 0o777;
    const lines = (original ?? '').split('\n').filter((line) => line.trim() !== 'user_allow_other');
    await writeFile(FUSE_CONF, [...lines, ...(allowOther ? ['user_allow_other', ''] : [])].join('\n'));
    await chmod('/dev/fuse', 0o666);
    try {
      await test();
    } finally {
      if (original === undefined) await writeFile(FUSE_CONF, '');
      else await writeFile(FUSE_CONF, original);
      await chmod('/dev/fuse', deviceMode);
    }
  }

  /** skills-mount as nobody; `env` carries the sanitizer pass's preload (daemonEnv) past setpriv. */
  function asNobodyDaemon(): string[] {
    const preload = daemonEnv({})['LD_PRELOAD'];
    return ['setpriv', ...AS_NOBODY, '--', 'env', ...(preload ? [`LD_PRELOAD=${preload}`] : []), ...envArgs(install), install.node, install.skillsMount];
  }

  it('stops with the reason when /etc/fuse.conf lacks user_allow_other', async () => {
    await withFuseConf(false, async () => {
      const { dir, skills } = await served();
      await run('chown', ['-R', 'nobody:nogroup', dir]);
      const result = await run('setpriv', [...AS_NOBODY, '--', 'env', `HOME=${dir}`, ...envArgs(install), install.node, install.skillsMount, path.join(dir, 'mnt'), '--no-disk-cache', '--allow-user', THIRD_UID, '--server', `s=${install.node} ${install.skillsServe} ${skills}`], 20_000);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--allow-user needs "user_allow_other" in \/etc\/fuse\.conf when the daemon does not run as root/);
      expect(await run('grep', ['-c', path.join(dir, 'mnt'), '/proc/self/mounts'])).toMatchObject({ stdout: '0\n' });
    });
  });

  it.each(['libfuse3'])('serves a uid with no passwd entry on %s when user_allow_other is set; the daemon\'s own user cannot read', async (backend) => {
    await withFuseConf(true, async () => {
      await withMount(
        ['--fuse-backend', backend, '--allow-user', THIRD_UID],
        async (mount) => {
          const skill = path.join(mount.mountpoint, 's', 'alpha', 'SKILL.md');
          expect((await as(AS_THIRD, 'cat', skill)).stdout).toBe(skillMd('alpha'));
          expect((await run('stat', ['-c', '%u:%g %a', skill])).stdout.trim()).toBe(`${THIRD_UID}:${THIRD_UID} 400`);
          expect((await as(AS_NOBODY, 'cat', skill)).stderr).toMatch(/Permission denied/);
        },
        { command: asNobodyDaemon(), user: 'nobody:nogroup', install },
      );
    });
  });
});
