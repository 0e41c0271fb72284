// `skills-mount link` as a user runs it where no FUSE is: the built CLI, skills approved with
// `approve LABEL/SKILL --server ...`, the bytes read from the reference server the command starts
// itself. What it writes into a real root next to a user's own things (never touched), how it
// reports a collision and a root it must refuse, and that a SIGKILL at any moment of an update
// leaves every entry whole and the next run repairs the rest (verify --links then passes).
import { spawn } from 'node:child_process';
import { chmod, lstat, mkdir, readFile, readdir, readlink, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { SKILLS_SERVE } from '../support/http-server.js';
import { writeSkill } from '../support/skill-builder.js';
import { makeTempDir } from '../support/temp-dir.js';

const SKILLS_MOUNT = fileURLToPath(new URL('../../dist/cli/skills-mount.js', import.meta.url));
/** SIGKILLs of a link under way, from its first finished version to its last. */
const ROUNDS = 5;
const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await removeReadOnlyTree(dir);
});

interface World {
  served: string;
  env: NodeJS.ProcessEnv;
  home: string;
  server: string;
}

async function world(skills: number): Promise<World> {
  const dir = await makeTempDir('skills-mount-link-cli-');
  made.push(dir);
  const served = path.join(dir, 'skills');
  for (let i = 0; i < skills; i++) await writeSkill(served, `skill-${i}`, { files: { 'references/x.md': `reference ${i}\n`, 'scripts/run.sh': '#!/bin/sh\necho run\n' } });
  const home = path.join(dir, 'home');
  await mkdir(home, { mode: 0o700 });
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_DATA_HOME: path.join(home, '.local', 'share'), XDG_CACHE_HOME: path.join(home, '.cache') };
  return { served, env, home, server: `docs=${process.execPath} ${SKILLS_SERVE} ${served}` };
}

