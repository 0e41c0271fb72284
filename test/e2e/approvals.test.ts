// Content-bound approval through real mounts (SEP-2640 Security Considerations): a person
// approves a skill as the mount shows it, with `skills-mount approve`; the agent path
// MOUNT/_approved/<label>/ holds exactly the approved skills while their files are the ones
// approved; any change takes a skill out, shown as "changed since approval"; dynamic and
// index-generation skills cannot be approved; nested skills need their own approval.
import { spawn } from 'node:child_process';
import { appendFile, cp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Terminal, shellQuote } from '../support/cli-tmux.js';
import { exitOf } from '../support/children.js';
import { run } from '../support/fuse-harness.js';
import { hostileEntry, hostileSkill } from '../support/hostile-scenario.js';
import { REPO, SKILLS_MOUNT, makeTestDir, serveEntry, startMount, type RunningMount } from '../support/mount-harness.js';
import { ApprovalStore } from '../../src/approvals/approval-store.js';
import { freePort } from '../support/http-server.js';
import { pollUntil } from '../support/poll.js';
import { requireFuse } from '../support/require-fuse.js';
import { writeSkill } from '../support/skill-builder.js';

requireFuse();

interface Fixture {
  dir: string;
  env: NodeJS.ProcessEnv;
  mount: RunningMount;
}

const mounts: RunningMount[] = [];
afterEach(async () => {
  for (const mount of mounts.splice(0)) await mount.stop();
});

/** A mount of one skills-serve per label, each on its own copy of the skills; approvals in DIR/config. */
async function start(servers: Record<string, string>, args: string[] = [], dir?: string): Promise<Fixture> {
  const testDir = dir ?? (await makeTestDir());
  const env = { ...process.env, XDG_CONFIG_HOME: path.join(testDir, 'config') };
  const config = Object.fromEntries(Object.entries(servers).map(([label, root]) => [label, serveEntry(root)]));
  const mount = await startMount({ dir: testDir, config, args, env });
  mounts.push(mount);
  return { dir: testDir, env, mount };
}

async function twoSkills(dir: string): Promise<string> {
  const root = path.join(dir, 'skills');
  await writeSkill(root, 'guide', { description: 'House style guide', files: { 'references/tone.md': 'Be brief.\n', 'templates/note.md': 'Dear {{name}},\n' } });
  await writeSkill(root, 'other', { description: 'Not approved' });
  return root;
}

function cli(fixture: Pick<Fixture, 'env'>, ...args: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env: fixture.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    void exitOf(child).then((exit) => resolve({ code: exit.code, stdout, stderr }));
  });
}

/** Every path under the approved view of `label`, relative to it, sorted. */
async function approvedTree(fixture: Fixture, label: string): Promise<string[]> {
  const root = path.join(fixture.mount.mountpoint, '_approved', label);
  const { stdout } = await run('find', [root, '-mindepth', '1']);
  return stdout.split('\n').filter(Boolean).map((line) => path.relative(root, line)).sort();
}

async function readJson(file: string) {
  const { stdout, code, stderr } = await run('cat', [file]);
  if (code !== 0) throw new Error(`cat ${file}: ${stderr}`);
  return JSON.parse(stdout);
}

async function skillEntry(fixture: Fixture, label: string, name: string) {
  const document = await readJson(path.join(fixture.mount.mountpoint, 'skills.json'));
  return document.servers.find((server: { label: string }) => server.label === label).skills.find((skill: { name: string }) => skill.name === name);
}

async function approvedSkills(fixture: Fixture, label: string): Promise<Array<Record<string, unknown>>> {
  const document = await readJson(path.join(fixture.mount.mountpoint, '_approved', 'skills.json'));
  return document.servers.find((server: { label: string }) => server.label === label).skills;
}

