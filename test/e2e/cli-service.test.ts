// contrib/skills-mount.service does what docs/service.md says: its ExecStart (and the
// docs' customized ones), read by skills-mount's own command-line parser, mount the path
// the docs name with the flags given; its ExecStopPost unmounts that same path and never
// fails; a configuration error exits with the status the unit will not restart on; systemd
// itself accepts the unit. Then the unit's own commands, run as systemd would (with %h set
// to a test home), mount, stop cleanly with exit 0, and leave no mount behind after a crash.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCommandLine, type MountOptions } from '../../src/cli/command-line.js';
import { mountsUnder, run, waitFor } from '../support/fuse-harness.js';
import { makeTestDir, REPO, SKILLS_MOUNT } from '../support/mount-harness.js';

const fuseUsable = existsSync('/dev/fuse') || process.env['CI'] !== undefined;
const UNIT = path.join(REPO, 'contrib', 'skills-mount.service');
const SERVICE_DOC = path.join(REPO, 'docs', 'service.md');
const CLEANUP = path.join(REPO, 'scripts', 'fuse-cleanup.sh');
const SYSTEMD_ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((candidate) => existsSync(candidate));

type Directives = Map<string, string[]>;

/** Directive -> values in order, across sections (systemd allows repeats; "" resets a list). */
function directivesOf(text: string): Directives {
  const directives: Directives = new Map();
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (match) directives.set(match[1]!, [...(directives.get(match[1]!) ?? []), match[2]!]);
  }
  return directives;
}

async function readUnit(): Promise<Directives> {
  return directivesOf(await readFile(UNIT, 'utf8'));
}

/** The one value in effect: the last one after the last empty assignment (how drop-ins override). */
function effective(directives: Directives, name: string): string {
  const values = directives.get(name) ?? [];
  const value = values[values.length - 1];
  if (value === undefined || value === '') throw new Error(`no ${name} in effect`);
  return value;
}

