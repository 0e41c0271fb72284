// What the approvals imply for the mount, over real catalogs and a real approvals file: the
// approved view's tree, the states skills.json and status.json show, the records `approve`
// reads, the daemon's re-reading of the file (fail closed when it cannot), and the names of
// the records.
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { approvalInputFor } from '../../src/approvals/approval-check.js';
import { ApprovalLedger } from '../../src/approvals/approval-ledger.js';
import { ApprovalStore } from '../../src/approvals/approval-store.js';
import { ContentCache } from '../../src/catalog/content-cache.js';
import { DEFAULT_CATALOG_TIMINGS, ServerCatalog } from '../../src/catalog/server-catalog.js';
import { NotFoundError } from '../../src/errors.js';
import { ApprovedView } from '../../src/fs/approved-view.js';
import { directoryOfInspectName, inspectFileName } from '../../src/fs/mount-layout.js';
import { SkillsFilesystem } from '../../src/fs/skills-filesystem.js';
import { MemorySkillSource, skillMarkdown } from '../support/memory-skill-source.js';
import { TempDirs } from '../support/temp-dir.js';
import { LockLedger } from '../../src/team/lock-ledger.js';
import { approvalOfLocked, lockedSkillOf } from '../../src/team/locked-skills.js';
import { pollUntil } from '../support/poll.js';

const dirs = new TempDirs('approved-view-');
const ledgers: ApprovalLedger[] = [];
afterEach(async () => {
  // A revocation may still be on its way to the file: let it land before the directory goes.
  for (const ledger of ledgers.splice(0)) await ledger.idle();
  await dirs.removeAll();
});

async function fixture(labels: string[] = ['docs']) {
  const dir = await dirs.make();
  const file = path.join(dir, 'skills-mount', 'approvals.json');
  // One clock for the catalog's entry changes and the approvals' stamps, as the daemon and the CLI share the wall clock.
  const clock = { ms: Date.parse('2026-12-01T00:00:00.000Z') };
  const logged: string[] = [];
  const sources = labels.map((label) => {
    const source = new MemorySkillSource(label);
    source.addSkill('guide', { 'SKILL.md': skillMarkdown('guide'), 'refs/tone.md': 'Be brief.\n' });
    source.addSkill('guide/inner', { 'SKILL.md': skillMarkdown('inner'), 'ref.md': 'inner\n' });
    source.addSkill('tools', { 'SKILL.md': skillMarkdown('tools', 'Runs git', 'allowed-tools: Bash(git:*)\n') });
    return source;
  });
  const catalogs = sources.map((source) => new ServerCatalog(source, { ...DEFAULT_CATALOG_TIMINGS, log: () => {}, cache: new ContentCache(1 << 20), hideDynamic: false, now: () => clock.ms }));
  for (const catalog of catalogs) await catalog.refresh();
  const ledger = await ApprovalLedger.open(file, (line) => logged.push(line), () => clock.ms);
  ledgers.push(ledger);
  const view = new ApprovedView(new Map(catalogs.map((catalog) => [catalog.label, catalog])), ledger);
  const store = await ApprovalStore.load(file, { now: () => new Date(clock.ms) });
  /** Approves the skill at `directory` as the catalog holds it now, and lets the ledger see it. */
  const approve = async (label: string, directory: string, grant = false) => {
    const record = view.inspect(label, directory)!;
    await store.approve(approvalInputFor(label, { ...record, files: record.files as Exclude<typeof record.files, string> }, { allowedToolsApproved: grant }));
    clock.ms += 1_000;
    await view.refresh();
  };
  return { dir, file, clock, logged, sources, catalogs, ledger, view, store, approve };
}

const tree = (view: ApprovedView, label: string, at = ''): string[] => {
  const node = view.node(label, at);
  if (!node || node.kind === 'file') return [];
  return node.children.flatMap((name) => {
    const child = at === '' ? name : `${at}/${name}`;
    return [child, ...tree(view, label, child)];
  });
};

