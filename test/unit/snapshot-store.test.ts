// Publishing snapshots, with no server and no kernel mount: DEST is one symlink swapped by a
// rename, a build that fails or is abandoned leaves the published snapshot as it was and is
// removed at the next run, files and directories are read-only, old snapshots go, and verify
// names every file that differs, is missing or is extra.
import { chmod, lstat, mkdir, readFile, readdir, readlink, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { nodeSnapshotFs, snapshotFsWith } from '../../src/snapshot/snapshot-fs.js';
import { MANIFEST_NAME } from '../../src/snapshot/snapshot-manifest.js';
import { SnapshotLockedError, SnapshotStore, snapshotsDirOf } from '../../src/snapshot/snapshot-store.js';
import { verifySnapshot } from '../../src/snapshot/snapshot-verify.js';
import { manifestOf } from '../support/snapshot-manifest.js';
import { makeTempDir } from '../support/temp-dir.js';

const made: string[] = [];
const dirs = {
  async make(): Promise<string> {
    const dir = await makeTempDir('snapshot-store-');
    made.push(dir);
    return dir;
  },
};
const stores: SnapshotStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  // Snapshots are read-only (0555 directories): removed the way the store removes them.
  for (const dir of made.splice(0)) await nodeSnapshotFs.removeTree(dir);
});

async function openStore(dest: string, options: Partial<Parameters<typeof SnapshotStore.open>[0]> = {}): Promise<SnapshotStore> {
  const store = await SnapshotStore.open({ dest, log: () => {}, ...options });
  stores.push(store);
  return store;
}


/** Builds and publishes a snapshot holding `files` (paths under the root); resolves its id. */
async function publish(store: SnapshotStore, files: Record<string, string>): Promise<string> {
  const build = await store.begin();
  for (const [file, text] of Object.entries(files)) await build.writeFile(file, Buffer.from(text));
  await build.commit(manifestOf(build.id, files, build.directoryPaths()));
  return build.id;
}

