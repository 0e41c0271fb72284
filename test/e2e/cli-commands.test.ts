// The command-line experience through real kernel mounts: --server and --only, the
// summary line, `status` (text and JSON, live, stale and hung mounts), `unmount`, and
// errors a person can act on. Mounts are served by child processes and always removed.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exitOf } from '../support/children.js';
import { FixtureMount, mountsUnder, run } from '../support/fuse-harness.js';
import { makeTestDir, REPO, SKILLS_MOUNT, SKILLS_SERVE, startMount, type RunningMount } from '../support/mount-harness.js';

const fuseUsable = existsSync('/dev/fuse') || process.env['CI'] !== undefined;
const EXAMPLES = path.join(REPO, 'examples', 'skills');
const CLEANUP = path.join(REPO, 'scripts', 'fuse-cleanup.sh');
/** A --server value running the reference server on the examples; quoted, so any checkout path works. */
const demoServer = (label: string, ...flags: string[]) =>
  `${label}=${[process.execPath, SKILLS_SERVE, EXAMPLES, ...flags].map((word) => JSON.stringify(word)).join(' ')}`;
const cli = (...args: string[]) => run(process.execPath, [SKILLS_MOUNT, ...args], 15_000);

const dirs: string[] = [];
async function testDir(): Promise<string> {
  const dir = await makeTestDir();
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const dir of dirs) await run('bash', [CLEANUP, dir]);
});