describe('the approved view', () => {
  it('holds exactly the files of the approved set; a nested skill is supporting content, listed only once approved itself', async () => {
    const { view, approve } = await fixture();
    expect(tree(view, 'docs')).toEqual([]);
    expect(view.node('docs', '')).toEqual({ kind: 'directory', children: [] });
    expect(view.node('nowhere', '')).toBeUndefined();
    await approve('docs', 'guide');
    // The memory server's guide entry lists its own files only: the nested skill's are not in its set.
    expect(tree(view, 'docs').sort()).toEqual(['guide', 'guide/SKILL.md', 'guide/refs', 'guide/refs/tone.md']);
    expect(view.skills()).toEqual([{ label: 'docs', skills: [expect.objectContaining({ name: 'guide', path: '_approved/docs/guide', allowedTools: null, allowedToolsApproved: false })] }]);
    expect(view.inspect('docs', 'guide')!.nestedSkills).toEqual(['guide/inner']);
    await approve('docs', 'guide/inner');
    expect(view.skills()[0]!.skills.map((skill) => skill.name)).toEqual(['guide', 'inner']);
    expect(tree(view, 'docs')).toContain('guide/inner/ref.md');
  });

  it('a changed file takes the skill out, with what differs, until it is approved again', async () => {
    const { view, approve, sources, catalogs } = await fixture();
    await approve('docs', 'guide');
    sources[0]!.changeFile('skill://guide/refs/tone.md', 'Be kind.\n');
    await catalogs[0]!.refresh();
    expect(tree(view, 'docs')).toEqual([]);
    const expected = { uri: 'skill://guide/refs/tone.md', change: 'changed', path: 'guide/refs/tone.md' };
    expect(view.approvalOf('docs', 'skill://guide/SKILL.md')).toMatchObject({ state: 'changed-since-approval', differing: [expected] });
    expect(view.serverApprovals('docs')).toEqual({ approved: 0, changedSinceApproval: 1, changed: [{ name: 'guide', path: 'guide', differing: [expected] }] });
    expect(view.inspect('docs', 'guide')!.approval).toMatchObject({ state: 'changed-since-approval', differing: [expected] });
    expect(view.approvalOf('docs', 'skill://tools/SKILL.md')).toBeUndefined();
    await approve('docs', 'guide');
    expect(tree(view, 'docs')).toContain('guide/refs/tone.md');
    expect(view.serverApprovals('docs')).toMatchObject({ approved: 1, changedSinceApproval: 0 });
  });

  it('a later entry with another set revokes the approval for good: the set coming back does not restore it, approving anew does', async () => {
    const { view, approve, sources, catalogs, file, clock } = await fixture();
    await approve('docs', 'guide');
    sources[0]!.changeFile('skill://guide/refs/tone.md', 'Be kind.\n');
    clock.ms += 1_000;
    await catalogs[0]!.refresh();
    expect(tree(view, 'docs')).toEqual([]);
    // The daemon writes the revocation in the background.
    await pollUntil(() => readFile(file, 'utf8'), (text) => /"revokedAt": "20/.test(text), { timeoutMs: 5_000, intervalMs: 10, timeoutError: () => new Error('no revocation written') });
    sources[0]!.changeFile('skill://guide/refs/tone.md', 'Be brief.\n');
    clock.ms += 1_000;
    await catalogs[0]!.refresh();
    await view.refresh();
    expect(tree(view, 'docs')).toEqual([]);
    expect(view.approvalOf('docs', 'skill://guide/SKILL.md')).toMatchObject({ state: 'changed-since-approval', differing: [], revokedAt: expect.any(String) });
    // A second daemon (a restart) reads the revocation from the file.
    const second = await ApprovalLedger.open(file, () => {}, () => clock.ms);
    ledgers.push(second);
    const restarted = new ApprovedView(new Map(catalogs.map((catalog) => [catalog.label, catalog])), second);
    expect(restarted.approvalOf('docs', 'skill://guide/SKILL.md')).toMatchObject({ state: 'changed-since-approval' });
    await approve('docs', 'guide');
    expect(tree(view, 'docs')).toContain('guide/refs/tone.md');
  });

  it('an entry that changed and changed back before anyone looked still revoked the approval', async () => {
    const { view, approve, sources, catalogs, clock } = await fixture();
    await approve('docs', 'guide');
    sources[0]!.changeFile('skill://guide/refs/tone.md', 'Be kind.\n');
    clock.ms += 1_000;
    await catalogs[0]!.refresh();
    const changedBackAt = (clock.ms += 1_000);
    sources[0]!.changeFile('skill://guide/refs/tone.md', 'Be brief.\n');
    await catalogs[0]!.refresh();
    expect(tree(view, 'docs')).toEqual([]);
    expect(view.approvalOf('docs', 'skill://guide/SKILL.md')).toMatchObject({ state: 'changed-since-approval', differing: [], revokedAt: new Date(changedBackAt).toISOString() });
  });

  it('keeps each label apart, records the allowed-tools grant, and has no figures for a label without approvals', async () => {
    const { view, approve } = await fixture(['one', 'two']);
    await approve('one', 'tools', true);
    expect(tree(view, 'two')).toEqual([]);
    expect(view.serverApprovals('two')).toBeUndefined();
    expect(view.skills()[0]!.skills).toEqual([expect.objectContaining({ name: 'tools', allowedTools: 'Bash(git:*)', allowedToolsApproved: true })]);
    expect(view.inspect('one', 'tools')!.permissionFields).toEqual([{ field: 'allowed-tools', effect: 'tool-permission', value: 'Bash(git:*)' }]);
    expect(view.inspect('one', 'nothing')).toBeUndefined();
  });

  it('re-reads the approvals file when it changes, and grants nothing (logged once) while it cannot be read', async () => {
    const { view, approve, file, clock, logged, ledger, catalogs } = await fixture();
    await approve('docs', 'guide');
    const good = await readFile(file, 'utf8');
    await writeFile(file, '{ not json');
    await chmod(file, 0o600);
    clock.ms += 1_000;
    await view.refresh();
    expect(tree(view, 'docs')).toEqual([]);
    expect(ledger.problem).toMatch(/approvals file .*approvals\.json/);
    // The agent's index says why it lists nothing.
    const filesystem = new SkillsFilesystem(catalogs, { approvals: ledger, now: () => clock.ms });
    const handle = await filesystem.open('/_approved/skills.json');
    const document = JSON.parse(filesystem.read(handle, 0, 1 << 20).toString());
    filesystem.release(handle);
    expect(document.approvals.problem).toMatch(/is not valid JSON/);
    expect(document.servers).toEqual([{ label: 'docs', skills: [] }]);
    clock.ms += 1_000;
    await view.refresh();
    expect(logged.filter((line) => line.includes('the approved view shows no skill'))).toHaveLength(1);
    await writeFile(file, good);
    clock.ms += 1_000;
    await view.refresh();
    expect(ledger.problem).toBeUndefined();
    expect(tree(view, 'docs')).toContain('guide/SKILL.md');
    expect(logged.at(-1)).toMatch(/readable again/);
  });

  it('checks the file at most every 100 ms', async () => {
    const { view, approve, store, clock } = await fixture();
    await approve('docs', 'guide');
    await store.revoke('docs', 'skill://guide/SKILL.md');
    clock.ms += 50;
    await view.refresh();
    expect(tree(view, 'docs')).not.toEqual([]);
    clock.ms += 50;
    await view.refresh();
    expect(tree(view, 'docs')).toEqual([]);
  });
});

describe('a lock in the approved view', () => {
  it('shows a locked skill only while every file of its version can be served verified; else leaves it out with the reason, logged once and in the figures', async () => {
    const { dir, catalogs, sources, view: personal } = await fixture();
    const locked = approvalOfLocked(lockedSkillOf('docs', 'guide', personal.inspect('docs', 'guide')!, { allowedTools: false, exec: false }));
    const logged: string[] = [];
    const log = (line: string) => logged.push(line);
    const ledger = await LockLedger.open(path.join(dir, 'skills-lock.json'), async () => ({ approvals: [locked], problems: [] }), path.join(dir, 'texts'), log);
    const view = new ApprovedView(new Map(catalogs.map((catalog) => [catalog.label, catalog])), ledger, log);
    const files = ['guide', 'guide/SKILL.md', 'guide/refs', 'guide/refs/tone.md'];
    await view.refresh();
    expect(tree(view, 'docs').sort()).toEqual(files);

    // The server moves on before this machine read tone.md: no verified copy of the locked one is held.
    const source = sources[0]!;
    const catalog = catalogs[0]!;
    source.changeFile('skill://guide/refs/tone.md', 'Be kind.\n');
    await catalog.refresh();
    await view.refresh();
    expect(tree(view, 'docs')).toEqual([]);
    expect(view.skills()).toEqual([{ label: 'docs', skills: [] }]);
    const reason = expect.stringMatching(/^docs: skill:\/\/guide\/refs\/tone\.md: locked as sha256:[0-9a-f]{64}, which this machine has not kept, and the server serves sha256:[0-9a-f]{64} now$/);
    expect(view.serverApprovals('docs')!.notShown).toEqual([{ name: 'guide', path: 'guide', reason }]);
    await view.refresh();
    expect(logged.filter((line) => line.includes('is not shown'))).toEqual([expect.stringMatching(/^lock: docs\/guide is not shown in _approved: docs: skill:\/\/guide\/refs\/tone\.md: locked as /)]);

    // Back at the locked version, read once (so held in memory), then moved on again: shown, from the copy held.
    source.changeFile('skill://guide/refs/tone.md', 'Be brief.\n');
    await catalog.refresh();
    await view.refresh();
    expect(tree(view, 'docs').sort()).toEqual(files);
    expect(logged.at(-1)).toBe('lock: docs/guide is shown in _approved again: every file of its locked version can be served');
    await catalog.read('guide/refs/tone.md');
    source.changeFile('skill://guide/refs/tone.md', 'Be kind.\n');
    await catalog.refresh();
    await view.refresh();
    expect(tree(view, 'docs').sort()).toEqual(files);
    expect(view.serverApprovals('docs')!.notShown).toBeUndefined();
    ledger.close();
  });
});

describe('the mount with approvals', () => {
  it('serves records padded to a size that holds while the kernel may clamp reads; hides approved-only labels from the full view', async () => {
    const { catalogs, ledger, clock, approve } = await fixture(['docs', 'kept']);
    const filesystem = new SkillsFilesystem(catalogs, { approvals: ledger, approvedOnly: new Set(['kept']), metadataTtlMs: 30_000, now: () => clock.ms });
    expect(await filesystem.readdir('/')).toEqual(['docs', 'skills.json', 'status.json', '_approved']);
    await expect(filesystem.getattr('/kept/guide/SKILL.md')).rejects.toBeInstanceOf(NotFoundError);
    expect(await filesystem.readdir('/_approved')).toEqual(['docs', 'kept', 'skills.json']);
    const record = `/.inspect/docs/${inspectFileName('guide')}`;
    const size = (await filesystem.getattr(record)).sizeBytes;
    await approve('docs', 'guide');
    const handle = await filesystem.open(record);
    const bytes = filesystem.read(handle, 0, size + 1);
    filesystem.release(handle);
    // Grown by the approval, still the size the kernel was told: padded with JSON whitespace.
    expect(bytes.length).toBe(size);
    expect(JSON.parse(bytes.toString()).approval).toMatchObject({ state: 'approved' });
    expect((await filesystem.readdir('/.inspect/docs')).sort()).toEqual(['guide%2Finner.json', 'guide.json', 'tools.json']);
    expect(await filesystem.readdir('/_approved/docs/guide')).toEqual(['SKILL.md', 'refs']);
  });
});

describe('record names', () => {
  it('spell one directory each, both ways, and a digest past the file name limit', () => {
    for (const directory of ['guide', 'acme/billing/refunds', 'a%2Fb', 'a/b', '100%/x']) {
      expect(directoryOfInspectName(inspectFileName(directory))).toBe(directory);
    }
    expect(inspectFileName('a/b')).not.toBe(inspectFileName('a%2Fb'));
    const long = Array.from({ length: 5 }, () => 'x'.repeat(60)).join('/');
    expect(inspectFileName(long)).toMatch(/^%sha256-[0-9a-f]{64}\.json$/);
    expect(directoryOfInspectName(inspectFileName(long))).toBe('digest');
    expect(directoryOfInspectName('nope.txt')).toBeUndefined();
    expect(directoryOfInspectName('%zz.json')).toBeUndefined();
  });
});