describe('publishing', () => {
  it('DEST is a relative symlink to .DEST.snapshots/<id>; a second snapshot replaces it with one rename, files 0444 and directories 0555', async () => {
    const dir = await dirs.make();
    const dest = path.join(dir, 'skills');
    const store = await openStore(dest);
    const first = await publish(store, { 'docs/guide/SKILL.md': 'one\n', 'skills.json': '{}\n' });
    expect(await readlink(dest)).toBe(`.skills.snapshots/${first}`);
    expect(await readFile(path.join(dest, 'docs/guide/SKILL.md'), 'utf8')).toBe('one\n');
    const second = await publish(store, { 'docs/guide/SKILL.md': 'two\n', 'skills.json': '{}\n' });
    expect(second > first).toBe(true);
    expect(await readlink(dest)).toBe(`.skills.snapshots/${second}`);
    expect(await readFile(path.join(dest, 'docs/guide/SKILL.md'), 'utf8')).toBe('two\n');
    for (const file of ['docs/guide/SKILL.md', 'skills.json', MANIFEST_NAME]) expect((await lstat(path.join(dest, file))).mode & 0o7777, file).toBe(0o444);
    for (const sub of ['', 'docs', 'docs/guide']) expect((await stat(path.join(dest, sub))).mode & 0o7777, sub || '.').toBe(0o555);
    // Nothing in DEST's parent but DEST and its snapshots folder: no temp link left.
    expect((await readdir(dir)).sort()).toEqual(['.skills.snapshots', 'skills']);
  });

  it('a build that fails (a full disk) leaves the published snapshot byte for byte, is removed, and the next build publishes', async () => {
    const dir = await dirs.make();
    const dest = path.join(dir, 'skills');
    const good = await publish(await openStore(dest), { 'docs/a/SKILL.md': 'good\n' });
    await stores.pop()!.close();
    // A disk with room for 10 more bytes: the second file does not fit.
    let room = 10;
    const full = snapshotFsWith({
      writeFile: async (file, bytes, mode) => {
        if (bytes.length > room) throw Object.assign(new Error(`ENOSPC: no space left on device, write '${file}'`), { code: 'ENOSPC' });
        room -= bytes.length;
        await snapshotFsWith().writeFile(file, bytes, mode);
      },
    });
    const store = await openStore(dest, { fs: full });
    const build = await store.begin();
    await build.writeFile('docs/a/SKILL.md', Buffer.from('new\n'));
    await expect(build.writeFile('docs/a/big.md', Buffer.alloc(64, 'x'))).rejects.toMatchObject({ code: 'ENOSPC' });
    await build.abort();
    expect(await readlink(dest)).toBe(`.skills.snapshots/${good}`);
    expect(await readFile(path.join(dest, 'docs/a/SKILL.md'), 'utf8')).toBe('good\n');
    expect((await verifySnapshot(dest)).problems).toEqual([]);
    expect(await readdir(snapshotsDirOf(dest))).toEqual(expect.not.arrayContaining([expect.stringMatching(/^\.build-/)]));
    room = Number.POSITIVE_INFINITY;
    const next = await publish(store, { 'docs/a/SKILL.md': 'new\n' });
    expect(await readlink(dest)).toBe(`.skills.snapshots/${next}`);
  });

  it('a manifest that does not fit fails the commit and still leaves the published snapshot', async () => {
    const dir = await dirs.make();
    const dest = path.join(dir, 'skills');
    const good = await publish(await openStore(dest), { 'docs/a/SKILL.md': 'good\n' });
    await stores.pop()!.close();
    const full = snapshotFsWith({
      writeFile: async (file, bytes, mode) => {
        if (file.endsWith(MANIFEST_NAME)) throw Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' });
        await snapshotFsWith().writeFile(file, bytes, mode);
      },
    });
    const store = await openStore(dest, { fs: full });
    const build = await store.begin();
    await build.writeFile('docs/a/SKILL.md', Buffer.from('new\n'));
    await expect(build.commit(manifestOf(build.id, { 'docs/a/SKILL.md': 'new\n' }, build.directoryPaths()))).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await readlink(dest)).toBe(`.skills.snapshots/${good}`);
    expect((await readdir(snapshotsDirOf(dest))).sort()).toEqual(['.lock', good]);
  });

  it('what an interrupted run left (a build, a temp link, a finished but unpublished snapshot) goes at the next open; the published one stays', async () => {
    const dir = await dirs.make();
    const dest = path.join(dir, 'skills');
    const store = await openStore(dest);
    const good = await publish(store, { 'docs/a/SKILL.md': 'good\n' });
    const abandoned = await store.begin();
    await abandoned.writeFile('docs/a/SKILL.md', Buffer.from('half'));
    await store.close();
    stores.pop();
    const snapshots = snapshotsDirOf(dest);
    await mkdir(path.join(snapshots, '29991231T235959999Z-abcdef'));
    await symlink(`.skills.snapshots/${good}`, path.join(dir, '.skills.link-999-cafe'));
    const logged: string[] = [];
    await openStore(dest, { log: (line) => logged.push(line) });
    expect((await readdir(snapshots)).sort()).toEqual(['.lock', good]);
    expect(await readdir(dir)).not.toContain('.skills.link-999-cafe');
    expect(await readlink(dest)).toBe(`.skills.snapshots/${good}`);
    expect(logged.join('\n')).toMatch(/removing \.build-.*interrupted run/);
  });

  it('keeps the last two snapshots, and a replaced one until retainMs has passed', async () => {
    const dir = await dirs.make();
    const dest = path.join(dir, 'skills');
    const clock = { ms: Date.parse('2026-12-01T00:00:00Z') };
    const store = await openStore(dest, { retainMs: 60_000, now: () => clock.ms });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(await publish(store, { 'docs/a/SKILL.md': `v${i}\n` }));
      clock.ms += 1_000;
    }
    // All replaced within the last minute: a reader that resolved DEST then may still be reading.
    expect((await readdir(snapshotsDirOf(dest))).filter((name) => !name.startsWith('.')).sort()).toEqual(ids);
    clock.ms += 120_000;
    ids.push(await publish(store, { 'docs/a/SKILL.md': 'v4\n' }));
    expect((await readdir(snapshotsDirOf(dest))).filter((name) => !name.startsWith('.')).sort()).toEqual(ids.slice(-2));
  });

  it('refuses a DEST it did not make: a non-empty directory, a file, a foreign symlink; an empty directory is replaced', async () => {
    const dir = await dirs.make();
    await mkdir(path.join(dir, 'full'));
    await writeFile(path.join(dir, 'full', 'mine.txt'), 'keep me');
    await writeFile(path.join(dir, 'file'), 'x');
    await symlink('/etc', path.join(dir, 'link'));
    for (const name of ['full', 'file', 'link']) await expect(openStore(path.join(dir, name)), name).rejects.toBeInstanceOf(ConfigError);
    expect(await readFile(path.join(dir, 'full', 'mine.txt'), 'utf8')).toBe('keep me');
    await mkdir(path.join(dir, 'empty'));
    const id = await publish(await openStore(path.join(dir, 'empty')), { 'skills.json': '{}\n' });
    expect(await readlink(path.join(dir, 'empty'))).toBe(`.empty.snapshots/${id}`);
  });

  it('one writer per DEST: a second store on it is refused while the first holds the lock', async () => {
    const dir = await dirs.make();
    const dest = path.join(dir, 'skills');
    await openStore(dest);
    await expect(SnapshotStore.open({ dest, log: () => {} })).rejects.toBeInstanceOf(SnapshotLockedError);
  });

  it('refuses unsafe relative paths before touching the disk', async () => {
    const dir = await dirs.make();
    const build = await (await openStore(path.join(dir, 'skills'))).begin();
    for (const bad of ['../escape', 'a/../../b', '/abs', 'a//b', 'a/./b']) await expect(build.writeFile(bad, Buffer.from('x')), bad).rejects.toBeInstanceOf(ConfigError);
    expect(await readdir(path.join(dir))).toEqual(['.skills.snapshots']);
    await build.abort();
  });
});

