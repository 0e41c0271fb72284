// Persisted approvals: written atomically and privately, keyed by (label, skill URI), never
// silently emptied by a file it cannot read, and safe against a second writer on the same file.
import { spawnSync } from 'node:child_process';
import { chmod, lstat, mkdir, readdir, readFile, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalsLockedError, ApprovalStore, ApprovalStoreError, defaultApprovalsPath, type ApprovalInput } from '../../src/approvals/approval-store.js';
import { resourcesDigest } from '../../src/catalog/resources-digest.js';
import { ConfigError } from '../../src/errors.js';
import { TempDirs } from '../support/temp-dir.js';

const temps = new TempDirs('approval-store-');
afterEach(() => temps.removeAll());

const digest = (char: string) => `sha256:${char.repeat(64)}`;

function input(label: string, skillUri: string, overrides: Partial<ApprovalInput> = {}): ApprovalInput {
  const dir = skillUri.slice(0, -'/SKILL.md'.length);
  return {
    label,
    skillUri,
    name: path.posix.basename(dir),
    resources: [
      { uri: `${dir}/scripts/run.sh`, digest: digest('b'), sizeBytes: 20 },
      { uri: skillUri, digest: digest('a'), sizeBytes: 10 },
    ],
    allowedToolsApproved: false,
    allowedTools: null,
    ...overrides,
  };
}

async function setup(): Promise<{ dir: string; file: string }> {
  const base = await temps.make();
  const dir = path.join(base, 'config/skills-mount');
  return { dir, file: path.join(dir, 'approvals.json') };
}

const FIXED_NOW = () => new Date('2026-03-01T12:00:00.000Z');

describe('defaultApprovalsPath', () => {
  it('uses an absolute XDG_CONFIG_HOME, else ~/.config', () => {
    expect(defaultApprovalsPath({ XDG_CONFIG_HOME: '/x/conf' }, '/home/me')).toBe('/x/conf/skills-mount/approvals.json');
    expect(defaultApprovalsPath({}, '/home/me')).toBe('/home/me/.config/skills-mount/approvals.json');
    expect(defaultApprovalsPath({ XDG_CONFIG_HOME: '' }, '/home/me')).toBe('/home/me/.config/skills-mount/approvals.json');
    // The XDG rule: a relative value is ignored.
    expect(defaultApprovalsPath({ XDG_CONFIG_HOME: 'rel/conf' }, '/home/me')).toBe('/home/me/.config/skills-mount/approvals.json');
  });
});

