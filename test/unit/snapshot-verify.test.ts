// `skills-mount verify` beyond the published link (issue 27, items 4 and 5): a copy of a
// snapshot (cp -r, an image, rsync) is verified as the link is, and the report says which of the
// two it was given; --expect checks the manifest against the digest snapshot printed, which a
// manifest rewritten by whoever can write the folder cannot match; and verify names what others
// than the user running it (and root) can change.
import { chmod, cp, mkdir, readFile, realpath, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { controlWarning, renderVerifyText } from '../../src/cli/verify-command.js';
import { ConfigError } from '../../src/errors.js';
import { sha256Digest } from '../../src/format/digest.js';
import { nodeSnapshotFs } from '../../src/snapshot/snapshot-fs.js';
import { MANIFEST_NAME, manifestText, type SnapshotManifest } from '../../src/snapshot/snapshot-manifest.js';
import { SnapshotStore } from '../../src/snapshot/snapshot-store.js';
import { verifySnapshot } from '../../src/snapshot/snapshot-verify.js';
import { run } from '../support/fuse-harness.js';
import { canActAsOtherUser, OTHER_UID } from '../support/other-user.js';
import { manifestOf } from '../support/snapshot-manifest.js';
import { makeTempDir } from '../support/temp-dir.js';

const made: string[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) await nodeSnapshotFs.removeTree(dir);
});

async function tempDir(): Promise<string> {
  const dir = await makeTempDir('snapshot-verify-');
  made.push(dir);
  return dir;
}

const FILES: Record<string, string> = { 'docs/a/SKILL.md': 'alpha\n', 'docs/a/x.txt': 'the real bytes\n', 'skills.json': '{}\n' };


/** A published snapshot of FILES at DIR/skills, and the digest of its manifest that commit gave. */
async function published(): Promise<{ dest: string; id: string; digest: string }> {
  const dest = path.join(await tempDir(), 'skills');
  const store = await SnapshotStore.open({ dest, log: () => {} });
  try {
    const build = await store.begin();
    for (const [file, text] of Object.entries(FILES)) await build.writeFile(file, Buffer.from(text));
    const digest = await build.commit(manifestOf(build.id, FILES, build.directoryPaths(), (file) => file === 'skills.json'));
    return { dest, id: build.id, digest };
  } finally {
    await store.close();
  }
}

describe('a copied snapshot (item 4)', () => {
  it('cp -r of the folder DEST leads to verifies as the link does, and the report says it was given a folder', async () => {
    const { dest, id, digest } = await published();
    const copy = path.join(await tempDir(), 'copy');
    await cp(await realpath(dest), copy, { recursive: true });
    const report = await verifySnapshot(copy);
    expect(report).toMatchObject({ dest: copy, given: 'folder', dir: copy, id, files: 3, problems: [] });
    expect(renderVerifyText(report)).toBe(`snapshot ${id} in ${copy} (a folder holding .snapshot.json, not a published link): verified (3 files, 0.0 MiB); manifest ${digest}\n`);
    const linked = await verifySnapshot(dest);
    expect(linked).toMatchObject({ given: 'link', id, problems: [] });
    expect(renderVerifyText(linked)).toBe(`snapshot ${id} at ${dest} (the published link, to ${await realpath(dest)}): verified (3 files, 0.0 MiB); manifest ${digest}\n`);
  });

  it('a byte changed in the copy is named, as in the published snapshot', async () => {
    const { dest } = await published();
    const copy = path.join(await tempDir(), 'copy');
    await cp(await realpath(dest), copy, { recursive: true });
    await chmod(path.join(copy, 'docs/a/x.txt'), 0o644);
    await writeFile(path.join(copy, 'docs/a/x.txt'), 'the real bytez\n');
    await chmod(path.join(copy, 'docs/a/x.txt'), 0o444);
    const report = await verifySnapshot(copy);
    expect(report.problems).toEqual([{ path: 'docs/a/x.txt', kind: 'differs', detail: expect.stringMatching(/^hashes to sha256:/) }]);
  });

  it('a folder without .snapshot.json, a file, or a link that is not a published one are usage errors that say what verify takes', async () => {
    const dir = await tempDir();
    await expect(verifySnapshot(dir)).rejects.toThrow(new ConfigError(`${dir} is a folder without .snapshot.json: not a snapshot, nor a copy of one (give the published link, or a folder holding .snapshot.json)`));
    await writeFile(path.join(dir, 'file'), 'x');
    await expect(verifySnapshot(path.join(dir, 'file'))).rejects.toThrow(/is a regular file, not a snapshot/);
    const { dest } = await published();
    await symlink(await realpath(dest), path.join(dir, 'link'));
    await expect(verifySnapshot(path.join(dir, 'link'))).rejects.toThrow(`${dir}/link is a symbolic link, but not one \`skills-mount snapshot\` published (to .link.snapshots/<id>); to check the folder it leads to, give that folder`);
  });
});

/** The attack of item 5: the published folder swapped for a copy with other bytes in one file and a manifest rewritten to match them. */
async function swapWithAttackersCopy(dest: string): Promise<void> {
  const real = await realpath(dest);
  await rename(real, `${real}.old`);
  await cp(`${real}.old`, real, { recursive: true });
  for (const dir of [real, path.join(real, 'docs'), path.join(real, 'docs/a')]) await chmod(dir, 0o755);
  const bytes = Buffer.from('ATTACKER BYTES\n');
  await chmod(path.join(real, 'docs/a/x.txt'), 0o644);
  await writeFile(path.join(real, 'docs/a/x.txt'), bytes);
  const manifestPath = path.join(real, MANIFEST_NAME);
  const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as SnapshotManifest;
  manifest.files = manifest.files.map((file) => (file.path === 'docs/a/x.txt' ? { ...file, sizeBytes: bytes.length, sha256: sha256Digest(bytes) } : file));
  await chmod(manifestPath, 0o644);
  await writeFile(manifestPath, manifestText(manifest));
  for (const file of [manifestPath, path.join(real, 'docs/a/x.txt')]) await chmod(file, 0o444);
  for (const dir of [path.join(real, 'docs/a'), path.join(real, 'docs'), real]) await chmod(dir, 0o555);
}

