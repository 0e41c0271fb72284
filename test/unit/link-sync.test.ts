// skills-mount link's core against real folders (no harness, no server): what it puts in a skills
// root (one read-only entry per approved skill, named for the skill, its SKILL.md transformed as
// docs/agents.md says and every other byte the approved one), what it never touches (a user's own
// skills, Codex's .system, a file in the way), what it refuses (a root others control), how it
// keeps up (revocation, re-approval, grants), and how it recovers from a crash mid-update.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, readdir, readlink, realpath, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Approval } from '../../src/approvals/approval-store.js';
import { resourcesDigest } from '../../src/catalog/resources-digest.js';
import { parseFrontmatter } from '../../src/format/frontmatter.js';
import { OBJECTS_DIR } from '../../src/link/entry-objects.js';
import { readLinkState } from '../../src/link/link-state.js';
import { RETAIN_REPLACED_MS, syncLinks, type ContentSource, type RootRequest, type SyncOptions } from '../../src/link/link-sync.js';
import { verifyLinks } from '../../src/link/link-verify.js';
import { removeReadOnlyTree } from '../../src/read-only-tree.js';
import { makeTempDir } from '../support/temp-dir.js';

const digest = (bytes: Buffer | string) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** A server's skills as approvals plus the bytes a content source hands out. */
class Served implements ContentSource {
  readonly bytes = new Map<string, Buffer>();
  readonly labels = new Set<string>();
  reads = 0;

  skill(label: string, dir: string, files: Record<string, string>, options: { name?: string; grants?: Partial<Pick<Approval, 'allowedToolsApproved' | 'execApproved'>>; approvedAt?: string } = {}): Approval {
    this.labels.add(label);
    const resources = Object.entries(files).map(([relative, text]) => {
      const uri = `skill://${dir}/${relative}`;
      this.bytes.set(`${label} ${uri}`, Buffer.from(text));
      return { uri, digest: digest(text), sizeBytes: Buffer.byteLength(text) };
    });
    const sorted = resources.sort((a, b) => (a.uri < b.uri ? -1 : 1));
    const allowedTools = /allowed-tools: (.*)/.exec(files['SKILL.md'] ?? '')?.[1] ?? null;
    return {
      label,
      skillUri: `skill://${dir}/SKILL.md`,
      name: options.name ?? path.basename(dir),
      resources: sorted,
      resourcesDigest: resourcesDigest(sorted),
      approvedAt: options.approvedAt ?? '2026-12-01T10:00:00.000Z',
      allowedToolsApproved: (options.grants?.allowedToolsApproved ?? false) && allowedTools !== null,
      allowedTools,
      execApproved: options.grants?.execApproved ?? false,
      revokedAt: null,
    };
  }

  serves(label: string): boolean {
    return this.labels.has(label);
  }

  missing(label: string): string {
    return `nothing serves ${label}`;
  }

  async read(approval: Approval, file: { uri: string }): Promise<Buffer | undefined> {
    this.reads += 1;
    return this.bytes.get(`${approval.label} ${file.uri}`);
  }
}

const skillMd = (name: string, extra = '') => `---\nname: ${name}\ndescription: Does ${name} things\n${extra}---\n# ${name}\n\nSee references/guide.md.\n`;

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await removeReadOnlyTree(dir);
});

async function setUp() {
  const dir = await makeTempDir('skills-mount-link-');
  made.push(dir);
  const home = path.join(dir, 'home');
  await mkdir(home, { mode: 0o700 });
  const store = path.join(home, '.local', 'share', 'skills-mount', 'links');
  const root = path.join(home, '.claude', 'skills');
  const served = new Served();
  const request: RootRequest = { root, harness: 'claude-code', scope: 'user' };
  const logs: string[] = [];
  const sync = (approvals: Approval[], extra: Pick<SyncOptions, 'link' | 'unlink' | 'now' | 'lockedApprovals'> = {}) =>
    syncLinks({ store, approvals, content: served, log: (line) => logs.push(line), ...extra });
  return { dir, home, store, root, served, request, sync, logs };
}