/** Polls until `accept` holds (the mount re-lists within a second or two of a change; skills.json is at most a second old). */
function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string): Promise<T> {
  return pollUntil(read, accept, { timeoutMs: 15_000, intervalMs: 100, timeoutError: (last) => new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`) });
}

const GUIDE_TREE = ['guide', 'guide/SKILL.md', 'guide/references', 'guide/references/tone.md', 'guide/templates', 'guide/templates/note.md'];

describe('approve and the approved view', () => {
  it('shows exactly the approved skill; a changed, added or removed file takes it out until it is approved again', async () => {
    const dir = await makeTestDir();
    const skills = await twoSkills(dir);
    const fixture = await start({ docs: skills }, [], dir);
    const guide = path.join(fixture.mount.mountpoint, 'docs', 'guide');
    expect(await approvedTree(fixture, 'docs')).toEqual([]);

    const approved = await cli(fixture, 'approve', guide, '--yes');
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    // What a person judges: the URI, every file with size and digest, no nested skills.
    expect(approved.stdout).toContain('skill://guide/SKILL.md');
    expect(approved.stdout).toMatch(/references\/tone\.md\s+10 B\s+sha256:[0-9a-f]{64}/);
    expect(approved.stdout).toMatch(/nested\s+none/);
    expect(approved.stdout).toContain(`approved docs/guide: now in ${path.join(fixture.mount.mountpoint, '_approved', 'docs', 'guide')}`);
    expect(await approvedTree(fixture, 'docs')).toEqual(GUIDE_TREE);
    expect((await run('cat', [path.join(fixture.mount.mountpoint, '_approved', 'docs', 'guide', 'references', 'tone.md')])).stdout).toBe('Be brief.\n');
    await eventually(() => approvedSkills(fixture, 'docs'), (listed) => listed.map((skill) => skill.name).join() === 'guide', 'the approved skills.json to list guide');
    expect(await skillEntry(fixture, 'docs', 'guide')).toMatchObject({ approval: { state: 'approved', allowedToolsApproved: false } });
    expect(await skillEntry(fixture, 'docs', 'other')).not.toHaveProperty('approval');

    const changes: Array<{ change: 'changed' | 'added' | 'removed'; file: string; make: () => Promise<void> }> = [
      { change: 'changed', file: 'guide/references/tone.md', make: () => appendFile(path.join(skills, 'guide', 'references', 'tone.md'), 'Be kind.\n') },
      { change: 'added', file: 'guide/references/extra.md', make: () => appendFile(path.join(skills, 'guide', 'references', 'extra.md'), 'new\n') },
      { change: 'removed', file: 'guide/templates/note.md', make: () => rm(path.join(skills, 'guide', 'templates', 'note.md')) },
    ];
    for (const { change, file, make } of changes) {
      await make();
      // The server sees the change and says so; the mount re-lists, and the skill leaves the agent path.
      await eventually(() => approvedTree(fixture, 'docs'), (tree) => tree.length === 0, 'the skill to leave the approved view');
      const entry = await eventually(() => skillEntry(fixture, 'docs', 'guide'), (skill) => skill.approval.state !== 'approved', 'skills.json to show the change');
      expect(entry.approval.state).toBe('changed-since-approval');
      expect(entry.approval.differing).toEqual([expect.objectContaining({ change, uri: `skill://${file}` })]);
      const status = await cli(fixture, 'status', fixture.mount.mountpoint);
      expect(status.stdout).toContain(`changed since approval: guide (${file} ${change})`);
      await eventually(() => approvedSkills(fixture, 'docs'), (listed) => listed.length === 0, 'the approved skills.json to drop guide');

      const again = await cli(fixture, 'approve', guide, '--yes');
      expect(again.stdout).toContain(`changed since approval on`);
      expect(again.stdout).toContain(`${file} ${change}`);
      expect(again.code).toBe(0);
      expect(await approvedTree(fixture, 'docs')).toContain(change === 'removed' ? 'guide/references/extra.md' : file);
      await eventually(() => skillEntry(fixture, 'docs', 'guide'), (skill) => skill.approval.state === 'approved', 'skills.json to show the approval');
    }
    expect(await approvedTree(fixture, 'docs')).toEqual(['guide', 'guide/SKILL.md', 'guide/references', 'guide/references/extra.md', 'guide/references/tone.md']);
  });

  it('a server that goes back to the approved files does not get its approval back: a later entry revoked it', async () => {
    const dir = await makeTestDir();
    const skills = await twoSkills(dir);
    const fixture = await start({ docs: skills }, [], dir);
    const guide = path.join(fixture.mount.mountpoint, 'docs', 'guide');
    expect((await cli(fixture, 'approve', guide, '--yes')).code).toBe(0);
    const tone = path.join(skills, 'guide', 'references', 'tone.md');
    await writeFile(tone, 'Be kind.\n');
    await eventually(() => approvedTree(fixture, 'docs'), (tree) => tree.length === 0, 'the skill to leave the approved view');
    await writeFile(tone, 'Be brief.\n');
    const entry = await eventually(() => skillEntry(fixture, 'docs', 'guide'), (skill) => skill.approval.differing?.length === 0, 'the set to be back');
    expect(entry.approval).toMatchObject({ state: 'changed-since-approval', revokedAt: expect.any(String) });
    expect(await approvedTree(fixture, 'docs')).toEqual([]);
    expect((await cli(fixture, 'status', fixture.mount.mountpoint)).stdout).toContain('changed since approval: guide (changed and back)');
    expect((await cli(fixture, 'approve', guide, '--yes')).stdout).toContain('the server changed it and went back to the approved files');
    expect(await approvedTree(fixture, 'docs')).toEqual(GUIDE_TREE);
  });

  it('an open handle in the approved view keeps the approved bytes after the file changes on the server', async () => {
    const dir = await makeTestDir();
    const skills = await twoSkills(dir);
    const fixture = await start({ docs: skills }, [], dir);
    expect((await cli(fixture, 'approve', path.join(fixture.mount.mountpoint, 'docs', 'guide'), '--yes')).code).toBe(0);
    const file = path.join(fixture.mount.mountpoint, '_approved', 'docs', 'guide', 'references', 'tone.md');
    // Opens the file, says so, and reads it only when told to.
    const reader = spawn(process.execPath, ['-e', `const fs=require('fs');const fd=fs.openSync(${JSON.stringify(file)},'r');process.stdout.write('open\\n');process.stdin.once('data',()=>{process.stdout.write(fs.readFileSync(fd,'utf8'));process.exit(0)})`], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let output = '';
    reader.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await eventually(async () => output, (text) => text === 'open\n', 'the reader to open the file');
    await appendFile(path.join(skills, 'guide', 'references', 'tone.md'), 'Be kind.\n');
    await eventually(() => approvedTree(fixture, 'docs'), (tree) => tree.length === 0, 'the skill to leave the approved view');
    reader.stdin.write('go\n');
    await exitOf(reader);
    expect(output).toBe('open\nBe brief.\n');
    // A new open is refused: the file is no longer in the approved view.
    const reopened = await run('cat', [file]);
    expect(reopened.code).not.toBe(0);
  });

  it('a verification failure that brings a refreshed entry takes the skill out: the new bytes are never served there', async () => {
    const dir = await makeTestDir();
    const skillMd = { text: '---\nname: rotated\ndescription: Rotated since the listing\n---\n# rotated\n' };
    // The listing vouches for "old", the server now serves "new", and skills/get says so.
    const scenario = {
      listing: true,
      skills: [
        {
          uri: 'skill://rotated/SKILL.md',
          frontmatter: { name: 'rotated', description: 'Rotated since the listing' },
          files: { 'skill://rotated/SKILL.md': skillMd, 'skill://rotated/ref.md': { text: 'new\n', listedText: 'old\n' } },
          getFiles: { 'skill://rotated/SKILL.md': skillMd, 'skill://rotated/ref.md': { text: 'new\n' } },
        },
      ],
    };
    const file = path.join(dir, 'rotated.json');
    await writeFile(file, JSON.stringify(scenario));
    const env = { ...process.env, XDG_CONFIG_HOME: path.join(dir, 'config') };
    const mount = await startMount({ dir, env, config: { srv: { command: process.execPath, args: [path.join(REPO, 'test', 'support', 'scripted-server.mjs'), file] } } });
    mounts.push(mount);
    const fixture = { dir, env, mount };
    expect((await cli(fixture, 'approve', path.join(mount.mountpoint, 'srv', 'rotated'), '--yes')).code).toBe(0);
    const read = await run('cat', [path.join(mount.mountpoint, '_approved', 'srv', 'rotated', 'ref.md')]);
    expect(read.code).not.toBe(0);
    expect(read.stdout).toBe('');
    expect(read.stderr).toMatch(/Input\/output error/);
    expect(await approvedTree(fixture, 'srv')).toEqual([]);
    const entry = await eventually(() => skillEntry(fixture, 'srv', 'rotated'), (skill) => skill.approval.state !== 'approved', 'skills.json to show the change');
    expect(entry.approval).toMatchObject({ state: 'changed-since-approval', differing: [{ uri: 'skill://rotated/ref.md', change: 'changed', path: 'rotated/ref.md' }] });
  });

  it('approvals survive a daemon restart, and revoke takes the skill out', async () => {
    const dir = await makeTestDir();
    const skills = await twoSkills(dir);
    const first = await start({ docs: skills }, [], dir);
    expect((await cli(first, 'approve', path.join(first.mount.mountpoint, 'docs', 'guide'), '--yes')).code).toBe(0);
    await first.mount.stop();
    mounts.splice(mounts.indexOf(first.mount), 1);

    const second = await start({ docs: skills }, [], dir);
    expect(await approvedTree(second, 'docs')).toEqual(GUIDE_TREE);
    const listed = await cli(second, 'approvals');
    expect(listed.stdout).toMatch(/docs\s+guide\s+3\s+\S+\s+-\s+no\s+skill:\/\/guide\/SKILL\.md/);

    const revoked = await cli(second, 'revoke', path.join(second.mount.mountpoint, '_approved', 'docs', 'guide'));
    expect(revoked.stdout).toContain('revoked docs/guide');
    expect(revoked.code).toBe(0);
    expect(await approvedTree(second, 'docs')).toEqual([]);
    expect(JSON.parse((await cli(second, 'approvals', '--json')).stdout).approvals).toEqual([]);
    const again = await cli(second, 'revoke', path.join(second.mount.mountpoint, 'docs', 'guide'));
    expect(again.stdout).toContain('docs/guide has no approval');
    expect(again.code).toBe(1);
  });

  it('the kernel holds the approved view for long, and a revocation written by another process reaches it at once', async () => {
    const dir = await makeTestDir();
    const skills = await twoSkills(dir);
    const port = await freePort();
    const fixture = await start({ docs: skills }, ['--metrics', `127.0.0.1:${port}`], dir);
    expect((await cli(fixture, 'approve', path.join(fixture.mount.mountpoint, 'docs', 'guide'), '--yes')).code).toBe(0);
    const file = path.join(fixture.mount.mountpoint, '_approved', 'docs', 'guide', 'references', 'tone.md');
    expect((await run('cat', [file])).stdout).toBe('Be brief.\n');
    const lookups = async () => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      return [...text.matchAll(/^skills_mount_fuse_operations_total\{op="lookup",[^}]*\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
    };
    // Past the one second the approved view was held for when its changes were seen only on access.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const before = await lookups();
    expect((await run('cat', [file])).stdout).toBe('Be brief.\n');
    expect(await lookups()).toBe(before);

    // Revoked by another process, with no access to the mount: the daemon's watch reads it and tells the kernel.
    const store = await ApprovalStore.load(path.join(fixture.env['XDG_CONFIG_HOME']!, 'skills-mount', 'approvals.json'));
    expect(await store.revoke('docs', 'skill://guide/SKILL.md')).toBe(true);
    const revokedAt = Date.now();
    await pollUntil(() => run('test', ['-e', file]).then((result) => result.code), (code) => code !== 0, { timeoutMs: 2_000, intervalMs: 20, timeoutError: () => new Error('the revoked file is still in the approved view after 2 s') });
    // Well within the second a kernel timeout would have taken.
    expect(Date.now() - revokedAt).toBeLessThan(900);
    expect(await approvedTree(fixture, 'docs')).toEqual([]);
  });

  it('a dynamic skill and an index-generation skill cannot be approved, and nothing is stored', async () => {
    const dir = await makeTestDir();
    const indexed = path.join(dir, 'indexed');
    await writeSkill(indexed, 'plain');
    const live = hostileSkill('live', 'Generated per read', { 'data.txt': { text: 'generated\n' } }, { dynamic: true });
    const env = { ...process.env, XDG_CONFIG_HOME: path.join(dir, 'config') };
    const mount = await startMount({
      dir,
      env,
      config: { srv: await hostileEntry(dir, 'srv', { listing: true, skills: [live] }), idx: { ...serveEntry(indexed, '--protocol', 'index') } },
    });
    mounts.push(mount);
    const dynamic = await cli({ env }, 'approve', path.join(mount.mountpoint, 'srv', 'live'), '--yes');
    expect(dynamic.code).toBe(1);
    expect(dynamic.stdout).toContain('cannot be approved: its resources are "dynamic"');
    const index = await cli({ env }, 'approve', path.join(mount.mountpoint, 'idx', 'plain'), '--yes');
    expect(index.code).toBe(1);
    expect(index.stdout).toContain('cannot be approved: it comes from skill://index.json');
    expect(JSON.parse((await cli({ env }, 'approvals', '--json')).stdout).approvals).toEqual([]);
    const missing = await cli({ env }, 'approve', path.join(mount.mountpoint, 'srv', 'nothing-here'), '--yes');
    expect(missing.stdout).toContain('srv holds no skill at nothing-here');
  });

  it('a nested skill is not approved with its parent: its files are the parent\'s supporting content, its own approval lists it', async () => {
    const dir = await makeTestDir();
    const root = path.join(dir, 'skills');
    await writeSkill(root, 'parent', { files: { 'notes.md': 'parent notes\n' } });
    await writeSkill(root, 'parent/child', { files: { 'ref.md': 'child ref\n' } });
    const fixture = await start({ docs: root }, [], dir);
    const shown = await cli(fixture, 'approve', path.join(fixture.mount.mountpoint, 'docs', 'parent'), '--yes');
    expect(shown.stdout).toMatch(/nested\s+parent\/child \(each needs its own approval\)/);
    await eventually(() => approvedSkills(fixture, 'docs'), (listed) => listed.map((skill) => skill.path).join() === '_approved/docs/parent', 'the parent alone');
    expect(await approvedTree(fixture, 'docs')).toEqual(['parent', 'parent/SKILL.md', 'parent/child', 'parent/child/SKILL.md', 'parent/child/ref.md', 'parent/notes.md']);
    expect(await skillEntry(fixture, 'docs', 'child')).not.toHaveProperty('approval');

    expect((await cli(fixture, 'approve', path.join(fixture.mount.mountpoint, 'docs', 'parent', 'child'), '--yes')).code).toBe(0);
    await eventually(() => approvedSkills(fixture, 'docs'), (listed) => listed.map((skill) => skill.path).join() === '_approved/docs/parent,_approved/docs/parent/child', 'the child listed after its own approval');
  });

  it('two servers serving the same URI are approved separately', async () => {
    const dir = await makeTestDir();
    const skills = await twoSkills(dir);
    const copy = path.join(dir, 'copy');
    await cp(skills, copy, { recursive: true });
    const fixture = await start({ one: skills, two: copy }, [], dir);
    expect((await cli(fixture, 'approve', path.join(fixture.mount.mountpoint, 'one', 'guide'), '--yes')).code).toBe(0);
    expect(await approvedTree(fixture, 'one')).toEqual(GUIDE_TREE);
    expect(await approvedTree(fixture, 'two')).toEqual([]);
    expect(await skillEntry(fixture, 'two', 'guide')).not.toHaveProperty('approval');
    // Approving with another config directory than the daemon's would change nothing: refused, naming both files.
    const elsewhere = await cli({ env: { ...fixture.env, XDG_CONFIG_HOME: path.join(dir, 'elsewhere') } }, 'approve', path.join(fixture.mount.mountpoint, 'two', 'guide'), '--yes');
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stdout).toContain(`reads approvals from ${path.join(dir, 'config', 'skills-mount', 'approvals.json')}, and this command writes ${path.join(dir, 'elsewhere', 'skills-mount', 'approvals.json')}`);
  });

  it('--approved-only and "approvedOnly" serve a server only in the approved view; approve still works by path', async () => {
    const dir = await makeTestDir();
    const skills = await twoSkills(dir);
    const copy = path.join(dir, 'copy');
    await cp(skills, copy, { recursive: true });
    const env = { ...process.env, XDG_CONFIG_HOME: path.join(dir, 'config') };
    const mount = await startMount({ dir, env, args: ['--approved-only', 'flagged'], config: { flagged: serveEntry(skills), configured: { ...serveEntry(copy), approvedOnly: true } } });
    mounts.push(mount);
    const fixture = { dir, env, mount };
    expect((await run('ls', [mount.mountpoint])).stdout.split('\n').filter(Boolean)).toEqual(['_approved', 'skills.json', 'status.json']);
    for (const label of ['flagged', 'configured']) {
      const hidden = await run('cat', [path.join(mount.mountpoint, label, 'guide', 'SKILL.md')]);
      expect(hidden.stderr).toMatch(/No such file or directory/);
      expect((await cli(fixture, 'approve', path.join(mount.mountpoint, label, 'guide'), '--yes')).code).toBe(0);
      expect(await approvedTree(fixture, label)).toEqual(GUIDE_TREE);
    }
  });
});