/** Splits an Exec line the way systemd does for these simple cases: words, '...' quoted; %h is the home. */
function execWords(line: string, home: string): string[] {
  const words = [...line.replace(/^-/, '').matchAll(/'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2]!);
  return words.map((word) => word.replaceAll('%h', home));
}

/** The mount options skills-mount itself reads from an ExecStart line (after the program that runs it). */
function mountOptionsOf(execStart: string, home: string): MountOptions {
  const [program, runner, ...argv] = execWords(execStart, home);
  if (program === '/usr/bin/env') expect(runner).toBe('skills-mount');
  else expect(runner).toMatch(/\/dist\/cli\/skills-mount\.js$/);
  const command = parseCommandLine(argv);
  if (command.command !== 'mount') throw new Error(`${execStart} is not a mount command (${command.command})`);
  return command.options;
}

/** Runs an ExecStopPost line with a recording `fusermount` first on PATH; resolves its exit code and what fusermount got. */
async function runStopPost(execStopPost: string, home: string, fusermountExit: number): Promise<{ code: number | null; fusermountArgs: string[] }> {
  const bin = path.join(home, 'fake-bin');
  const record = path.join(home, 'fusermount-args');
  await mkdir(bin, { recursive: true });
  await writeFile(path.join(bin, 'fusermount'), `#!/bin/sh\nprintf '%s\\n' "$@" > "${record}"\nexit ${fusermountExit}\n`);
  await chmod(path.join(bin, 'fusermount'), 0o755);
  const [program, ...args] = execWords(execStopPost, home);
  const code = await new Promise<number | null>((resolve) => {
    spawn(program!, args, { env: { PATH: `${bin}:/usr/bin:/bin`, HOME: home }, stdio: 'ignore' }).once('exit', (exitCode) => resolve(exitCode));
  });
  return { code, fusermountArgs: existsSync(record) ? (await readFile(record, 'utf8')).split('\n').slice(0, -1) : [] };
}

/** The drop-in of docs/service.md's "Customize" section, as directives. */
async function documentedOverride(): Promise<Directives> {
  const doc = await readFile(SERVICE_DOC, 'utf8');
  const block = /```ini\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error('docs/service.md has no ```ini block');
  return directivesOf(block[1]!);
}

describe('contrib/skills-mount.service', () => {
  // Parsing only: a home with spaces stays one argument.
  const home = '/home/someone with spaces';

  it("ExecStart, read by skills-mount's own parser, mounts ~/.cache/mcp-skills with the default config and options", async () => {
    const options = mountOptionsOf(effective(await readUnit(), 'ExecStart'), home);
    expect(options).toMatchObject({ mountpoint: `${home}/.cache/mcp-skills`, configPath: undefined, serverFlags: [], only: [], timeoutMs: 10_000, hideDynamic: false, verbose: false });
  });

  it("ExecStopPost unmounts exactly ExecStart's mountpoint, lazily, and succeeds even when nothing is mounted", async () => {
    const unit = await readUnit();
    const scratch = path.join(await makeTestDir(), 'home with spaces');
    await mkdir(scratch);
    const { mountpoint } = mountOptionsOf(effective(unit, 'ExecStart'), scratch);
    // fusermount fails (nothing mounted, as after a clean stop): the stop still succeeds.
    const stopped = await runStopPost(effective(unit, 'ExecStopPost'), scratch, 1);
    expect(stopped.code).toBe(0);
    expect(stopped.fusermountArgs).toEqual(['-uz', mountpoint]);
  });

  it("the documented customization mounts its own path with its --config and --only, and its ExecStopPost unmounts that path", async () => {
    const override = await documentedOverride();
    const options = mountOptionsOf(effective(override, 'ExecStart'), home);
    expect(options).toMatchObject({ mountpoint: `${home}/skills`, configPath: `${home}/.cursor/mcp.json`, only: ['docs'] });
    const scratch = await makeTestDir();
    const stopped = await runStopPost(effective(override, 'ExecStopPost'), scratch, 0);
    expect(stopped.code).toBe(0);
    expect(stopped.fusermountArgs).toEqual(['-uz', `${scratch}/skills`]);
  });

  it("the documented checkout ExecStart runs the package's own skills-mount entry point on the same mountpoint", async () => {
    const doc = await readFile(SERVICE_DOC, 'utf8');
    const line = /`ExecStart=(\/usr\/bin\/node [^`]+)`/.exec(doc)?.[1];
    expect(line, 'docs/service.md names a checkout ExecStart').toBeDefined();
    const [, script] = execWords(line!, home);
    const manifest = JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(script!.endsWith(`/${manifest.bin['skills-mount']}`)).toBe(true);
    expect(mountOptionsOf(line!, home).mountpoint).toBe(mountOptionsOf(effective(await readUnit(), 'ExecStart'), home).mountpoint);
  });

  it('a configuration error exits with a status the unit does not restart on, naming the file', async () => {
    const testHome = await makeTestDir();
    const configFile = path.join(testHome, '.config', 'skills-mount', 'config.json');
    await mkdir(path.dirname(configFile), { recursive: true });
    await cp(path.join(REPO, 'test', 'fixtures', 'configs', 'broken-syntax.json'), configFile);
    const [, , ...argv] = execWords(effective(await readUnit(), 'ExecStart'), testHome);
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [SKILLS_MOUNT, ...argv], { env: { HOME: testHome, PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.once('exit', (code) => resolve({ code, stderr }));
    });
    expect(result.stderr).toContain(`config ${configFile}: not valid JSON`);
    expect(result.code).toBe(2);
    expect((await readUnit()).get('RestartPreventExitStatus')!.join(' ').split(/\s+/)).toContain(String(result.code));
    // Nothing was mounted or created: the error came before the mountpoint.
    expect(existsSync(path.join(testHome, '.cache', 'mcp-skills'))).toBe(false);
  });

  it('systemd-analyze verify accepts the unit without a warning (and does warn about a broken copy)', async (context) => {
    context.skip(SYSTEMD_ANALYZE === undefined, 'systemd-analyze is not installed (Debian package "systemd")');
    const dir = await makeTestDir();
    const runtimeDir = path.join(dir, 'runtime');
    await mkdir(runtimeDir, { mode: 0o700 });
    const verify = async (text: string) => {
      const unitFile = path.join(dir, 'skills-mount.service');
      await writeFile(unitFile, text);
      return new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(SYSTEMD_ANALYZE!, ['verify', '--user', unitFile], { env: { ...process.env, XDG_RUNTIME_DIR: runtimeDir, HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
        child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
        child.once('exit', (code) => resolve({ code, output }));
      });
    };
    const unitText = await readFile(UNIT, 'utf8');
    const result = await verify(unitText);
    context.skip(/Failed to (initialize manager|lookup RuntimeDirectory)/.test(result.output), `systemd-analyze cannot run a user manager here: ${result.output.trim()}`);
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
    // The check can fail: a directive systemd cannot parse is reported.
    const broken = await verify(unitText.replace('Restart=on-failure', 'Restart=sometimes'));
    expect(broken.output).toMatch(/sometimes/);
  });

  describe.skipIf(!fuseUsable)('run as systemd would', () => {
    let testHome: string;
    afterAll(async () => {
      if (testHome) await run('bash', [CLEANUP, testHome]);
    });

    async function startService(env: NodeJS.ProcessEnv) {
      const [program, ...args] = execWords(effective(await readUnit(), 'ExecStart'), testHome);
      const child = spawn(program!, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let log = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      await waitFor(() => /mounted /.test(log) || child.exitCode !== null, 30_000, 'the service to mount');
      expect(log).toMatch(/mounted /);
      return { child, exited, log: () => log };
    }

    async function stopPost(env: NodeJS.ProcessEnv): Promise<void> {
      const [program, ...args] = execWords(effective(await readUnit(), 'ExecStopPost'), testHome);
      await new Promise<void>((resolve) => spawn(program!, args, { env, stdio: 'ignore' }).once('exit', () => resolve()));
    }

    it('ExecStart mounts ~/.cache/mcp-skills; SIGTERM exits 0 with nothing mounted; ExecStopPost is harmless', async () => {
      testHome = await makeTestDir();
      const bin = path.join(testHome, '.local', 'bin');
      await mkdir(bin, { recursive: true });
      // What `npm install -g` leaves on PATH: a `skills-mount` command.
      await writeFile(path.join(bin, 'skills-mount'), `#!/bin/sh\nexec "${process.execPath}" "${SKILLS_MOUNT}" "$@"\n`);
      await chmod(path.join(bin, 'skills-mount'), 0o755);
      const unitPath = (await readUnit()).get('Environment')!.find((value) => value.startsWith('PATH='))!.slice('PATH='.length);
      const env = { HOME: testHome, PATH: unitPath.replaceAll('%h', testHome) };
      const mountpoint = path.join(testHome, '.cache', 'mcp-skills');

      const service = await startService(env);
      expect((await run('ls', [mountpoint])).stdout).toBe('_approved\ndemo\nskills.json\nstatus.json\n');
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
