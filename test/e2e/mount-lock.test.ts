// `skills-mount MNT --lock FILE` through a real kernel mount: `_approved/` shows exactly the
// locked versions; when the server moves on, the locked bytes stay served from what this machine
// verified before (memory, then the disk cache and the kept SKILL.md texts after a restart), never
// the server's other bytes; a version this machine cannot serve whole is left out of `_approved/`,
// with the reason `link` gives, in the log and `status`; and the lockfile's own change reaches
// `_approved/` at once.
import { spawn } from 'node:child_process';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exitOf } from '../support/children.js';
import { run } from '../support/fuse-harness.js';
import { SKILLS_MOUNT, makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { pollUntil } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';
import { writeSkill } from '../support/skill-builder.js';

requireFuse();

const mounts: RunningMount[] = [];
afterEach(async () => {
  for (const mount of mounts.splice(0)) await mount.stop();
});

interface World {
  dir: string;
  served: string;
  project: string;
  env: NodeJS.ProcessEnv;
  config: Record<string, ReturnType<typeof serveEntry>>;
}

/** Two skills served from a folder of the test's own; a project folder; a HOME whose data and cache are the test's. */
async function world(): Promise<World> {
  const dir = await makeTestDir();
  const served = path.join(dir, 'skills');
  await writeSkill(served, 'guide', { description: 'House style, version one', files: { 'references/tone.md': 'Tone: version one.\n' } });
  await writeSkill(served, 'other', { description: 'Locked later', files: { 'notes.md': 'Notes: version one.\n' } });
  const project = path.join(dir, 'project');
  await mkdir(project);
  const env = { ...process.env, HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_DATA_HOME: path.join(dir, 'data'), XDG_CACHE_HOME: path.join(dir, 'cache') };
  return { dir, served, project, env, config: { team: serveEntry(served) } };
}

/** Another HOME on the same machine: its own data and cache (an empty disk cache, no kept texts). */
function freshHome(w: World, name: string): NodeJS.ProcessEnv {
  const home = path.join(w.dir, name);
  return { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), XDG_DATA_HOME: path.join(home, 'data'), XDG_CACHE_HOME: path.join(home, 'cache') };
}

function cli(w: Pick<World, 'env'>, ...args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env: w.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    void exitOf(child).then((exit) => resolve({ code: exit.code, out }));
  });
}

/** The lock's configuration, as a file `lock` and `link` read. */
async function lockConfig(w: World): Promise<string> {
  const configPath = path.join(w.dir, 'lock-config.json');
  await writeFile(configPath, JSON.stringify({ mcpServers: w.config }));
  return configPath;
}

async function lock(w: World, ...paths: string[]): Promise<void> {
  const configPath = await lockConfig(w);
  const result = await cli(w, 'lock', ...paths, '--project', w.project, '--config', configPath, '--yes');
  expect(result.code, result.out).toBe(0);
}

/** A mount with --lock under `w.dir/<name>` (its disk cache is that mountpoint's own), as the user of `env`. */
async function mountWithLock(w: World, name = `m${mounts.length}`, env = w.env): Promise<RunningMount> {
  // The mount's own config file, the lock's server entry: the same command line, so the same identity.
  const mount = await startMount({ dir: path.join(w.dir, name), config: w.config, env, diskCache: true, args: ['--lock', path.join(w.project, 'skills-lock.json')] });
  mounts.push(mount);
  return mount;
}

async function stopMount(mount: RunningMount): Promise<void> {
  await mount.stop();
  mounts.splice(mounts.indexOf(mount), 1);
}

/** The skill paths `_approved/skills.json` lists. */
async function approvedIndex(mount: RunningMount): Promise<string[]> {
  const { stdout } = await cat(path.join(mount.mountpoint, '_approved', 'skills.json'));
  const index = JSON.parse(stdout) as { servers: Array<{ skills: Array<{ path: string }> }> };
  return index.servers.flatMap((server) => server.skills.map((skill) => skill.path));
}

async function cat(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return run('cat', [file]);
}

