// `skills-mount verify` beyond the published link (issue 27, items 4 and 5): a copy of a
// snapshot (cp -r, an image, rsync) is verified as the link is, and the report says which of the
// two it was given.
import { chmod, cp, realpath, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderVerifyText } from '../../src/cli/verify-command.js';
import { ConfigError } from '../../src/errors.js';
import { sha256Digest } from '../../src/format/digest.js';
import { nodeSnapshotFs } from '../../src/snapshot/snapshot-fs.js';
import { MANIFEST_FORMAT, type SnapshotManifest } from '../../src/snapshot/snapshot-manifest.js';
import { SnapshotStore } from '../../src/snapshot/snapshot-store.js';
import { verifySnapshot } from '../../src/snapshot/snapshot-verify.js';
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

function manifestOf(id: string, directories: string[]): SnapshotManifest {
  return {
    format: MANIFEST_FORMAT,
    id,
    createdAt: new Date().toISOString(),
    view: 'mount',
    includeDynamic: false,
    servers: [{ label: 'docs', state: 'connected' }],
    omitted: [],
    directories,
    files: Object.entries(FILES).map(([file, text]) => ({ path: file, sizeBytes: Buffer.byteLength(text), sha256: sha256Digest(Buffer.from(text)), verified: file !== 'skills.json' })),
  };
}

/** A published snapshot of FILES at DIR/skills. */
async function published(): Promise<{ dest: string; id: string }> {
  const dest = path.join(await tempDir(), 'skills');
  const store = await SnapshotStore.open({ dest, log: () => {} });
  try {
    const build = await store.begin();
    for (const [file, text] of Object.entries(FILES)) await build.writeFile(file, Buffer.from(text));
    await build.commit(manifestOf(build.id, build.directoryPaths()));
    return { dest, id: build.id };
  } finally {
    await store.close();
  }
}

describe('a copied snapshot (item 4)', () => {
  it('cp -r of the folder DEST leads to verifies as the link does, and the report says it was given a folder', async () => {
    const { dest, id } = await published();
    const copy = path.join(await tempDir(), 'copy');
    await cp(await realpath(dest), copy, { recursive: true });
    const report = await verifySnapshot(copy);
    expect(report).toMatchObject({ dest: copy, given: 'folder', dir: copy, id, files: 3, problems: [] });
    expect(renderVerifyText(report)).toBe(`snapshot ${id} in ${copy} (a folder holding .snapshot.json, not a published link): verified (3 files, 0.0 MiB)\n`);
    const linked = await verifySnapshot(dest);
    expect(linked).toMatchObject({ given: 'link', id, problems: [] });
    expect(renderVerifyText(linked)).toBe(`snapshot ${id} at ${dest} (the published link, to ${await realpath(dest)}): verified (3 files, 0.0 MiB)\n`);
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
