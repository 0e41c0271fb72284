// A snapshot is never written where another user could swap what it publishes (issue 27, item
// 5): a snapshots folder, a lock file, DEST's folder or a folder on the way to it owned by
// someone else (root aside) or writable by others is refused, with its path, owner, mode and
// what to do; a sticky, root-owned folder further up (/tmp) is fine.
import { chmod, chown, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { ControlledPathError } from '../../src/path-control.js';
import { nodeSnapshotFs } from '../../src/snapshot/snapshot-fs.js';
import { SnapshotStore, snapshotsDirOf } from '../../src/snapshot/snapshot-store.js';
import { asOtherUser, canActAsOtherUser, OTHER_UID } from '../support/other-user.js';
import { makeTempDir } from '../support/temp-dir.js';

const uid = process.getuid!();
const made: string[] = [];
const stores: SnapshotStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of made.splice(0)) await nodeSnapshotFs.removeTree(dir);
});

async function base(): Promise<string> {
  const dir = await makeTempDir('snapshot-refusals-');
  made.push(dir);
  return dir;
}

async function open(dest: string, options: { allowSharedParent?: boolean; log?: (line: string) => void } = {}): Promise<SnapshotStore> {
  const store = await SnapshotStore.open({ dest, log: () => {}, ...options });
  stores.push(store);
  return store;
}

/** What open() refused with; fails the test when it did not refuse. */
async function refusal(dest: string, options: { allowSharedParent?: boolean } = {}): Promise<ControlledPathError> {
  const error = await open(dest, options).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, `${dest} was not refused`).toBeInstanceOf(ControlledPathError);
  expect(error).toBeInstanceOf(ConfigError); // exit 2
  return error as ControlledPathError;
}

describe('the snapshots folder', () => {
  it('world-writable (0777, ours): refused, naming it, its owner and mode, and chmod go-w; nothing written in it', async () => {
    const dest = path.join(await base(), 'skills');
    await mkdir(snapshotsDirOf(dest));
    await chmod(snapshotsDirOf(dest), 0o777);
    const error = await refusal(dest);
    expect(error.message).toBe(
      `snapshot: refusing ${snapshotsDirOf(dest)}, the snapshots folder of ${dest} (owner uid ${uid}, mode 0777): it can be written by other users; they could replace the snapshots in it, and so what ${dest} serves. Check what it holds, then chmod go-w ${snapshotsDirOf(dest)} and run again.`,
    );
    expect(error).toMatchObject({ path: snapshotsDirOf(dest), ownerUid: uid, mode: 0o777 });
    expect(await readdir(snapshotsDirOf(dest))).toEqual([]);
  });

  it.runIf(canActAsOtherUser)('made by another user (uid 65534, as in the issue): refused, naming that uid; nothing written in it', async () => {
    const dir = await base();
    const dest = path.join(dir, 'd3');
    // The folder was open to them once (as a shared folder is), then closed: their folder stays.
    await chmod(dir, 0o1777);
    await asOtherUser('mkdir', ['-m', '0755', snapshotsDirOf(dest)]);
    await chmod(dir, 0o700);
    const error = await refusal(dest);
    expect(error.message).toContain(`snapshot: refusing ${snapshotsDirOf(dest)}, the snapshots folder of ${dest} (owner uid ${OTHER_UID}, mode 0755): it belongs to uid ${OTHER_UID}, not to you (uid ${uid})`);
    expect(error.message).toContain(`Check what it holds, then remove it (rm -rf ${snapshotsDirOf(dest)}) and run again: a new one is made.`);
    expect(await readdir(snapshotsDirOf(dest))).toEqual([]);
  });
});

