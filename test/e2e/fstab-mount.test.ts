// The fstab form through the real tools: as root, util-linux `mount` with Debian's mount.fuse3
// (`-t fuse "PROGRAM#CONFIG"` and `-t fuse.skills-mount CONFIG`) returns 0 only once `ls` through
// the mount works, the daemon goes on in the background, and `umount` stops it; a refused option
// or an unreadable config makes mount fail with the reason and leaves nothing mounted or running.
// As a user, `skills-mount CONFIG MNT -o ...` mounts through fusermount3 and `fusermount3 -u`
// stops it. The daemon's log is where the docs say (the default, and -o log=FILE).
import { execFile } from 'node:child_process';
import { chmod, lstat, readFile, readdir, readlink, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive } from '../support/children.js';
import { cleanupMounts, mountsUnder, run } from '../support/fuse-harness.js';
import { makeTestDir, SKILLS_MOUNT, SKILLS_SERVE } from '../support/mount-harness.js';
import { canActAsOtherUser } from '../support/other-user.js';
import { waitFor } from '../support/poll.js';
import { envArgs, reachableInstall } from '../support/reachable-install.js';
import { requireFuse } from '../support/require-fuse.js';
import { writeSkill } from '../support/skill-builder.js';

requireFuse();

const IS_ROOT = process.getuid?.() === 0;
/** Where mount.fuse3's shell finds `skills-mount` for `-t fuse.skills-mount` (its default PATH starts here). */
const SYSTEM_PROGRAM = '/usr/local/sbin/skills-mount';
const AS_NOBODY = ['--reuid=nobody', '--regid=nogroup', '--clear-groups'];
/** Every step's deadline: the daemon's startup (servers here answer in about a second) with a margin. */
const STEP_MS = 60_000;

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Runs a command with this environment; never rejects. */
function runWith(command: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = STEP_MS): Promise<Result> {
  return new Promise((resolve) => {
    execFile(command, args, { env, timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
  });
}

/** A world: skills served as "docs" and "team", a config naming both, DIR/mnt, a wrapper that runs skills-mount. */
async function world(server: { node: string; skillsServe: string } = { node: process.execPath, skillsServe: SKILLS_SERVE }) {
  const dir = await makeTestDir();
  await chmod(dir, 0o755);
  const mountpoint = path.join(dir, 'mnt');
  cleanups.push(async () => {
    // A daemon the test did not get to stop (it failed before): none outlives it.
    for (const pid of await processesNaming(mountpoint)) process.kill(pid, 'SIGKILL');
    await cleanupMounts(dir);
    await rm(dir, { recursive: true, force: true });
  });
  await writeSkill(path.join(dir, 'docs-skills'), 'alpha');
  await writeSkill(path.join(dir, 'team-skills'), 'beta');
  const config = path.join(dir, 'config.json');
  const entry = (folder: string) => ({ command: server.node, args: [server.skillsServe, path.join(dir, folder)] });
  await writeFile(config, JSON.stringify({ mcpServers: { docs: entry('docs-skills'), team: entry('team-skills') } }));
  const wrapper = path.join(dir, 'skills-mount');
  await writeWrapper(wrapper);
  return { dir, config, mountpoint, wrapper, state: path.join(dir, 'state') };
}

/** What `npm install -g` would put on PATH: a program that runs this checkout's skills-mount. */
async function writeWrapper(file: string): Promise<void> {
  await writeFile(file, `#!/bin/sh\nexec '${process.execPath}' '${SKILLS_MOUNT}' "$@"\n`);
  await chmod(file, 0o755);
}

/** The daemon's pid, as the helper said it: "mounted MNT (daemon pid N; log FILE; ...)". */
function daemonOf(stderr: string): { pid: number; log: string } {
  const match = /mounted .* \(daemon pid ([0-9]+); log (.+?); umount .* stops it\)/.exec(stderr);
  if (!match) throw new Error(`mount did not name the daemon: ${stderr}`);
  const pid = Number(match[1]);
  // Whatever the test's outcome, the daemon does not outlive it.
  cleanups.push(async () => {
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  return { pid, log: match[2]! };
}

/** Pids whose command line names `mountpoint` (a daemon left running would). */
async function processesNaming(mountpoint: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').includes(mountpoint)) found.push(Number(name));
  }
  return found;
}

async function parentOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** `umount MNT` (or another stop) ends the daemon: its pid gone within a few seconds, no mount left. */
async function expectStopped(pid: number, mountpoint: string): Promise<void> {
  await waitFor(() => !isAlive(pid), 10_000, `daemon ${pid} to exit after the unmount`);
  expect(await mountsUnder(mountpoint)).toEqual([]);
  expect(await processesNaming(mountpoint)).toEqual([]);
}

describe.skipIf(!IS_ROOT && !process.env['CI'])('mount(8) and umount(8), as root', () => {
  it('mount -t fuse "PROGRAM#CONFIG" MNT -o only=docs,_netdev,x-systemd.automount returns 0 once ls works; the daemon is in the background; umount stops it', async () => {
    const { config, mountpoint, wrapper, state } = await world();
    const env = { ...process.env, XDG_STATE_HOME: state };
    const mounted = await runWith('mount', ['-t', 'fuse', `${wrapper}#${config}`, mountpoint, '-o', 'only=docs,_netdev,x-systemd.automount'], env);
    // Right after mount returned: the mount answers.
    const listing = await run('ls', [mountpoint]);
    expect(mounted.stderr).toMatch(new RegExp(`^skills-mount: mounted ${mountpoint} \\(daemon pid [0-9]+; log .+; umount ${mountpoint} stops it\\)\n$`));
    expect(mounted.code).toBe(0);
    expect(listing.stdout).toBe('_approved\ndocs\nskills.json\nstatus.json\n');
    const daemon = daemonOf(mounted.stderr);
    // In the background: alive, and not a child of this test (mount and its helper are gone).
    expect(isAlive(daemon.pid)).toBe(true);
    expect(await parentOf(daemon.pid)).not.toBe(process.pid);
    expect(await mountsUnder(mountpoint)).toMatchObject([{ mountpoint, type: 'fuse.skills-mount' }]);
    expect((await run('cat', [path.join(mountpoint, 'docs', 'alpha', 'SKILL.md')])).stdout).toContain('name: alpha');
    // The default log: $XDG_STATE_HOME/skills-mount/mounts/<mountpoint, "/" as "-">.log.
    const defaultLog = path.join(state, 'skills-mount', 'mounts', `${mountpoint.slice(1).replaceAll('/', '-')}.log`);
    expect(daemon.log).toBe(defaultLog);
    expect((await lstat(defaultLog)).mode & 0o777).toBe(0o600);
    expect(await readFile(defaultLog, 'utf8')).toMatch(new RegExp(`mounted ${mountpoint} \\(1/1 servers connected: docs; 1 skill`));

    const unmounted = await run('umount', [mountpoint]);
    expect(unmounted).toMatchObject({ code: 0, stderr: '' });
    await expectStopped(daemon.pid, mountpoint);
    expect(await readFile(defaultLog, 'utf8')).toMatch(/was unmounted from outside; the FUSE session ended\n[\s\S]*unmounted: unmounting/);
  });

  it('mount -t fuse.skills-mount CONFIG MNT -o only=docs:team,log=FILE runs the skills-mount on the system PATH; umount stops it', async () => {
    const { dir, config, mountpoint } = await world();
    const logFile = path.join(dir, 'logs', 'skills.log');
    const options = `rw,only=docs:team,log=${logFile},no_disk_cache`;
    const existing = await readlink(SYSTEM_PROGRAM).catch((error: NodeJS.ErrnoException) => (error.code === 'EINVAL' ? 'a file' : undefined));
    if (existing === undefined) {
      await writeWrapper(SYSTEM_PROGRAM);
      cleanups.push(() => rm(SYSTEM_PROGRAM, { force: true }));
      const mounted = await run('mount', ['-t', 'fuse.skills-mount', config, mountpoint, '-o', options], STEP_MS);
      const listing = await run('ls', [mountpoint]);
      expect(mounted.stderr).toContain(`skills-mount: mounted ${mountpoint} (daemon pid`);
      expect(mounted.code).toBe(0);
      expect(listing.stdout).toBe('_approved\ndocs\nskills.json\nstatus.json\nteam\n');
      const daemon = daemonOf(mounted.stderr);
      expect(daemon.log).toBe(logFile);
      expect(await readFile(logFile, 'utf8')).toMatch(/mounted .* \(2\/2 servers connected: docs, team; 2 skills/);
      expect(await mountsUnder(mountpoint)).toMatchObject([{ source: 'skills-mount', type: 'fuse.skills-mount' }]);
      expect((await run('umount', [mountpoint])).code).toBe(0);
      await expectStopped(daemon.pid, mountpoint);
      return;
    }
    // Something else is installed there: this test's program goes over it in a mount namespace of its own instead.
    console.warn(`${SYSTEM_PROGRAM} exists (${existing}): testing -t fuse.skills-mount in a private mount namespace, this checkout bound over it`);
    const wrapper = path.join(dir, 'skills-mount');
    const script = [
      'set -u',
      `mount --bind '${wrapper}' '${SYSTEM_PROGRAM}'`,
      `mount -t fuse.skills-mount '${config}' '${mountpoint}' -o '${options}'; echo "mount=$?"`,
      `ls '${mountpoint}' | tr '\\n' ' '; echo`,
      `umount '${mountpoint}'; echo "umount=$?"`,
    ].join('\n');
    const result = await run('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script], STEP_MS);
    const daemon = daemonOf(result.stderr);
    expect(result.stdout).toBe('mount=0\n_approved docs skills.json status.json team \numount=0\n');
    await waitFor(() => !isAlive(daemon.pid), 10_000, `daemon ${daemon.pid} to exit after the unmount`);
  });

  it('refuses an unknown option and allow_other by name, and a config it cannot read with the reason; nothing is left mounted or running', async () => {
    const { dir, config, mountpoint, wrapper, state } = await world();
    const env = { ...process.env, XDG_STATE_HOME: state };
    const source = `${wrapper}#${config}`;

    const bogus = await runWith('mount', ['-t', 'fuse', source, mountpoint, '-o', 'only=docs,bogus=1'], env);
    expect(bogus.code).not.toBe(0);
    expect(bogus.stderr).toMatch(/^skills-mount: -o bogus=1: unknown mount option "bogus" \(skills-mount takes allow_user, only, /);
    // One reason, not the whole usage.
    expect(bogus.stderr).not.toContain('usage:');

    const allowOther = await runWith('mount', ['-t', 'fuse', source, mountpoint, '-o', 'allow_other'], env);
    expect(allowOther.code).not.toBe(0);
    expect(allowOther.stderr).toMatch(/-o allow_other: a skills mount is host-private .*-o allow_user=NAME lets one more user read it/);

    const missing = path.join(dir, 'no-such-config.json');
    const unreadable = await runWith('mount', ['-t', 'fuse', `${wrapper}#${missing}`, mountpoint, '-o', 'only=docs'], env);
    expect(unreadable.code).not.toBe(0);
    expect(unreadable.stderr).toContain(`skills-mount: ${mountpoint} was not mounted: the daemon ended (exit 2): cannot read config ${missing}: no such file`);
    expect(unreadable.stderr).toMatch(/\(its log: .*\.log\)/);

    expect(await mountsUnder(dir)).toEqual([]);
    expect(await processesNaming(mountpoint)).toEqual([]);
  });
});

describe.skipIf(!canActAsOtherUser)('skills-mount CONFIG MNT -o ... as a user (fusermount3)', () => {
  it('returns 0 once mounted, logs under ~/.local/state by default; fusermount3 -u stops the daemon', async () => {
    const install = await reachableInstall();
    cleanups.push(() => install.remove());
    const { dir, config, mountpoint } = await world({ node: install.node, skillsServe: install.skillsServe });
    await run('chown', ['-R', 'nobody:nogroup', dir]);
    // As Debian's udev rule leaves it (a container may not): users open /dev/fuse through fusermount3.
    const deviceMode = (await stat('/dev/fuse')).mode & 0o777;
    await chmod('/dev/fuse', 0o666);
    cleanups.push(() => chmod('/dev/fuse', deviceMode));
    const asNobody = (command: string, ...args: string[]) =>
      run('setpriv', [...AS_NOBODY, '--', 'env', '-u', 'XDG_STATE_HOME', '-u', 'XDG_CACHE_HOME', `HOME=${dir}`, ...envArgs(install), command, ...args], STEP_MS);

    const mounted = await asNobody(install.node, install.skillsMount, config, mountpoint, '-o', 'only=docs,no_disk_cache');
    const listing = await asNobody('ls', mountpoint);
    expect(mounted.stderr).toContain(`skills-mount: mounted ${mountpoint} (daemon pid`);
    expect(mounted.code).toBe(0);
    expect(listing.stdout).toBe('_approved\ndocs\nskills.json\nstatus.json\n');
    const daemon = daemonOf(mounted.stderr);
    const defaultLog = path.join(dir, '.local', 'state', 'skills-mount', 'mounts', `${mountpoint.slice(1).replaceAll('/', '-')}.log`);
    expect(daemon.log).toBe(defaultLog);
    expect((await run('stat', ['-c', '%U %a', defaultLog])).stdout).toBe('nobody 600\n');
    expect(await mountsUnder(mountpoint)).toMatchObject([{ type: 'fuse.skills-mount' }]);
    // fusermount3 made it: a user mount, owned by nobody.
    expect((await mountsUnder(mountpoint))[0]!.options).toContain(`user_id=${(await run('id', ['-u', 'nobody'])).stdout.trim()}`);

    const unmounted = await asNobody('fusermount3', '-u', mountpoint);
    expect(unmounted).toMatchObject({ code: 0, stderr: '' });
    await expectStopped(daemon.pid, mountpoint);
  });
});