function cli(at: World, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env: at.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function approveAll(at: World, count: number, ...grants: string[]): Promise<void> {
  const paths = Array.from({ length: count }, (_, i) => `docs/skill-${i}`);
  const result = await cli(at, 'approve', ...paths, '--server', at.server, '--yes', ...grants);
  expect(result.code, result.stderr).toBe(0);
}

describe('skills-mount link, no FUSE', () => {
  it("links approved skills next to a user's own things, which stay as they are; a collision is qualified and reported", async () => {
    const at = await world(3);
    const root = path.join(at.home, '.codex', 'skills');
    await mkdir(path.join(root, 'skill-0'), { recursive: true });
    await writeFile(path.join(root, 'skill-0', 'SKILL.md'), '---\nname: skill-0\ndescription: mine\n---\nmine\n');
    await mkdir(path.join(root, '.system', 'openai'), { recursive: true });
    await writeFile(path.join(root, '.system', 'openai', 'SKILL.md'), 'bundled\n');
    await writeFile(path.join(root, 'skill-1'), 'a file in the way\n');
    await approveAll(at, 2);
    const linked = await cli(at, 'link', 'codex', '--server', at.server);
    expect(linked.code, linked.stderr).toBe(0);
    expect(linked.stdout).toMatch(/docs\/skill-0 is linked as docs-skill-0: the name skill-0 is taken in this root/);
    expect((await readdir(root)).sort()).toEqual(['.system', 'docs-skill-0', 'docs-skill-1', 'skill-0', 'skill-1']);
    expect(await readFile(path.join(root, 'skill-0', 'SKILL.md'), 'utf8')).toContain('mine');
    expect(await readFile(path.join(root, '.system', 'openai', 'SKILL.md'), 'utf8')).toBe('bundled\n');
    expect(await readFile(path.join(root, 'skill-1'), 'utf8')).toBe('a file in the way\n');
    expect((await lstat(path.join(root, 'docs-skill-1', 'scripts', 'run.sh'))).mode & 0o777).toBe(0o444);
    const status = await cli(at, 'status', '--json');
    const links = (JSON.parse(status.stdout) as { links: Array<{ root: string; harnesses: string[]; entries: Array<{ name: string; qualified: boolean }> }> }).links;
    expect(links).toEqual([expect.objectContaining({ root, harnesses: ['codex'], entries: expect.arrayContaining([{ name: 'docs-skill-0', label: 'docs', skillUri: 'skill://skill-0/SKILL.md', qualified: true }]) })]);
    const unlinked = await cli(at, 'unlink', 'codex');
    expect(unlinked.code).toBe(0);
    expect((await readdir(root)).sort()).toEqual(['.system', 'skill-0', 'skill-1']);
  });

  it('a root that is a symbolic link is written through; --grant-exec makes #! files executable; verify --links passes, and names a tampered file', async () => {
    const at = await world(1);
    const real = path.join(at.home, 'dotfiles', 'skills');
    await mkdir(real, { recursive: true });
    await mkdir(path.join(at.home, '.claude'));
    await symlink(real, path.join(at.home, '.claude', 'skills'));
    await approveAll(at, 1, '--grant-exec');
    expect((await cli(at, 'link', 'claude-code', '--server', at.server)).code).toBe(0);
    expect(await readdir(real)).toEqual(['skill-0']);
    expect((await lstat(path.join(real, 'skill-0', 'scripts', 'run.sh'))).mode & 0o777).toBe(0o555);
    expect(await cli(at, 'verify', '--links')).toMatchObject({ code: 0, stdout: expect.stringMatching(/1 linked entry in 1 root, 3 files: verified/) });
    const file = path.join(await readlink(path.join(real, 'skill-0')), 'references', 'x.md');
    await chmod(path.dirname(file), 0o755);
    await chmod(file, 0o644);
    await writeFile(file, 'changed\n');
    const verified = await cli(at, 'verify', '--links');
    expect(verified.code).toBe(1);
    expect(verified.stdout).toMatch(/skill-0: references\/x\.md: hashes to sha256:\w+, approved sha256:/);
  });

  it('run again with no mount, link judges what it linked against the server: a skill changed since its approval is revoked and its entry removed', async () => {
    const at = await world(2);
    const root = path.join(at.home, '.claude', 'skills');
    await approveAll(at, 2);
    expect((await cli(at, 'link', 'claude-code', '--server', at.server)).code).toBe(0);
    expect((await readdir(root)).sort()).toEqual(['skill-0', 'skill-1']);
    // The server changes one file of skill-0 (a new version nobody approved).
    await writeFile(path.join(at.served, 'skill-0', 'references', 'x.md'), 'changed on the server\n');
    const again = await cli(at, 'link', 'claude-code', '--server', at.server);
    expect(again.stderr).toMatch(/\[docs\] approval of skill:\/\/skill-0\/SKILL\.md revoked/);
    expect(await readdir(root)).toEqual(['skill-1']);
    const approvals = JSON.parse((await cli(at, 'approvals', '--json')).stdout) as { approvals: Array<{ name: string; revokedAt: string | null }> };
    expect(approvals.approvals.map((approval) => [approval.name, approval.revokedAt !== null])).toEqual([
      ['skill-0', true],
      ['skill-1', false],
    ]);
    expect((await cli(at, 'verify', '--links')).code).toBe(0);
  });

  it('a root another user can write is refused (exit 1, the reason), and nothing is written there', async () => {
    const at = await world(1);
    const project = path.join(at.home, 'project');
    await mkdir(path.join(project, '.gemini', 'skills'), { recursive: true });
    await chmod(path.join(project, '.gemini', 'skills'), 0o777);
    await approveAll(at, 1);
    const linked = await cli(at, 'link', 'gemini', '--project', project, '--server', at.server);
    expect(linked.code).toBe(1);
    expect(linked.stdout).toMatch(/can be written by other users \(mode 0777\); refusing to write there/);
    expect(await readdir(path.join(project, '.gemini', 'skills'))).toEqual([]);
  });

  it('SIGKILL at any moment of an update leaves every entry whole; the next run repairs the rest', async () => {
    const skills = 40;
    const at = await world(skills);
    await approveAll(at, skills);
    const root = path.join(at.home, '.claude', 'skills');
    const store = path.join(at.home, '.local', 'share', 'skills-mount', 'links');
    const objects = path.join(store, 'objects');
    const landed: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // The kill lands when the store holds this many finished versions: from the first to the
      // last, so it falls mid-build and, at the end, among the entries being placed.
      const killAt = Math.max(1, Math.round((skills * round) / (ROUNDS - 1)));
      const child = spawn(process.execPath, [SKILLS_MOUNT, 'link', 'claude-code', '--server', at.server], { env: at.env, stdio: 'ignore' });
      const closed = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
      let exited = false;
      void closed.then(() => (exited = true));
      let built = 0;
      while (!exited && built < killAt) {
        built = await versionsIn(objects);
        if (built < killAt) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      child.kill('SIGKILL');
      const signal = await closed;
      const entries = await readdir(root).catch(() => [] as string[]);
      landed.push(`${signal === 'SIGKILL' ? 'killed' : 'finished'} at ${built} built, ${entries.length} linked`);
      // Whatever is in the root now is whole: a link to a complete version, nothing half made.
      for (const name of entries) {
        const target = await readlink(path.join(root, name));
        expect(JSON.parse(await readFile(path.join(path.dirname(target), 'entry.json'), 'utf8'))).toMatchObject({ entryName: name });
        expect(await readFile(path.join(target, 'SKILL.md'), 'utf8')).toContain(`\nname: ${name}\n`);
      }
      // And its half-finished work is gone at the next run.
      const done = await cli(at, 'link', 'claude-code', '--server', at.server);
      expect(done.code, done.stderr).toBe(0);
      expect((await readdir(root)).length).toBe(skills);
      expect((await readdir(objects)).filter((name) => name.startsWith('.build-'))).toEqual([]);
      expect((await cli(at, 'verify', '--links')).code).toBe(0);
      expect((await cli(at, 'unlink', 'claude-code')).code).toBe(0);
      // A cold store for the next round: every version built again, so the kill lands mid-work.
      await removeReadOnlyTree(store);
    }
    // The kills did land mid-update (or the test proves nothing): the early rounds die with part
    // of the versions built.
    const midBuild = landed.filter((round) => /^killed at (\d+) built/.test(round) && Number(/at (\d+)/.exec(round)![1]) < skills);
    expect(midBuild.length, `each round: ${landed.join('; ')}`).toBeGreaterThanOrEqual(2);
  }, 240_000);
});

/** Finished versions in a store's objects folder: `<label>/<hash>` folders (builds are `.build-*`). */
async function versionsIn(objects: string): Promise<number> {
  const labels = (await readdir(objects).catch(() => [] as string[])).filter((name) => !name.startsWith('.'));
  const hashes = await Promise.all(labels.map((label) => readdir(path.join(objects, label)).catch(() => [] as string[])));
  return hashes.reduce((sum, names) => sum + names.length, 0);
}