describe('--expect: the digest of the manifest snapshot printed (item 5)', () => {
  it('commit gives the sha256 of the exact .snapshot.json bytes; verify --expect with it passes and says so', async () => {
    const { dest, digest } = await published();
    expect(digest).toBe(sha256Digest(await readFile(path.join(dest, MANIFEST_NAME))));
    const report = await verifySnapshot(dest, { expectDigest: digest });
    expect(report).toMatchObject({ manifestDigest: digest, expectedDigest: digest, problems: [] });
    expect(renderVerifyText(report)).toMatch(new RegExp(`: verified \\(3 files, 0\\.0 MiB\\); manifest ${digest}, as --expect says\\n$`));
  });

  it('a manifest rewritten to match changed bytes passes a re-hash, and fails --expect, naming the manifest', async () => {
    const { dest, digest } = await published();
    await swapWithAttackersCopy(dest);
    // What the issue saw: the folder agrees with its own manifest.
    expect((await verifySnapshot(dest)).problems).toEqual([]);
    const report = await verifySnapshot(dest, { expectDigest: digest });
    expect(report.problems).toEqual([
      { path: MANIFEST_NAME, kind: 'differs', detail: `hashes to ${report.manifestDigest}, not the ${digest} --expect says: not the snapshot you expect (another one, or its manifest was rewritten)` },
    ]);
    expect(renderVerifyText(report)).toMatch(/^differs +\.snapshot\.json: hashes to sha256:/);
  });
});

describe('who else can change what verify checked (item 5)', () => {
  it('a snapshot only you and root can change: no warning; a copy under a folder others can write (0777, no sticky): verified, with a warning naming that folder', async () => {
    const { dest } = await published();
    const report = await verifySnapshot(dest);
    expect(report.controlledByOthers).toEqual([]);
    expect(controlWarning(report)).toBeUndefined();
    const open = path.join(await tempDir(), 'open');
    await mkdir(open);
    await chmod(open, 0o777);
    const copy = path.join(open, 'copy');
    await cp(await realpath(dest), copy, { recursive: true });
    const copied = await verifySnapshot(copy);
    expect(copied.problems).toEqual([]);
    expect(copied.controlledByOthers).toEqual([{ path: open, ownerUid: process.getuid!(), mode: 0o777, reason: 'writable' }]);
    expect(renderVerifyText(copied).split('\n')[0]).toBe(
      `warning: others than you and root can change this snapshot: ${open} (owner uid ${process.getuid!()}, mode 0777); its own manifest proves nothing against them: check it with --expect (the digest snapshot printed) or --against-server`,
    );
  });

  it('a manifest others can write (0666) and a folder in the snapshot others can write are named; a sticky folder above it is fine', async () => {
    const { dest } = await published();
    const sticky = path.join(await tempDir(), 'sticky');
    await mkdir(sticky);
    await chmod(sticky, 0o1777);
    const copy = path.join(sticky, 'copy');
    await cp(await realpath(dest), copy, { recursive: true });
    await chmod(path.join(copy, MANIFEST_NAME), 0o666);
    await chmod(path.join(copy, 'docs'), 0o777);
    const report = await verifySnapshot(copy);
    expect(report.controlledByOthers.map((entry) => [entry.path, entry.mode, entry.reason])).toEqual([
      [path.join(copy, MANIFEST_NAME), 0o666, 'writable'],
      [path.join(copy, 'docs'), 0o777, 'writable'],
    ]);
    expect(renderVerifyText(report)).toMatch(/^warning: others than you and root can change this snapshot: .*\/copy\/\.snapshot\.json \(owner uid \d+, mode 0666\), .*\/copy\/docs \(owner uid \d+, mode 0777\);/m);
  });

  it.runIf(canActAsOtherUser)("a copy another user owns (uid 65534) is named, its folders and files; root's are fine", async () => {
    const { dest } = await published();
    const copy = path.join(await tempDir(), 'copy');
    await cp(await realpath(dest), copy, { recursive: true });
    // Root's entries count as the user's own, whoever runs verify.
    if (process.getuid!() === 0) expect((await verifySnapshot(copy, { uid: 4242 })).controlledByOthers).toEqual([]);
    await run('chown', ['-R', `${OTHER_UID}:${OTHER_UID}`, copy]);
    const report = await verifySnapshot(copy);
    expect(report.problems).toEqual([]);
    expect(report.controlledByOthers.map((entry) => path.relative(copy, entry.path))).toEqual(['', MANIFEST_NAME, 'docs', 'docs/a', 'docs/a/SKILL.md', 'docs/a/x.txt', 'skills.json']);
    expect(report.controlledByOthers.every((entry) => entry.ownerUid === OTHER_UID && entry.reason === 'owner')).toBe(true);
    expect(controlWarning(report)).toMatch(new RegExp(`^warning: others than you and root can change this snapshot: ${copy} \\(owner uid ${OTHER_UID}, mode 0555\\), .* and 4 more; its own manifest proves nothing`));
  });
});
