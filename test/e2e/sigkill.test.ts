// A daemon killed with SIGKILL leaves no mount, whoever started it and however its output was
// piped: from a Node parent with piped stdio (as harnesses, process managers and test runners
// start it) and from a shell with its output in a file. Before each kill the kernel holds the
// mount root's attributes (a `stat` of the mountpoint), which is what fooled the old watchdog's
// liveness check. Each next start on the same path serves within 5 s. On libfuse 3, whose
// fusermount3 alone leaves a dead mount now and then: the watchdog is what detaches it.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { daemonEnv, exitOf, stopChild } from '../support/children.js';
import { run } from '../support/fuse-harness.js';
import { REPO, SKILLS_MOUNT, makeTestDir, serveEntry } from '../support/mount-harness.js';
import { delay, waitFor } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';
import { skillMd, writeSkill } from '../support/skill-builder.js';

requireFuse();

/** 50 by default, as the issue asks; SIGKILL_ROUNDS changes it for a longer or shorter run. */
const ROUNDS = Number(process.env['SIGKILL_ROUNDS'] ?? 50);
const GONE_WITHIN_MS = 2_000;
const NEXT_START_SERVES_WITHIN_MS = 5_000;
const CLEANUP = path.join(REPO, 'scripts', 'fuse-cleanup.sh');

interface Started {
  pid: number;
  /** The daemon's stderr so far. */
  log(): Promise<string>;
  /** The process the test holds (the daemon itself, or the shell that started it). */
  holder: ChildProcess;
}

type Starter = (mountpoint: string, config: string, dir: string) => Promise<Started>;

/** spawn(node, [cli, MNT, --config, CFG], { stdio: ['ignore', 'pipe', 'pipe'] }). */
const fromNodeParent: Starter = async (mountpoint, config) => {
  const child = spawn(process.execPath, [SKILLS_MOUNT, mountpoint, '--config', config, '--no-disk-cache'], { stdio: ['ignore', 'pipe', 'pipe'], env: daemonEnv() });
  let stderr = '';
  child.stdout!.resume();
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return { pid: child.pid!, holder: child, log: async () => stderr };
};

/** `node cli MNT --config CFG > LOG 2>&1 &` from sh, which prints the daemon's pid and waits. */
const fromShell: Starter = async (mountpoint, config, dir) => {
  const logFile = path.join(dir, 'daemon.log');
  await writeFile(logFile, '');
  const shell = spawn('sh', ['-c', '"$@" > "$LOG" 2>&1 & echo $!; wait', 'sh', process.execPath, SKILLS_MOUNT, mountpoint, '--config', config, '--no-disk-cache'], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: daemonEnv({ ...process.env, LOG: logFile }),
  });
  let out = '';
  shell.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  await waitFor(async () => /^\d+\n/.test(out), 5_000, 'the shell printed the daemon pid');
  return { pid: Number(out.trim()), holder: shell, log: () => readFile(logFile, 'utf8') };
};

async function mountedAt(mountpoint: string): Promise<boolean> {
  return (await readFile('/proc/mounts', 'utf8')).split('\n').some((line) => line.split(' ')[1] === mountpoint);
}

/** Helpers (watchdog, fusermount3) still running for this mountpoint. */
async function helpersOf(mountpoint: string): Promise<string> {
  const result = await run('pgrep', ['-af', mountpoint]);
  return result.stdout.split('\n').filter((line) => /watchdog|fusermount/.test(line)).join('\n');
}

/** A test folder serving one skill, beta, over stdio: its config file and the mountpoint. */
async function served(): Promise<{ dir: string; config: string; mountpoint: string }> {
  const dir = await makeTestDir();
  const skills = path.join(dir, 'skills');
  await writeSkill(skills, 'beta');
  const config = path.join(dir, 'config.json');
  await writeFile(config, JSON.stringify({ mcpServers: { s: serveEntry(skills) } }));
  return { dir, config, mountpoint: path.join(dir, 'mnt') };
}