function until<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  return pollUntil(read, accept, { timeoutMs, timeoutError: (last) => new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(last)}`) });
}

async function approvedNames(mount: RunningMount): Promise<string[]> {
  const { stdout } = await run('ls', [path.join(mount.mountpoint, '_approved', 'team')]);
  return stdout.split('\n').filter(Boolean).sort();
}

describe('the mount with --lock', () => {
  it('shows exactly the locked versions, keeps serving them when the server moves on (also after a restart), and follows the lockfile', async () => {
    const w = await world();
    // One mountpoint for both daemons: the disk cache is the mountpoint's own.
    await mkdir(path.join(w.dir, 'm0'), { recursive: true });
    await lock(w, 'team/guide');
    let mount = await mountWithLock(w);
    expect(await approvedNames(mount)).toEqual(['guide']);
    const guide = path.join(mount.mountpoint, '_approved', 'team', 'guide');
    // Read once while the server serves the locked bytes: that is what this machine keeps.
    expect((await cat(path.join(guide, 'SKILL.md'))).stdout).toMatch(/version one/);
    expect((await cat(path.join(guide, 'references', 'tone.md'))).stdout).toBe('Tone: version one.\n');

    // The server moves on: the full view shows the new bytes, the approved view the locked ones.
    await writeSkill(w.served, 'guide', { description: 'House style, version two', files: { 'references/tone.md': 'Tone: version two.\n' } });
    await until(async () => (await cat(path.join(mount.mountpoint, 'team', 'guide', 'SKILL.md'))).stdout, (text) => text.includes('version two'), 10_000, 'the full view shows version two');
    expect((await cat(path.join(guide, 'SKILL.md'))).stdout).toMatch(/version one/);
    expect((await cat(path.join(guide, 'references', 'tone.md'))).stdout).toBe('Tone: version one.\n');

    // A restart: nothing in memory; the locked bytes come from the disk cache and the kept texts, re-verified.
    await mount.stop();
    mounts.splice(mounts.indexOf(mount), 1);
    mount = await mountWithLock(w);
    const again = path.join(mount.mountpoint, '_approved', 'team', 'guide');
    expect((await cat(path.join(again, 'SKILL.md'))).stdout).toMatch(/version one/);
    expect((await cat(path.join(again, 'references', 'tone.md'))).stdout).toBe('Tone: version one.\n');
    expect((await cat(path.join(mount.mountpoint, 'team', 'guide', 'references', 'tone.md'))).stdout).toBe('Tone: version two.\n');

    // A lock of a version this machine never read all of, the server serving another: left out, never replaced.
    await lock(w, 'team/other');
    await until(() => approvedNames(mount), (names) => names.join() === 'guide,other', 5_000, 'other in the approved view');
    // (lock read its SKILL.md, and keeps it; its notes.md nobody on this machine has read.)
    await writeSkill(w.served, 'other', { description: 'Locked later', files: { 'notes.md': 'Notes: changed before anyone read them.\n' } });
    await until(async () => (await cat(path.join(mount.mountpoint, 'team', 'other', 'notes.md'))).stdout, (text) => text.includes('changed before'), 10_000, 'the full view shows the change');
    await until(() => approvedNames(mount), (names) => names.join() === 'guide', 5_000, 'other left out of the approved view');
    expect(mount.log()).toMatch(/team\/other is not shown in _approved: team: skill:\/\/other\/notes\.md: locked as sha256:[0-9a-f]{64}, which this machine has not kept/);
    // The server back at the locked version: shown again.
    await writeSkill(w.served, 'other', { description: 'Locked later', files: { 'notes.md': 'Notes: version one.\n' } });
    await until(() => approvedNames(mount), (names) => names.join() === 'guide,other', 10_000, 'other shown again');
    expect((await cat(path.join(mount.mountpoint, '_approved', 'team', 'other', 'notes.md'))).stdout).toBe('Notes: version one.\n');

    // The lockfile replaced (as git does, by a rename): the approved view follows within a second.
    const lockfile = path.join(w.project, 'skills-lock.json');
    const written = path.join(w.project, '.next-lock');
    const { stdout } = await run('cat', [lockfile]);
    const withoutOther = JSON.parse(stdout) as { skills: Array<{ path: string }> };
    withoutOther.skills = withoutOther.skills.filter((skill) => skill.path !== 'other');
    await writeFile(written, `${JSON.stringify(withoutOther, null, 2)}\n`);
    const started = Date.now();
    await rename(written, lockfile);
    await until(() => approvedNames(mount), (names) => names.join() === 'guide', 1_000, 'other gone from the approved view within 1 s');
    console.log(`mount --lock: a replaced lockfile reached _approved/ in ${Date.now() - started} ms`);
  }, 90_000);

  it('leaves out a locked skill this machine cannot serve whole, with the reason link gives, in the log and status; shows it where a verified copy is held', async () => {
    const w = await world();
    await writeSkill(w.served, 'pdf', { description: 'Fills PDF forms', files: { 'forms.md': 'Forms: version one.\n' } });
    await lock(w, 'team/pdf');
    // One machine reads every locked file while the server serves them: its disk cache holds them.
    await mkdir(path.join(w.dir, 'kept'), { recursive: true });
    const reader = await mountWithLock(w, 'kept');
    expect((await cat(path.join(reader.mountpoint, '_approved', 'team', 'pdf', 'forms.md'))).stdout).toBe('Forms: version one.\n');
    await stopMount(reader);

    // The server changes forms.md; a fresh HOME (empty disk cache, no kept texts) mounts with --lock.
    await writeSkill(w.served, 'pdf', { description: 'Fills PDF forms', files: { 'forms.md': 'Forms: version two.\n' } });
    const fresh = freshHome(w, 'fresh-home');
    await mkdir(path.join(w.dir, 'fresh'), { recursive: true });
    const mount = await mountWithLock(w, 'fresh', fresh);
    expect((await cat(path.join(mount.mountpoint, 'team', 'pdf', 'forms.md'))).stdout).toBe('Forms: version two.\n');
    expect(await approvedNames(mount)).toEqual([]);
    expect(await approvedIndex(mount)).toEqual([]);
    expect((await cat(path.join(mount.mountpoint, '_approved', 'team', 'pdf', 'SKILL.md'))).code).not.toBe(0);
    const reason = /team\/pdf is not shown in _approved: (team: skill:\/\/pdf\/forms\.md: locked as sha256:[0-9a-f]{64}, which this machine has not kept, and the server serves sha256:[0-9a-f]{64} now)/.exec(mount.log())?.[1];
    expect(reason, mount.log()).toBeDefined();

    // `link` on that machine refuses pdf, with the same reason.
    const linked = await cli({ env: fresh }, 'link', 'claude-code', '--project', w.project, '--config', await lockConfig(w));
    expect(linked.out).toContain(`team/pdf is not linked: ${reason!}`);

    // `status` says so too, as text and as JSON.
    const status = await cli({ env: fresh }, 'status', mount.mountpoint);
    expect(status.out).toContain(`pdf not shown in _approved: ${reason!}`);
    const json = JSON.parse((await cli({ env: fresh }, 'status', mount.mountpoint, '--json')).out) as { mounts: Array<{ servers: Array<{ approvals?: { notShown?: unknown } }> }> };
    expect(json.mounts[0]!.servers[0]!.approvals?.notShown).toEqual([{ name: 'pdf', path: 'pdf', reason }]);
    await stopMount(mount);

    // Where the locked forms.md is held verified (the first machine's disk cache), pdf is shown and every file reads.
    const held = await mountWithLock(w, 'kept');
    expect(await approvedNames(held)).toEqual(['pdf']);
    expect(await approvedIndex(held)).toEqual(['_approved/team/pdf']);
    const pdf = path.join(held.mountpoint, '_approved', 'team', 'pdf');
    expect((await cat(path.join(pdf, 'SKILL.md'))).stdout).toMatch(/Fills PDF forms/);
    expect((await cat(path.join(pdf, 'forms.md'))).stdout).toBe('Forms: version one.\n');
    expect((await cat(path.join(held.mountpoint, 'team', 'pdf', 'forms.md'))).stdout).toBe('Forms: version two.\n');
    expect(held.log()).not.toMatch(/is not shown in _approved/);
  }, 90_000);
});