describe('the approve prompt', () => {
  let terminal: Terminal | undefined;
  afterEach(async () => {
    await terminal?.close();
    terminal = undefined;
  });

  it('on a terminal, calls out allowed-tools and asks for the grant separately; without one it needs --yes', async () => {
    const dir = await makeTestDir();
    const root = path.join(dir, 'skills');
    await writeSkill(root, 'tooling', { description: 'Runs git for you', extraFrontmatter: 'allowed-tools: Bash(git:*) Read\n' });
    await writeSkill(root, 'granted', { extraFrontmatter: 'allowed-tools: Read\n' });
    const fixture = await start({ docs: root }, [], dir);
    const tooling = path.join(fixture.mount.mountpoint, 'docs', 'tooling');

    const noTerminal = await cli(fixture, 'approve', tooling);
    expect(noTerminal.code).toBe(2);
    expect(noTerminal.stderr).toContain('pass --yes');

    terminal = await Terminal.open({ XDG_CONFIG_HOME: fixture.env.XDG_CONFIG_HOME! });
    await terminal.type(`${shellQuote(process.execPath)} ${shellQuote(SKILLS_MOUNT)} approve ${shellQuote(tooling)}`);
    const asked = await terminal.waitFor(/Approve docs\/tooling as shown above\? \[y\/N\] $/m);
    expect(asked).toContain('! allowed-tools: Bash(git:*) Read  (widens the tools an agent may use; granted only if you say so)');
    expect(asked).toContain('description  Runs git for you');
    await terminal.type('y');
    await terminal.waitFor(/Also grant its allowed-tools \(Bash\(git:\*\) Read\)\? \[y\/N\] $/m);
    await terminal.type('n');
    await terminal.waitFor(/approved docs\/tooling \(allowed-tools not granted\): now in /);

    expect((await cli(fixture, 'approve', path.join(fixture.mount.mountpoint, 'docs', 'granted'), '--yes', '--grant-allowed-tools')).code).toBe(0);
    const listed = await eventually(() => approvedSkills(fixture, 'docs'), (skills) => skills.length === 2, 'both skills listed');
    const bySkill = Object.fromEntries(listed.map((skill) => [skill.name, skill]));
    expect(bySkill.tooling).toMatchObject({ allowedTools: 'Bash(git:*) Read', allowedToolsApproved: false });
    expect(bySkill.granted).toMatchObject({ allowedTools: 'Read', allowedToolsApproved: true });
  });
});
