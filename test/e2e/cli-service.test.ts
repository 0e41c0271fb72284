// contrib/skills-mount.service: its directives say what docs/service.md promises, and its
// own ExecStart / SIGTERM / ExecStopPost, run as systemd would (with %h set to a test
// home), mount, stop cleanly with exit 0, and leave no mount behind even after a crash.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mountsUnder, run, waitFor } from '../support/fuse-harness.js';
import { makeTestDir, REPO, SKILLS_MOUNT } from '../support/mount-harness.js';

const fuseUsable = existsSync('/dev/fuse') || process.env['CI'] !== undefined;
const UNIT = path.join(REPO, 'contrib', 'skills-mount.service');
const CLEANUP = path.join(REPO, 'scripts', 'fuse-cleanup.sh');

/** Directive -> values, across sections (systemd allows repeats). */
async function readUnit(): Promise<Map<string, string[]>> {
  const directives = new Map<string, string[]>();
  for (const line of (await readFile(UNIT, 'utf8')).split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (match) directives.set(match[1]!, [...(directives.get(match[1]!) ?? []), match[2]!]);
  }
  return directives;
}

/** Splits an Exec line the way systemd does for these simple cases: words, '...' quoted. */
function execWords(line: string, home: string): string[] {
  const words = [...line.replace(/^-/, '').matchAll(/'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2]!);
  return words.map((word) => word.replaceAll('%h', home));
}

describe('contrib/skills-mount.service', () => {
  it('restarts on failure (not on config errors), stops with SIGTERM, and unmounts in ExecStopPost', async () => {
    const unit = await readUnit();
    expect(unit.get('Restart')).toEqual(['on-failure']);
    expect(unit.get('RestartPreventExitStatus')).toEqual(['2']);
    expect(unit.get('KillSignal')).toEqual(['SIGTERM']);
    expect(unit.get('KillMode')).toEqual(['mixed']);
    expect(unit.get('WantedBy')).toEqual(['default.target']);
    expect(unit.get('ExecStart')![0]).toMatch(/skills-mount %h\/\.cache\/mcp-skills$/);
    expect(unit.get('ExecStopPost')![0]).toMatch(/^-.*fusermount -uz .*%h\/\.cache\/mcp-skills$/);
  });

  describe.skipIf(!fuseUsable)('run as systemd would', () => {
    let home: string;
    afterAll(async () => {
      if (home) await run('bash', [CLEANUP, home]);
    });

    async function startService(env: NodeJS.ProcessEnv) {
      const unit = await readUnit();
      const [program, ...args] = execWords(unit.get('ExecStart')![0]!, home);
      const child = spawn(program!, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let log = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      await waitFor(() => /mounted /.test(log) || child.exitCode !== null, 30_000, 'the service to mount');
      expect(log).toMatch(/mounted /);
      return { child, exited, log: () => log };
    }

    async function stopPost(env: NodeJS.ProcessEnv): Promise<void> {
      const [program, ...args] = execWords((await readUnit()).get('ExecStopPost')![0]!, home);
      await new Promise<void>((resolve) => spawn(program!, args, { env, stdio: 'ignore' }).once('exit', () => resolve()));
    }

    it('ExecStart mounts ~/.cache/mcp-skills; SIGTERM exits 0 with nothing mounted; ExecStopPost is harmless', async () => {
      home = await makeTestDir();
      const bin = path.join(home, '.local', 'bin');
      await mkdir(bin, { recursive: true });
      // What `npm install -g` leaves on PATH: a `skills-mount` command.
      await writeFile(path.join(bin, 'skills-mount'), `#!/bin/sh\nexec "${process.execPath}" "${SKILLS_MOUNT}" "$@"\n`);
      await chmod(path.join(bin, 'skills-mount'), 0o755);
      const unitPath = (await readUnit()).get('Environment')!.find((value) => value.startsWith('PATH='))!.slice('PATH='.length);
      const env = { HOME: home, PATH: unitPath.replaceAll('%h', home) };
      const mountpoint = path.join(home, '.cache', 'mcp-skills');

      const service = await startService(env);
      expect((await run('ls', [mountpoint])).stdout).toBe('demo\nskills.json\nstatus.json\n');
      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
      await stopPost(env);
      expect(await mountsUnder(mountpoint)).toEqual([]);

      // A crash (SIGKILL): the next start, and ExecStopPost, leave exactly one or zero mounts.
      const crashed = await startService(env);
      crashed.child.kill('SIGKILL');
      await crashed.exited;
      await stopPost(env);
      expect(await mountsUnder(mountpoint)).toEqual([]);
      const restarted = await startService(env);
      expect(await mountsUnder(mountpoint)).toHaveLength(1);
      restarted.child.kill('SIGTERM');
      expect(await restarted.exited).toBe(0);
    });
  });
});
