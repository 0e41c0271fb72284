// A restart under mount propagation, as a pod sees a node's daemon: the mount's parent is a bind
// mount made rshared (as kubelet's directories are), a reader holds its own mount namespace with
// slave propagation (a pod's HostToContainer) open throughout, and the daemon is started by the
// container image's entrypoint (contrib/container/entrypoint.sh). After a SIGKILL and a restart
// the reader sees the new mount's bytes, not a dead mount, and one mount is left, never two
// stacked: also when the whole process group dies, so nothing detached the dead mount.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonEnv, exitOf } from '../support/children.js';
import { run } from '../support/fuse-harness.js';
import { REPO, SKILLS_MOUNT, makeTestDir, serveEntry } from '../support/mount-harness.js';
import { waitFor } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';
import { skillMd, writeSkill } from '../support/skill-builder.js';

requireFuse();

const ENTRYPOINT = path.join(REPO, 'contrib', 'container', 'entrypoint.sh');
const CLEANUP = path.join(REPO, 'scripts', 'fuse-cleanup.sh');
const READY_MS = 30_000;

/** A shell in its own mount namespace (slave propagation) that runs one command per line it is sent. */
class NamespacedReader {
  private output = '';
  private readonly child: ChildProcess;

  constructor() {
    // Each answer ends with a line "--end CODE", so the test can wait for it.
    const loop = 'while read -r line; do sh -c "$line" 2>&1; echo "--end $?"; done';
    this.child = spawn('unshare', ['--mount', '--propagation', 'slave', '--', 'sh', '-c', loop], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
  }

  /** Runs `command` inside the namespace; resolves its output and exit code. */
  async run(command: string, timeoutMs = 10_000): Promise<{ code: number; output: string }> {
    this.output = '';
    this.child.stdin!.write(`${command}\n`);
    await waitFor(() => /--end \d+\n$/.test(this.output), timeoutMs, `the reader namespace answering ${command} (so far: ${this.output})`);
    const match = /^([\s\S]*)--end (\d+)\n$/.exec(this.output)!;
    return { code: Number(match[2]), output: match[1]! };
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
    this.child.kill('SIGKILL');
    await exitOf(this.child);
  }
}

interface Daemon {
  child: ChildProcess;
  log: () => string;
}

/** skills-mount through the image's entrypoint, in its own process group (so the whole group can die). */
async function startThroughEntrypoint(mountpoint: string, configPath: string, home: string): Promise<Daemon> {
  const child = spawn('sh', [ENTRYPOINT, '--no-disk-cache'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
    env: daemonEnv({
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      SKILLS_MOUNT_BIN: `${process.execPath} ${SKILLS_MOUNT}`,
      SKILLS_MOUNT_POINT: mountpoint,
      SKILLS_MOUNT_CONFIG: configPath,
    }),
  });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
  await waitFor(() => /mounted /.test(log) || child.exitCode !== null, READY_MS, `the daemon mounting ${mountpoint}: ${log}`);
  if (!/mounted /.test(log)) throw new Error(`the daemon exited (${child.exitCode}) before mounting:\n${log}`);
  return { child, log: () => log };
}

/** How many mounts this namespace has at `mountpoint`. */
async function mountsAt(mountpoint: string): Promise<number> {
  const table = await readFile('/proc/self/mounts', 'utf8');
  return table.split('\n').filter((line) => line.split(' ')[1] === mountpoint).length;
}

describe('a restart under mount propagation (a pod reading a node\'s mount)', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });

  it('the reader namespace sees the same bytes after SIGKILL and restart, through a dead daemon and a dead process group; one mount at the end', async () => {
    const dir = await makeTestDir();
    await chmod(dir, 0o755);
    const skills = path.join(dir, 'skills');
    await writeSkill(skills, 'alpha', { files: { 'notes.md': 'served across restarts\n' } });
    const configPath = path.join(dir, 'config.json');
    await writeFile(configPath, JSON.stringify({ mcpServers: { s: serveEntry(skills) } }));
    // kubelet's pods directory: a bind mount made rshared, the daemon's mountpoint below it.
    const shared = path.join(dir, 'shared');
    await run('mkdir', ['-p', path.join(shared, 'mnt')]);
    expect((await run('mount', ['--bind', shared, shared])).code).toBe(0);
    cleanups.push(() => run('umount', ['-l', shared]));
    expect((await run('mount', ['--make-rshared', shared])).code).toBe(0);
    const mountpoint = path.join(shared, 'mnt');
    cleanups.push(() => run('bash', [CLEANUP, dir]));
    const daemons: Daemon[] = [];
    cleanups.push(async () => {
      for (const daemon of daemons) {
        if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
          try {
            process.kill(-daemon.child.pid!, 'SIGKILL');
          } catch {
            // Already gone.
          }
          await exitOf(daemon.child);
        }
      }
    });

    daemons.push(await startThroughEntrypoint(mountpoint, configPath, dir));
    const reader = new NamespacedReader();
    cleanups.push(() => reader.close());
    const file = path.join(mountpoint, 's', 'alpha', 'notes.md');
    expect(await reader.run(`cat ${file}`)).toEqual({ code: 0, output: 'served across restarts\n' });
    expect(await reader.run(`cat ${path.join(mountpoint, 's', 'alpha', 'SKILL.md')}`)).toEqual({ code: 0, output: skillMd('alpha') });

    // 1. The daemon alone is killed: its watchdog detaches the dead mount; the restart mounts anew.
    daemons[0]!.child.kill('SIGKILL');
    await exitOf(daemons[0]!.child);
    daemons.push(await startThroughEntrypoint(mountpoint, configPath, dir));
    expect(await reader.run(`cat ${file}`)).toEqual({ code: 0, output: 'served across restarts\n' });
    expect(await mountsAt(mountpoint)).toBe(1);

    // 2. The whole process group is killed (daemon, watchdog, servers): whatever dead mount is
    // left, the restart detaches it rather than stacking on it, and the reader follows.
    process.kill(-daemons[1]!.child.pid!, 'SIGKILL');
    await exitOf(daemons[1]!.child);
    daemons.push(await startThroughEntrypoint(mountpoint, configPath, dir));
    expect(await reader.run(`cat ${file}`)).toEqual({ code: 0, output: 'served across restarts\n' });
    expect(await mountsAt(mountpoint)).toBe(1);
    const inReader = await reader.run(`grep -c ' ${mountpoint} ' /proc/self/mounts`);
    expect(inReader).toEqual({ code: 0, output: '1\n' });

    // A clean stop: SIGTERM unmounts, and the reader sees the empty directory again.
    daemons[2]!.child.kill('SIGTERM');
    expect((await exitOf(daemons[2]!.child)).code).toBe(0);
    expect(await mountsAt(mountpoint)).toBe(0);
    expect(await reader.run(`ls -A ${mountpoint}`)).toEqual({ code: 0, output: '' });
  }, 120_000);
});