describe.skipIf(!fuseUsable)('skills-mount command line on real mounts', () => {
  let mount: RunningMount | undefined;
  afterAll(async () => {
    await mount?.stop();
  });

  it('--server and --only choose the servers; the summary line says what is mounted; no progress when not a TTY', async () => {
    mount = await startMount({
      dir: await testDir(),
      args: ['--server', demoServer('demo'), '--server', demoServer('other'), '--server', 'missing=/nonexistent/server', '--only', 'demo,missing'],
    });
    expect((await run('ls', [mount.mountpoint])).stdout.split('\n').filter(Boolean)).toEqual(['_approved', 'demo', 'missing', 'skills.json', 'status.json']);
    expect(mount.log()).toMatch(/starting 2 servers from the command line/);
    expect(mount.log()).toMatch(
      new RegExp(`mounted ${mount.mountpoint} \\(1/2 servers connected: demo; not connected: missing; 5 skills; ready in \\d+\\.\\d s\\); Ctrl-C to unmount`),
    );
    expect(mount.log()).toContain('[missing] command /nonexistent/server does not exist; fix "command" in the config');
    expect(mount.log()).not.toMatch(/\r|\x1b\[/);
  });

  it('status shows the mount, its servers, counts, cache and errors; --json carries the same', async () => {
    const text = await cli('status', mount!.mountpoint);
    expect(text.code).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^${mount!.mountpoint}  up \\d+s, pid ${mount!.child.pid}, cache .* of 256 MiB$`));
    expect(text.stdout).toMatch(/SERVER\s+STATE\s+DISCOVERY\s+SKILLS\s+NOTES/);
    expect(text.stdout).toMatch(/\n  demo\s+connected \(2026-07-28\)\s+listing\s+5\n/);
    expect(text.stdout).toMatch(/\n  missing\s+(failed|connecting)\s+-\s+0\s+.*ENOENT/);
    expect(text.stdout).toContain('2 servers (1 connected), 5 skills');

    const json = await cli('status', mount!.mountpoint, '--json');
    const report = JSON.parse(json.stdout);
    expect(report.mounts).toHaveLength(1);
    expect(report.mounts[0]).toMatchObject({ mountpoint: mount!.mountpoint, state: 'ok', pid: mount!.child.pid, cache: { limitBytes: 256 * 1024 * 1024 } });
    expect(report.mounts[0].servers.map((server: { label: string; skills: number }) => [server.label, server.skills])).toEqual([
      ['demo', 5],
      ['missing', 0],
    ]);

    // Without a MOUNTPOINT, every skills-mount mount is listed, this one included.
    expect((await cli('status', '--json')).stdout).toContain(`"mountpoint": "${mount!.mountpoint}"`);
  });

  it('status on a directory that is not a mount says so and exits 1', async () => {
    const dir = await testDir();
    const result = await cli('status', dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`skills-mount: ${dir} is not a skills-mount mount (nothing of type fuse.skills-mount is mounted there)\n`);
  });

  it('a second mount on a busy mountpoint is refused with what to do', async () => {
    const result = await cli(mount!.mountpoint, '--server', demoServer('demo'));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`mountpoint ${mount!.mountpoint} is busy: already mounted (fuse.skills-mount from skills-mount)`);
    expect(result.stderr).toContain(`stop it with: skills-mount unmount ${mount!.mountpoint}`);
  });

  it('unmount stops the daemon cleanly (it exits 0) and the mount is gone', async () => {
    const exited = exitOf(mount!.child);
    const result = await cli('unmount', mount!.mountpoint);
    expect(result.stdout).toBe(`unmounted ${mount!.mountpoint} (stopped skills-mount, pid ${mount!.child.pid})\n`);
    expect(result.code).toBe(0);
    expect((await exited).code).toBe(0);
    expect(await mountsUnder(mount!.mountpoint)).toEqual([]);
    expect(mount!.log()).toContain('SIGTERM: unmounting');
    const again = await cli('unmount', mount!.mountpoint);
    expect([again.code, again.stderr]).toEqual([1, `skills-mount: nothing is mounted at ${mount!.mountpoint}\n`]);
  });

  it('a stale mount (daemon killed) shows as STALE and unmount removes it', async () => {
    const mnt = path.join(await testDir(), 'mnt');
    const fixture = FixtureMount.start(mnt, { FIXTURE_AUTO_UNMOUNT: '0' });
    try {
      await fixture.ready();
      fixture.kill('SIGKILL');
      await fixture.exited;
      const status = await cli('status', mnt);
      expect(status.code).toBe(1);
      expect(status.stdout).toBe(`${mnt}  STALE: the daemon is gone (Transport endpoint is not connected)\n  fix: skills-mount unmount ${mnt}\n`);
      const result = await cli('unmount', mnt);
      expect([result.code, result.stdout]).toEqual([0, `removed the stale mount ${mnt}\n`]);
      expect(await mountsUnder(mnt)).toEqual([]);
    } finally {
      await fixture.stop();
    }
  });

  it('a hung daemon never hangs status: it reports NOT RESPONDING within the deadline, and unmount removes it', async () => {
    const hung = await startMount({ dir: await testDir(), args: ['--server', demoServer('demo')] });
    try {
      hung.child.kill('SIGSTOP');
      const startedAt = Date.now();
      const status = await cli('status', hung.mountpoint);
      expect(Date.now() - startedAt).toBeLessThan(8_000);
      expect(status.code).toBe(1);
      expect(status.stdout).toContain(`${hung.mountpoint}  NOT RESPONDING: status.json did not answer within 2 s`);
      const result = await cli('unmount', hung.mountpoint);
      expect([result.code, result.stdout]).toEqual([0, `removed the mount that was not responding ${hung.mountpoint}\n`]);
      expect(await mountsUnder(hung.mountpoint)).toEqual([]);
    } finally {
      hung.child.kill('SIGCONT');
      await hung.stop();
    }
  });

  it('refuses a non-empty mountpoint and an invalid config file with the line, without mounting', async () => {
    const dir = await testDir();
    await mkdir(path.join(dir, 'full'));
    await writeFile(path.join(dir, 'full', 'mine.txt'), 'keep');
    const full = await cli(path.join(dir, 'full'), '--server', demoServer('demo'));
    expect(full.code).toBe(2);
    expect(full.stderr).toContain('is not empty; skills-mount mounts only on an empty directory: choose an empty directory');
    await writeFile(path.join(dir, 'bad.json'), '{\n  "mcpServers": {\n    "a": { "command": "x", }\n    "b": {}\n  }\n}\n');
    const bad = await cli(path.join(dir, 'mnt'), '--config', path.join(dir, 'bad.json'));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(new RegExp(`config ${dir}/bad.json: not valid JSON at line 4, column 5`));
    expect(await readFile('/proc/mounts', 'utf8')).not.toContain(dir);
  });

  it('--version prints package.json version; --help has examples', async () => {
    const manifest = JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8'));
    expect((await cli('--version')).stdout).toBe(`skills-mount ${manifest.version}\n`);
    const help = await cli('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Examples:');
    expect(help.stdout).toContain('skills-mount status [MOUNTPOINT] [--json]');
    expect(help.stdout).toContain('skills-mount ./status');
  });
});