describe('link: what goes into a skills root', () => {
  it('one read-only entry per approved skill, named for it, pointing into the store; SKILL.md transformed as documented, every other byte the approved one', async () => {
    const { root, store, served, request, sync } = await setUp();
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf', 'allowed-tools: Bash(git:*)\nhooks:\n  PreToolUse: []\nmetadata:\n  author: someone\n'), 'references/guide.md': 'guide\n', 'scripts/run.sh': '#!/bin/sh\necho run\n' });
    const [report] = await sync([pdf], { link: [request] });
    expect(report).toMatchObject({ added: ['pdf'], removed: [], problems: [] });
    expect(await readdir(root)).toEqual(['pdf']);
    const entry = path.join(root, 'pdf');
    expect((await lstat(entry)).isSymbolicLink()).toBe(true);
    // The server's label is part of the path where its content lies (SEP-2640).
    expect(await readlink(entry)).toMatch(new RegExp(`^${store}/${OBJECTS_DIR}/docs/[0-9a-f]{64}/skill$`));
    expect(await readFile(path.join(entry, 'references', 'guide.md'), 'utf8')).toBe('guide\n');
    expect((await stat(path.join(entry, 'references', 'guide.md'))).mode & 0o777).toBe(0o444);
    expect((await stat(path.join(entry, 'scripts', 'run.sh'))).mode & 0o777).toBe(0o444);
    expect((await stat(path.join(entry, 'scripts'))).mode & 0o777).toBe(0o555);
    const text = await readFile(path.join(entry, 'SKILL.md'), 'utf8');
    expect(parseFrontmatter(text)).toEqual({
      name: 'pdf',
      description: '[from MCP server docs] Does pdf things',
      metadata: { author: 'someone', 'skills-mount-server': 'docs', 'skills-mount-uri': 'skill://pdf/SKILL.md' },
    });
    expect(text.endsWith('---\n# pdf\n\nSee references/guide.md.\n')).toBe(true);
  });

  it('allowed-tools only when the approval granted it; hooks never; #! files executable only with the exec grant', async () => {
    const { root, served, request, sync } = await setUp();
    const granted = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf', 'allowed-tools: Bash(git:*)\nhooks: {}\n'), 'scripts/run.sh': '#!/bin/sh\necho run\n', 'scripts/data.txt': 'not a script\n' }, { grants: { allowedToolsApproved: true, execApproved: true } });
    await sync([granted], { link: [request] });
    const frontmatter = parseFrontmatter(await readFile(path.join(root, 'pdf', 'SKILL.md'), 'utf8'));
    expect(frontmatter['allowed-tools']).toBe('Bash(git:*)');
    expect(frontmatter['hooks']).toBeUndefined();
    expect((await stat(path.join(root, 'pdf', 'scripts', 'run.sh'))).mode & 0o777).toBe(0o555);
    expect((await stat(path.join(root, 'pdf', 'scripts', 'data.txt'))).mode & 0o777).toBe(0o444);
  });

  it('never touches what is not its own: a user skill of the same name stays and the linked one is qualified; Codex .system and a file in the way stay', async () => {
    const { root, served, request, sync } = await setUp();
    await mkdir(path.join(root, 'pdf'), { recursive: true });
    await writeFile(path.join(root, 'pdf', 'SKILL.md'), skillMd('pdf'));
    await mkdir(path.join(root, '.system', 'bundled'), { recursive: true });
    await writeFile(path.join(root, '.system', 'bundled', 'SKILL.md'), skillMd('bundled'));
    await writeFile(path.join(root, 'notes'), 'a file in the way\n');
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf') });
    const notes = served.skill('docs', 'notes', { 'SKILL.md': skillMd('notes') });
    const [report] = await sync([pdf, notes], { link: [request] });
    expect(report!.added.sort()).toEqual(['docs-notes', 'docs-pdf']);
    expect(report!.problems.join('\n')).toMatch(/docs\/pdf is linked as docs-pdf: the name pdf is taken/);
    expect((await readdir(root)).sort()).toEqual(['.system', 'docs-notes', 'docs-pdf', 'notes', 'pdf']);
    expect(await readFile(path.join(root, 'pdf', 'SKILL.md'), 'utf8')).toBe(skillMd('pdf'));
    expect(await readFile(path.join(root, 'notes'), 'utf8')).toBe('a file in the way\n');
    // The entry says its own folder's name (a harness lists it by either).
    expect(parseFrontmatter(await readFile(path.join(root, 'docs-pdf', 'SKILL.md'), 'utf8'))['name']).toBe('docs-pdf');
  });

  it('two servers with a skill of one name: both qualified; a nested skill: its own entry, its SKILL.md not inside the outer one', async () => {
    const { root, served, request, sync } = await setUp();
    const a = served.skill('alpha', 'pdf', { 'SKILL.md': skillMd('pdf'), 'forms/SKILL.md': skillMd('forms'), 'forms/ref.md': 'ref\n' });
    const b = served.skill('beta', 'tools/pdf', { 'SKILL.md': skillMd('pdf') }, { name: 'pdf' });
    const nested = served.skill('alpha', 'pdf/forms', { 'SKILL.md': skillMd('forms'), 'ref.md': 'ref\n' });
    await sync([a, b, nested], { link: [request] });
    expect((await readdir(root)).sort()).toEqual(['alpha-pdf', 'beta-pdf', 'forms']);
    expect((await readdir(path.join(root, 'alpha-pdf', 'forms'))).sort()).toEqual(['ref.md']);
  });

  it('a root that is a symbolic link is written through; a root others can write is refused and left as it is', async () => {
    const { dir, root, served, request, sync } = await setUp();
    const real = path.join(dir, 'dotfiles-skills');
    await mkdir(real, { mode: 0o700 });
    await mkdir(path.dirname(root), { recursive: true });
    await symlink(real, root);
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf') });
    await sync([pdf], { link: [request] });
    expect(await readdir(real)).toEqual(['pdf']);
    await chmod(real, 0o777);
    const other = served.skill('docs', 'other', { 'SKILL.md': skillMd('other') });
    const [report] = await sync([pdf, other]);
    expect(report!.problems.join('\n')).toMatch(/can be written by other users \(mode 0777\); refusing to write there/);
    expect(await readdir(real)).toEqual(['pdf']);
  });

  it('a read-only root: a problem for that root, nothing half-written', async () => {
    const { root, served, request, sync } = await setUp();
    await mkdir(root, { recursive: true, mode: 0o555 });
    await chmod(root, 0o555);
    const [report] = await sync([served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf') })], { link: [request] });
    // As root the kernel lets us write anyway: then it works, which is also whole.
    if (process.getuid?.() === 0) expect(report!.added).toEqual(['pdf']);
    else expect(report!.problems.join('\n')).toMatch(/is not writable by you/);
  });
});

describe('link: keeping up', () => {
  it('a revoked approval takes its entry away; a skill approved anew with a grant is replaced under the same name; a server nobody serves waits', async () => {
    const { root, served, request, sync } = await setUp();
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf', 'allowed-tools: Read\n') });
    const guide = served.skill('docs', 'guide', { 'SKILL.md': skillMd('guide') });
    await sync([pdf, guide], { link: [request] });
    const before = await readlink(path.join(root, 'pdf'));
    const regranted = { ...served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf', 'allowed-tools: Read\n') }, { grants: { allowedToolsApproved: true }, approvedAt: '2026-12-02T10:00:00.000Z' }) };
    const [replaced] = await sync([regranted, { ...guide, revokedAt: '2026-12-02T10:00:00.000Z' }]);
    expect(replaced).toMatchObject({ replaced: ['pdf'], removed: ['guide'] });
    expect(await readdir(root)).toEqual(['pdf']);
    expect(await readlink(path.join(root, 'pdf'))).not.toBe(before);
    expect(parseFrontmatter(await readFile(path.join(root, 'pdf', 'SKILL.md'), 'utf8'))['allowed-tools']).toBe('Read');
    const elsewhere = new Served().skill('remote', 'far', { 'SKILL.md': skillMd('far') });
    const [waiting] = await sync([regranted, elsewhere]);
    expect(waiting!.problems).toEqual(['remote/far is not linked yet: nothing serves remote']);
  });

  it('bytes that are not the approved ones are never written: the entry is not made, and says why', async () => {
    const { root, served, request, sync } = await setUp();
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf'), 'ref.md': 'approved\n' });
    served.bytes.set('docs skill://pdf/ref.md', Buffer.from('tampered\n'));
    const [report] = await sync([pdf], { link: [request] });
    expect(report!.problems.join('\n')).toMatch(/ref\.md: the bytes read .* are not the approved ones/);
    expect(await readdir(root)).toEqual([]);
  });

  it('an unchanged approval costs no read; a replaced version stays in the store for a reader, then goes', async () => {
    const { store, served, request, sync } = await setUp();
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf') });
    await sync([pdf], { link: [request] });
    const reads = served.reads;
    await sync([pdf]);
    expect(served.reads).toBe(reads);
    const newer = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf', 'license: MIT\n') }, { approvedAt: '2026-12-03T00:00:00.000Z' });
    const start = Date.now();
    await sync([newer], { now: () => new Date(start) });
    expect((await readdir(path.join(store, OBJECTS_DIR, 'docs'))).length).toBe(2);
    await sync([newer], { now: () => new Date(start + RETAIN_REPLACED_MS + 1) });
    expect((await readdir(path.join(store, OBJECTS_DIR, 'docs'))).length).toBe(1);
  });

  it('recovers from a crash mid-update: a temporary link, a half-built object, links.json behind the root', async () => {
    const { root, store, served, request, sync } = await setUp();
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf') });
    await sync([pdf], { link: [request] });
    const target = await readlink(path.join(root, 'pdf'));
    await symlink(target, path.join(root, '.pdf.skills-mount-0123456789ab'));
    await mkdir(path.join(store, OBJECTS_DIR, `.build-${'f'.repeat(64)}-00000000`, 'skill'), { recursive: true });
    // links.json forgets the entry, as if the process died after making the link.
    const state = JSON.parse(await readFile(path.join(store, 'links.json'), 'utf8')) as { roots: Array<{ entries: object }> };
    state.roots[0]!.entries = {};
    await writeFile(path.join(store, 'links.json'), JSON.stringify(state), { mode: 0o600 });
    const [report] = await sync([pdf]);
    expect(report).toMatchObject({ added: [], removed: [], problems: [] });
    expect(await readdir(root)).toEqual(['pdf']);
    expect((await readdir(path.join(store, OBJECTS_DIR))).filter((name) => name.startsWith('.build-'))).toEqual([]);
    expect(Object.keys((await readLinkState(store)).roots[0]!.entries)).toEqual(['pdf']);
  });
});

describe('link: names a harness lists', () => {
  it("a user's skill that declares the name in another folder, or a folder that differs only in case: qualified and reported, also for an entry linked before", async () => {
    const { root, served, request, sync } = await setUp();
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf') });
    const guide = served.skill('docs', 'guide', { 'SKILL.md': skillMd('guide') });
    const refunds = served.skill('docs', 'refunds', { 'SKILL.md': skillMd('refunds') });
    await sync([refunds], { link: [request] });
    expect(await readdir(root)).toEqual(['refunds']);
    await mkdir(path.join(root, 'my-pdf-notes'), { recursive: true });
    await writeFile(path.join(root, 'my-pdf-notes', 'SKILL.md'), skillMd('pdf'));
    await mkdir(path.join(root, 'Guide'), { recursive: true });
    // Since the entry was linked, a skill of the user's came to declare its name.
    await mkdir(path.join(root, 'team', 'money'), { recursive: true });
    await writeFile(path.join(root, 'team', 'money', 'SKILL.md'), skillMd('refunds'));
    const [report] = await sync([pdf, guide, refunds]);
    expect((await readdir(root)).sort()).toEqual(['Guide', 'docs-guide', 'docs-pdf', 'docs-refunds', 'my-pdf-notes', 'team']);
    const problems = report!.problems.join('\n');
    expect(problems).toMatch(/docs\/pdf is linked as docs-pdf: the name pdf is taken in this root by the skill in my-pdf-notes \(its SKILL\.md names it pdf\)/);
    expect(problems).toMatch(/docs\/guide is linked as docs-guide: the name guide is taken in this root by the folder Guide/);
    expect(problems).toMatch(/docs\/refunds is linked as docs-refunds: the name refunds is taken in this root by the skill in team\/money/);
    expect(parseFrontmatter(await readFile(path.join(root, 'docs-refunds', 'SKILL.md'), 'utf8'))['name']).toBe('docs-refunds');
  });
});

describe('link: the store', () => {
  it('a store under a folder another user can write is refused, and nothing is linked', async () => {
    const { dir, served, request } = await setUp();
    const shared = path.join(dir, 'shared');
    await mkdir(shared, { mode: 0o777 });
    await chmod(shared, 0o777);
    const store = path.join(shared, 'skills-mount', 'links');
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf') });
    await expect(syncLinks({ store, approvals: [pdf], content: served, log: () => {}, link: [request] })).rejects.toThrow(/links store .*the directory .*shared can be written by other users \(mode 0777\); refusing it/);
    await expect(readdir(request.root)).rejects.toThrow(/ENOENT/);
    await expect(readdir(shared)).resolves.toEqual([]);
  });

  it('an entry of the layout before server-named objects is ours: replaced at the next sync, its object removed in time', async () => {
    const { root, store, served, request, sync } = await setUp();
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf') });
    await sync([pdf], { link: [request] });
    // Move the object where the old layout kept it, and point the entry there.
    const oldKey = 'e'.repeat(64);
    const current = await readlink(path.join(root, 'pdf'));
    const { rename, unlink: remove } = await import('node:fs/promises');
    await rename(path.dirname(current), path.join(store, OBJECTS_DIR, oldKey));
    await remove(path.join(root, 'pdf'));
    await symlink(path.join(store, OBJECTS_DIR, oldKey, 'skill'), path.join(root, 'pdf'));
    const start = Date.now();
    const [report] = await sync([pdf], { now: () => new Date(start) });
    expect(report).toMatchObject({ problems: [] });
    expect(await readlink(path.join(root, 'pdf'))).toMatch(new RegExp(`/${OBJECTS_DIR}/docs/[0-9a-f]{64}/skill$`));
    await sync([pdf], { now: () => new Date(start + RETAIN_REPLACED_MS + 1) });
    expect((await readdir(path.join(store, OBJECTS_DIR))).sort()).toEqual(['docs']);
  });
});

describe('link: a project root is judged only with the configuration it was linked with', () => {
  it("a sync given another configuration (a mount's, another project's link) leaves it as it is; its own removes what its lock no longer holds; a root that recorded none waits for its project's link", async () => {
    const { dir, served, sync } = await setUp();
    const pdf = served.skill('team', 'pdf', { 'SKILL.md': skillMd('pdf') });
    const project = path.join(dir, 'b');
    const root = path.join(project, '.claude', 'skills');
    const request: RootRequest = { root, harness: 'claude-code', scope: 'project', lockfile: path.join(project, 'skills-lock.json'), configuration: `${project}/.mcp.json` };
    const judgedWith = (configuration: string, approvals: Approval[]) => ({ configuration, read: async () => ({ approvals, problems: [] }) });
    await sync([], { link: [request], lockedApprovals: judgedWith(`${project}/.mcp.json`, [pdf]) });
    expect(await readdir(root)).toEqual(['pdf']);
    // A configuration without "team" would refuse every locked skill: it judges nothing here, and no report speaks for the root.
    expect(await sync([], { lockedApprovals: judgedWith('/elsewhere/.mcp.json', []) })).toEqual([]);
    expect(await readdir(root)).toEqual(['pdf']);
    expect((await sync([], { lockedApprovals: judgedWith(`${project}/.mcp.json`, []) })).map((report) => report.removed)).toEqual([['pdf']]);
    expect(await readdir(root)).toEqual([]);
    // Linked with no configuration recorded (an earlier skills-mount): no run judges it until its project links again.
    await sync([], { link: [{ ...request, configuration: undefined }], lockedApprovals: judgedWith(`${project}/.mcp.json`, [pdf]) });
    expect(await readdir(root)).toEqual([]);
    await sync([], { link: [request], lockedApprovals: judgedWith(`${project}/.mcp.json`, [pdf]) });
    expect(await readdir(root)).toEqual(['pdf']);
  });
});

describe('unlink', () => {
  it('removes exactly its own entries, and the root it made once empty; a user skill keeps the root', async () => {
    const { root, served, request, sync, home } = await setUp();
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf') });
    await sync([pdf], { link: [request] });
    await sync([pdf], { unlink: [request] });
    await expect(lstat(root)).rejects.toThrow(/ENOENT/);
    // And the .claude folder it made for it.
    await expect(lstat(path.join(home, '.claude'))).rejects.toThrow(/ENOENT/);
    await sync([pdf], { link: [request] });
    await mkdir(path.join(root, 'mine'));
    await sync([pdf], { unlink: [request] });
    expect(await readdir(root)).toEqual(['mine']);
  });
});

describe('verify --links', () => {
  it('passes what link made, and names a changed byte, a permission field added, a file added and an approval gone', async () => {
    const { root, store, served, request, sync } = await setUp();
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf', 'allowed-tools: Bash(git:*)\n'), 'ref.md': 'approved\n' });
    await sync([pdf], { link: [request] });
    expect(await verifyLinks(store, [pdf])).toMatchObject({ roots: 1, entries: 1, files: 2, problems: [] });
    const entry = await realpath(path.join(root, 'pdf'));
    const writable = async (file: string, change: () => Promise<void>) => {
      await chmod(path.dirname(file), 0o755);
      await chmod(file, 0o644).catch(() => {});
      await change();
      await chmod(file, 0o444).catch(() => {});
    };
    await writable(path.join(entry, 'ref.md'), () => writeFile(path.join(entry, 'ref.md'), 'tampered\n'));
    const skillFile = path.join(entry, 'SKILL.md');
    const text = await readFile(skillFile, 'utf8');
    await writable(skillFile, () => writeFile(skillFile, text.replace(/^name: .*\n/m, (line) => `${line}allowed-tools: Bash(git:*)\n`)));
    await writable(path.join(entry, 'extra.md'), () => writeFile(path.join(entry, 'extra.md'), 'extra\n'));
    const details = (await verifyLinks(store, [{ ...pdf, revokedAt: '2026-12-03T00:00:00.000Z' }])).problems.map((problem) => problem.detail).join('\n');
    expect(details).toMatch(/ref\.md: hashes to sha256:\w+, approved sha256:/);
    expect(details).toMatch(/SKILL\.md: frontmatter field allowed-tools is not what the approved one with its grants makes/);
    expect(details).toMatch(/extra\.md: not a file of the approved skill/);
    expect(details).toMatch(/docs skill:\/\/pdf\/SKILL\.md is no longer approved/);
  });
});

describe('verify --links reads an entry as every harness YAML reader would', () => {
  it('a field hidden from YAML 1.2 (after a NEL in a comment) is named by the reader that finds it', async () => {
    const { root, store, served, request, sync } = await setUp();
    const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf') });
    await sync([pdf], { link: [request] });
    expect((await verifyLinks(store, [pdf])).problems).toEqual([]);
    const skillFile = path.join(await realpath(path.join(root, 'pdf')), 'SKILL.md');
    const text = await readFile(skillFile, 'utf8');
    await chmod(path.dirname(skillFile), 0o755);
    await chmod(skillFile, 0o644);
    // To YAML 1.2 a comment, so the frontmatter reads as the approved one does; to YAML 1.1 a hooks field.
    await writeFile(skillFile, text.replace(/^name: .*\n/m, (line) => `${line}# note\u0085hooks: run\n`));
    const details = (await verifyLinks(store, [pdf])).problems.map((problem) => problem.detail).join('\n');
    expect(details).toMatch(/SKILL\.md: YAML 1\.1 .* reads a hooks field/);
    expect(details).not.toMatch(/frontmatter field hooks is not what/);
  });
});

describe('the exec grant where nothing can run', () => {
  it.runIf(process.getuid?.() === 0 || process.env['CI'] === 'true')('says so when the store is on a filesystem mounted noexec', async () => {
    const { dir, root, served, request } = await setUp();
    const store = path.join(dir, 'noexec-store');
    await mkdir(store, { mode: 0o700 });
    const mounted = await execFileText('mount', ['-t', 'tmpfs', '-o', 'noexec,size=4m,mode=0700', 'tmpfs', store]);
    expect(mounted.code, mounted.stderr).toBe(0);
    try {
      const pdf = served.skill('docs', 'pdf', { 'SKILL.md': skillMd('pdf'), 'scripts/run.sh': '#!/bin/sh\necho run\n' }, { grants: { execApproved: true } });
      const [report] = await syncLinks({ store, approvals: [pdf], content: served, log: () => undefined, link: [request] });
      expect(report!.added).toEqual(['pdf']);
      expect(report!.problems.join('\n')).toMatch(/its scripts may run \(approved with --grant-exec\), but .* is on a filesystem mounted noexec/);
      expect((await stat(path.join(root, 'pdf', 'scripts', 'run.sh'))).mode & 0o777).toBe(0o555);
    } finally {
      await execFileText('umount', ['-l', store]);
    }
  });
});

function execFileText(command: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}