describe('ApprovalStore', () => {
  it('loads a missing file as empty and creates nothing', async () => {
    const { dir, file } = await setup();
    const store = await ApprovalStore.load(file);
    expect(store.list()).toEqual([]);
    expect(store.get('alpha', 'skill://x/SKILL.md')).toBeUndefined();
    await expect(lstat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('persists an approval before resolving: 0600 file in a 0700 directory, no temp or lock files left', async () => {
    const { dir, file } = await setup();
    const store = await ApprovalStore.load(file, { now: FIXED_NOW });
    const stored = await store.approve(input('alpha', 'skill://refunds/SKILL.md', { allowedToolsApproved: true, allowedTools: 'Bash(git:*) Read' }));

    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(await readdir(dir)).toEqual(['approvals.json']);

    expect(stored.approvedAt).toBe('2026-03-01T12:00:00.000Z');
    expect(stored.resources.map((r) => r.uri)).toEqual(['skill://refunds/SKILL.md', 'skill://refunds/scripts/run.sh']);
    expect(stored.resourcesDigest).toBe(resourcesDigest(stored.resources));

    const again = await ApprovalStore.load(file);
    expect(again.get('alpha', 'skill://refunds/SKILL.md')).toEqual(stored);
    const onDisk = JSON.parse(await readFile(file, 'utf8'));
    expect(onDisk.version).toBe(1);
    expect(onDisk.approvals[0]).toMatchObject({ label: 'alpha', skillUri: 'skill://refunds/SKILL.md', allowedToolsApproved: true, allowedTools: 'Bash(git:*) Read' });
  });

  it('removes a temp file a crashed writer left behind', async () => {
    const { dir, file } = await setup();
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(path.join(dir, '.approvals.json.tmp-99999-abcdef'), 'half a write', { mode: 0o600 });
    const store = await ApprovalStore.load(file);
    await store.approve(input('alpha', 'skill://refunds/SKILL.md'));
    expect(await readdir(dir)).toEqual(['approvals.json']);
  });

  it('tightens an existing 0755 directory to 0700 on write', async () => {
    const { dir, file } = await setup();
    await mkdir(dir, { recursive: true });
    await chmod(dir, 0o755);
    await (await ApprovalStore.load(file)).approve(input('alpha', 'skill://refunds/SKILL.md'));
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it('replaces the approval of the same (label, uri) and keeps the same URI on another label separate', async () => {
    const { file } = await setup();
    const store = await ApprovalStore.load(file);
    await store.approve(input('alpha', 'skill://refunds/SKILL.md'));
    await store.approve(input('beta', 'skill://refunds/SKILL.md'));
    const changed = input('alpha', 'skill://refunds/SKILL.md', { resources: [{ uri: 'skill://refunds/SKILL.md', digest: digest('c'), sizeBytes: 11 }] });
    await store.approve(changed);

    const reloaded = await ApprovalStore.load(file);
    expect(reloaded.list().map((a) => [a.label, a.skillUri])).toEqual([
      ['alpha', 'skill://refunds/SKILL.md'],
      ['beta', 'skill://refunds/SKILL.md'],
    ]);
    expect(reloaded.get('alpha', 'skill://refunds/SKILL.md')?.resources).toEqual([{ uri: 'skill://refunds/SKILL.md', digest: digest('c'), sizeBytes: 11 }]);
    expect(reloaded.get('beta', 'skill://refunds/SKILL.md')?.resources).toHaveLength(2);

    expect(await reloaded.revoke('beta', 'skill://refunds/SKILL.md')).toBe(true);
    expect(reloaded.get('alpha', 'skill://refunds/SKILL.md')).toBeDefined();
    expect((await ApprovalStore.load(file)).get('beta', 'skill://refunds/SKILL.md')).toBeUndefined();
  });

  it('revokes: true and persisted when there was an approval, false when there was none', async () => {
    const { file } = await setup();
    const store = await ApprovalStore.load(file);
    await store.approve(input('alpha', 'skill://refunds/SKILL.md'));
    expect(await store.revoke('alpha', 'skill://refunds/SKILL.md')).toBe(true);
    expect(store.get('alpha', 'skill://refunds/SKILL.md')).toBeUndefined();
    expect((await ApprovalStore.load(file)).list()).toEqual([]);
    expect(await store.revoke('alpha', 'skill://refunds/SKILL.md')).toBe(false);
    expect(await store.revoke('alpha', 'skill://never/SKILL.md')).toBe(false);
  });

  it('marks an approval revoked only while it is the one approved then; a file without revokedAt reads as not revoked', async () => {
    const { file } = await setup();
    const store = await ApprovalStore.load(file);
    const first = await store.approve(input('alpha', 'skill://refunds/SKILL.md', { approvedAt: '2026-01-01T00:00:00.000Z' }));
    expect(first.revokedAt).toBeNull();
    expect(await store.markRevoked('alpha', 'skill://refunds/SKILL.md', '2025-12-31T00:00:00.000Z', '2026-01-02T00:00:00.000Z')).toBe(false);
    expect(await store.markRevoked('alpha', 'skill://refunds/SKILL.md', first.approvedAt, '2026-01-02T00:00:00.000Z')).toBe(true);
    expect(await store.markRevoked('alpha', 'skill://refunds/SKILL.md', first.approvedAt, '2026-01-03T00:00:00.000Z')).toBe(false);
    expect((await ApprovalStore.load(file)).get('alpha', 'skill://refunds/SKILL.md')?.revokedAt).toBe('2026-01-02T00:00:00.000Z');
    // Approving anew clears it.
    expect((await store.approve(input('alpha', 'skill://refunds/SKILL.md'))).revokedAt).toBeNull();
    const document = JSON.parse(await readFile(file, 'utf8'));
    delete document.approvals[0].revokedAt;
    await writeFile(file, JSON.stringify(document));
    expect((await ApprovalStore.load(file)).get('alpha', 'skill://refunds/SKILL.md')?.revokedAt).toBeNull();
    document.approvals[0].revokedAt = 'yesterday';
    await writeFile(file, JSON.stringify(document));
    await expect(ApprovalStore.load(file)).rejects.toThrow(/revokedAt is neither a time nor null/);
  });

  it('two stores on one file do not lose each other\'s approvals', async () => {
    const { file } = await setup();
    // Both loaded before either wrote: each change must re-read the file, not write its stale copy.
    const first = await ApprovalStore.load(file);
    const second = await ApprovalStore.load(file);
    await first.approve(input('alpha', 'skill://one/SKILL.md'));
    // get() answers from what this instance last read; reload() sees the other writer.
    expect(second.get('alpha', 'skill://one/SKILL.md')).toBeUndefined();
    await second.reload();
    expect(second.get('alpha', 'skill://one/SKILL.md')).toBeDefined();
    await second.approve(input('alpha', 'skill://two/SKILL.md'));
    expect(second.list().map((a) => a.skillUri)).toEqual(['skill://one/SKILL.md', 'skill://two/SKILL.md']);
    await first.revoke('alpha', 'skill://two/SKILL.md');
    expect((await ApprovalStore.load(file)).list().map((a) => a.skillUri)).toEqual(['skill://one/SKILL.md']);

    // Interleaved, many at once from both.
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i++) {
      writes.push(first.approve(input('alpha', `skill://a${i}/SKILL.md`)));
      writes.push(second.approve(input('beta', `skill://b${i}/SKILL.md`)));
    }
    await Promise.all(writes);
    const all = (await ApprovalStore.load(file)).list();
    expect(all).toHaveLength(21);
    expect(await readdir(path.dirname(file))).toEqual(['approvals.json']);
  });

  it('takes over a lock left by a dead process', async () => {
    const { dir, file } = await setup();
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    expect(dead).toBeGreaterThan(0);
    await writeFile(`${file}.lock`, `${dead}\n${hostname()}\ndeadbeef\n`, { mode: 0o600 });
    const store = await ApprovalStore.load(file, { lockTimeoutMs: 2_000 });
    await store.approve(input('alpha', 'skill://refunds/SKILL.md'));
    expect(await readdir(dir)).toEqual(['approvals.json']);
  });

  it('waits for a live lock holder and then fails naming the lock file', async () => {
    const { dir, file } = await setup();
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // The parent of this test process is alive for as long as the test runs.
    await writeFile(`${file}.lock`, `${process.ppid}\n${hostname()}\nother\n`, { mode: 0o600 });
    const store = await ApprovalStore.load(file, { lockTimeoutMs: 100 });
    const attempt = store.approve(input('alpha', 'skill://refunds/SKILL.md'));
    await expect(attempt).rejects.toBeInstanceOf(ApprovalsLockedError);
    await expect(attempt).rejects.toThrow(`${file}.lock`);
    await expect(lstat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(store.get('alpha', 'skill://refunds/SKILL.md')).toBeUndefined();
  });

  describe('a file it cannot trust is an error, never an empty store', () => {
    it('corrupt JSON names the file', async () => {
      const { dir, file } = await setup();
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFile(file, '{"version": 1, "approvals": [', { mode: 0o600 });
      const loading = ApprovalStore.load(file);
      await expect(loading).rejects.toBeInstanceOf(ApprovalStoreError);
      await expect(loading).rejects.toThrow(file);
    });

    it.each([
      ['an array', '[]'],
      ['no version', '{"approvals": []}'],
      ['a newer version', '{"version": 2, "approvals": []}'],
      ['approvals not a list', '{"version": 1, "approvals": {}}'],
      ['an approval without resources', JSON.stringify({ version: 1, approvals: [{ label: 'alpha', skillUri: 'skill://x/SKILL.md', name: 'x', resources: [], resourcesDigest: 'sha256:', approvedAt: '2026-01-01T00:00:00Z', allowedToolsApproved: false, allowedTools: null }] })],
    ])('wrong shape: %s', async (_what, text) => {
      const { dir, file } = await setup();
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFile(file, text, { mode: 0o600 });
      await expect(ApprovalStore.load(file)).rejects.toThrow(new RegExp(`approvals file ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: is not an approvals file`));
    });

    it('a resourcesDigest that does not match its resources (a hand edit) is refused', async () => {
      const { file } = await setup();
      await (await ApprovalStore.load(file)).approve(input('alpha', 'skill://refunds/SKILL.md'));
      const onDisk = JSON.parse(await readFile(file, 'utf8'));
      onDisk.approvals[0].resources[0].digest = digest('f');
      await writeFile(file, JSON.stringify(onDisk));
      await expect(ApprovalStore.load(file)).rejects.toThrow(/resourcesDigest .* does not match its resources/);
    });

    it('a store loaded before the file was corrupted refuses to write over it', async () => {
      const { file } = await setup();
      const store = await ApprovalStore.load(file);
      await store.approve(input('alpha', 'skill://refunds/SKILL.md'));
      await writeFile(file, 'garbage');
      await expect(store.approve(input('alpha', 'skill://other/SKILL.md'))).rejects.toBeInstanceOf(ApprovalStoreError);
      await expect(store.revoke('alpha', 'skill://refunds/SKILL.md')).rejects.toBeInstanceOf(ApprovalStoreError);
      expect(await readFile(file, 'utf8')).toBe('garbage');
      // A failed change does not wedge the store's queue.
      await writeFile(file, JSON.stringify({ version: 1, approvals: [] }));
      await store.approve(input('alpha', 'skill://other/SKILL.md'));
      expect((await ApprovalStore.load(file)).list()).toHaveLength(1);
    });

    it('a symlinked approvals file is refused, on load and on write', async () => {
      const { dir, file } = await setup();
      const real = path.join(path.dirname(dir), 'elsewhere.json');
      const writer = await ApprovalStore.load(real);
      await writer.approve(input('alpha', 'skill://refunds/SKILL.md'));
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await symlink(real, file);
      await expect(ApprovalStore.load(file)).rejects.toThrow(/symbolic link/);

      // Swapped in after a load: the change re-reads and refuses instead of writing through or over it.
      await unlink(file);
      const store = await ApprovalStore.load(file);
      await symlink(real, file);
      await expect(store.approve(input('alpha', 'skill://other/SKILL.md'))).rejects.toThrow(/symbolic link/);
      expect((await lstat(file)).isSymbolicLink()).toBe(true);
    });

    it('a file other users can write is refused', async () => {
      const { file } = await setup();
      await (await ApprovalStore.load(file)).approve(input('alpha', 'skill://refunds/SKILL.md'));
      await chmod(file, 0o622);
      await expect(ApprovalStore.load(file)).rejects.toThrow(/mode 0622: other users can write it/);
      await chmod(file, 0o644);
      expect((await ApprovalStore.load(file)).list()).toHaveLength(1);
    });

    it('a directory other users can write is refused', async () => {
      const { dir, file } = await setup();
      await (await ApprovalStore.load(file)).approve(input('alpha', 'skill://refunds/SKILL.md'));
      await chmod(dir, 0o777);
      await expect(ApprovalStore.load(file)).rejects.toThrow(/approvals directory .* has mode 0777/);
    });

    it('a symlinked approvals directory is refused', async () => {
      const { dir, file } = await setup();
      const real = path.join(path.dirname(dir), 'real-dir');
      await mkdir(real, { recursive: true, mode: 0o700 });
      await symlink(real, dir);
      await expect(ApprovalStore.load(file)).rejects.toThrow(/approvals directory .* is a symbolic link/);
    });
  });

  describe('refuses approvals that say more or less than was shown', () => {
    it.each<[string, Partial<ApprovalInput>]>([
      ['an invalid label', { label: 'Not/A/Label' }],
      ['resources without the skill\'s SKILL.md', { resources: [{ uri: 'skill://refunds/other.md', digest: digest('a'), sizeBytes: 1 }] }],
      ['a malformed digest', { resources: [{ uri: 'skill://refunds/SKILL.md', digest: 'sha256:xyz', sizeBytes: 1 }] }],
      ['a file listed twice', { resources: [{ uri: 'skill://refunds/SKILL.md', digest: digest('a'), sizeBytes: 1 }, { uri: 'skill://refunds/SKILL.md', digest: digest('b'), sizeBytes: 1 }] }],
      ['an allowed-tools grant of nothing', { allowedToolsApproved: true, allowedTools: null }],
    ])('%s', async (_what, overrides) => {
      const { file } = await setup();
      const store = await ApprovalStore.load(file);
      await expect(store.approve(input('alpha', 'skill://refunds/SKILL.md', overrides))).rejects.toBeInstanceOf(ConfigError);
      await expect(lstat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    });
  });
});