describe('skills-mount verify', () => {
  async function published(): Promise<{ dest: string; root: string }> {
    const dir = await dirs.make();
    const dest = path.join(dir, 'skills');
    const store = await openStore(dest);
    const id = await publish(store, { 'docs/a/SKILL.md': 'alpha\n', 'docs/a/refs/b.md': 'beta\n', 'skills.json': '{}\n' });
    return { dest, root: path.join(snapshotsDirOf(dest), id) };
  }

  it('passes on an untouched snapshot', async () => {
    const { dest } = await published();
    const report = await verifySnapshot(dest);
    expect(report.problems).toEqual([]);
    expect(report.files).toBe(3);
  });

  it('names a byte changed, a file removed, a file added, a symlink, and a mode made writable', async () => {
    const { dest, root } = await published();
    await chmod(root, 0o755);
    await chmod(path.join(root, 'docs/a'), 0o755);
    await chmod(path.join(root, 'docs/a/SKILL.md'), 0o644);
    await writeFile(path.join(root, 'docs/a/SKILL.md'), 'alphA\n');
    await chmod(path.join(root, 'docs/a/refs'), 0o755);
    await unlink(path.join(root, 'docs/a/refs/b.md'));
    await writeFile(path.join(root, 'docs/a/extra.md'), 'sneaked in');
    await symlink('/etc/passwd', path.join(root, 'docs/a/passwd'));
    const report = await verifySnapshot(dest);
    const byPath = Object.fromEntries(report.problems.map((problem) => [problem.path, problem]));
    expect(byPath['docs/a/SKILL.md']).toMatchObject({ kind: 'differs', detail: expect.stringMatching(/mode 0644, expected 0444.*hashes to sha256:/) });
    expect(byPath['docs/a/refs/b.md']).toMatchObject({ kind: 'missing' });
    expect(byPath['docs/a/extra.md']).toMatchObject({ kind: 'extra' });
    expect(byPath['docs/a/passwd']).toMatchObject({ kind: 'extra', detail: expect.stringMatching(/symbolic link/) });
    expect(byPath['docs/a']).toMatchObject({ kind: 'differs', detail: 'mode 0755, expected 0555' });
  });

  it('a DEST that is no snapshot is a usage error; a snapshot without its manifest is a problem', async () => {
    const dir = await dirs.make();
    await expect(verifySnapshot(path.join(dir, 'nothing'))).rejects.toBeInstanceOf(ConfigError);
    const { dest, root } = await published();
    await chmod(root, 0o755);
    await unlink(path.join(root, MANIFEST_NAME));
    expect((await verifySnapshot(dest)).problems).toEqual([expect.objectContaining({ path: MANIFEST_NAME, kind: 'missing' })]);
  });
});