describe('the lock file', () => {
  it.runIf(canActAsOtherUser)('planted by another user: refused, naming it and its owner, and left where it is', async () => {
    const dir = await base();
    const dest = path.join(dir, 'skills');
    const snapshots = snapshotsDirOf(dest);
    await mkdir(snapshots, { mode: 0o755 });
    // Open to them for a moment (as a folder once made 0777 was), then closed: their lock stays.
    await chmod(dir, 0o711);
    await chmod(snapshots, 0o777);
    await asOtherUser('sh', ['-c', `umask 022; printf '1\\nhost\\ntoken\\n' > ${snapshots}/.lock`]);
    await chmod(snapshots, 0o755);
    await chmod(dir, 0o700);
    const error = await refusal(dest);
    expect(error.message).toBe(
      `snapshot: refusing the lock file ${snapshots}/.lock (owner uid ${OTHER_UID}, mode 0644): it belongs to uid ${OTHER_UID}, not to you (uid ${uid})${uid === 0 ? '' : ' or root'}; that user could hold or take over the lock of ${dest} at will. Someone else put it there or opened it: check the snapshots folder, remove the lock file and run again.`,
    );
    expect(await readdir(snapshots)).toEqual(['.lock']);
  });

  it('writable by others (ours, 0666): refused', async () => {
    const dest = path.join(await base(), 'skills');
    await mkdir(snapshotsDirOf(dest), { mode: 0o755 });
    await writeFile(path.join(snapshotsDirOf(dest), '.lock'), '1\nhost\ntoken\n', { mode: 0o666 });
    await chmod(path.join(snapshotsDirOf(dest), '.lock'), 0o666);
    expect((await refusal(dest)).message).toMatch(/^snapshot: refusing the lock file .*\/\.lock \(owner uid \d+, mode 0666\): it can be written by other users;/);
  });
});

describe("DEST's folder and the folders on the way to it", () => {
  it('a DEST folder others can write (0777): refused, before anything is made there', async () => {
    const shared = path.join(await base(), 'shared');
    await mkdir(shared);
    await chmod(shared, 0o777);
    const dest = path.join(shared, 'skills');
    const error = await refusal(dest);
    expect(error.message).toBe(
      `snapshot: refusing DEST ${dest}: the folder it is in, ${shared} (owner uid ${uid}, mode 0777), can be written by other users; they could put their own files where DEST and its snapshots go. Choose a DEST in a folder only you can write (e.g. mkdir -m 700 DIR, DEST inside it), or chmod go-w ${shared}. If only you can reach it in fact (a Kubernetes emptyDir), --allow-shared-parent accepts it.`,
    );
    expect(await readdir(shared)).toEqual([]);
  });

  it('--allow-shared-parent accepts a DEST folder others can write (a Kubernetes emptyDir is 0777), saying so; the snapshots folder is checked still', async () => {
    const shared = path.join(await base(), 'shared');
    await mkdir(shared);
    await chmod(shared, 0o777);
    const lines: string[] = [];
    const store = await open(path.join(shared, 'current'), { allowSharedParent: true, log: (line) => lines.push(line) });
    expect(lines).toEqual([`snapshot: ${shared}, the folder DEST is in, can be written by other users (mode 0777); going on, as --allow-shared-parent says`]);
    await store.close();
    stores.splice(0);
    await chmod(snapshotsDirOf(path.join(shared, 'current')), 0o777);
    expect((await refusal(path.join(shared, 'current'), { allowSharedParent: true })).message).toMatch(/^snapshot: refusing .*\/\.current\.snapshots, the snapshots folder of .* \(owner uid \d+, mode 0777\): it can be written by other users/);
    // Not the folders above it.
    const top = path.join(await base(), 'top');
    await mkdir(path.join(top, 'inner'), { recursive: true });
    await chmod(top, 0o777);
    expect((await refusal(path.join(top, 'inner', 'current'), { allowSharedParent: true })).message).toMatch(/on the way to it \(owner uid \d+, mode 0777\) can be written by other users/);
  });

  it('a sticky shared DEST folder (1777, as in the issue) is refused too: others can make the names DEST needs first', async () => {
    const shared = path.join(await base(), 'shared');
    await mkdir(shared);
    await chmod(shared, 0o1777);
    const error = await refusal(path.join(shared, 'd3'));
    expect(error.message).toContain(`the folder it is in, ${shared} (owner uid ${uid}, mode 1777), can be written by other users; they could put their own files where DEST and its snapshots go (its sticky bit keeps them from renaming what is yours, not from making the names DEST needs first). Choose a DEST in a folder of your own`);
    expect(await readdir(shared)).toEqual([]);
  });

  it('a folder further up that others can write without the sticky bit is refused; with it (as /tmp is), the snapshot is written', async () => {
    const top = path.join(await base(), 'top');
    await mkdir(path.join(top, 'mine'), { recursive: true, mode: 0o755 });
    await chmod(top, 0o777);
    const dest = path.join(top, 'mine', 'skills');
    expect((await refusal(dest)).message).toBe(
      `snapshot: refusing DEST ${dest}: ${top} on the way to it (owner uid ${uid}, mode 0777) can be written by other users; they could rename the folders below it, and so replace what is published at DEST. chmod go-w ${top} (or chmod +t, so nobody can rename what is not theirs), or choose a DEST elsewhere.`,
    );
    await chmod(top, 0o1777);
    await open(dest);
  });
});