async function killRounds(start: Starter): Promise<{ left: string[]; slowStarts: string[]; startMs: number[] }> {
  const { dir, config, mountpoint } = await served();
  const left: string[] = [];
  const slowStarts: string[] = [];
  const startMs: number[] = [];
  let current: Started | undefined;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const began = Date.now();
      current = await start(mountpoint, config, dir);
      const daemon = current;
      await waitFor(async () => /mounted /.test(await daemon.log()), 30_000, `round ${round}: mounted`).catch(async (error: unknown) => {
        throw new Error(`${(error as Error).message}\n${await daemon.log()}`);
      });
      const took = Date.now() - began;
      startMs.push(took);
      if (round > 0 && took > NEXT_START_SERVES_WITHIN_MS) slowStarts.push(`round ${round}: ${took} ms`);
      // It serves, and the kernel now holds the root's attributes and a file's pages.
      expect((await run('cat', [path.join(mountpoint, 's', 'beta', 'SKILL.md')])).stdout).toBe(skillMd('beta'));
      expect((await run('stat', ['--', mountpoint])).code).toBe(0);
      process.kill(daemon.pid, 'SIGKILL');
      const gone = await waitFor(async () => !(await mountedAt(mountpoint)) && (await helpersOf(mountpoint)) === '', GONE_WITHIN_MS, 'gone').then(
        () => true,
        () => false,
      );
      if (!gone) {
        left.push(`round ${round}: ${(await mountedAt(mountpoint)) ? 'still mounted' : 'unmounted'}; helpers: ${(await helpersOf(mountpoint)) || 'none'}`);
        await run('bash', [CLEANUP, dir]);
      }
      await exitOf(daemon.holder);
      current = undefined;
    }
  } finally {
    if (current) {
      await run('kill', ['-KILL', String(current.pid)]);
      await stopChild(current.holder, { signal: 'SIGKILL' });
    }
    await delay(100);
    await run('bash', [CLEANUP, dir]);
  }
  return { left, slowStarts, startMs };
}

describe(`a daemon killed with SIGKILL, ${ROUNDS} times in a row`, () => {
  for (const [who, start] of [
    ['a Node parent with piped stdio', fromNodeParent],
    ['a shell, output to a file', fromShell],
  ] as const) {
    it(`started from ${who}: no mount and no helper left within 2 s, and the next start on the same path serves within 5 s`, async () => {
      const { left, slowStarts } = await killRounds(start);
      expect(left).toEqual([]);
      expect(slowStarts).toEqual([]);
    }, 60_000 + ROUNDS * 8_000);
  }
});

describe('a daemon killed with SIGKILL together with its watchdog and fusermount', () => {
  it('leaves a dead mount that the next start on the same path recovers, serving within 5 s', async () => {
    const { dir, config, mountpoint } = await served();
    const started: Started[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        const began = Date.now();
        const daemon = await fromNodeParent(mountpoint, config, dir);
        started.push(daemon);
        await waitFor(async () => /mounted /.test(await daemon.log()), 30_000, `round ${round}: mounted`).catch(async (error: unknown) => {
          throw new Error(`${(error as Error).message}\n${await daemon.log()}`);
        });
        if (round > 0) expect(Date.now() - began).toBeLessThan(NEXT_START_SERVES_WITHIN_MS);
        if (round > 0) expect(await daemon.log()).not.toMatch(/busy/);
        expect((await run('stat', ['--', mountpoint])).code).toBe(0);
        // Nothing is left to detach the mount (as after a kill of the whole process tree): the kernel
        // still lists it, and holds its root's attributes.
        await run('pkill', ['-KILL', '-f', `skills-mount-watchdog ${mountpoint}`]);
        await run('pkill', ['-KILL', '-f', `fusermount.* ${mountpoint}`]);
        process.kill(daemon.pid, 'SIGKILL');
        await exitOf(daemon.holder);
      }
    } finally {
      for (const daemon of started) await stopChild(daemon.holder, { signal: 'SIGKILL' });
      await run('bash', [CLEANUP, dir]);
    }
  }, 90_000);
});
