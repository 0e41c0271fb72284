// Who else controls a path: an entry owned by another user (root aside) or writable by others,
// and the walk over every directory and link on the way to a path, as the snapshot refusals and
// verify's warning apply it: a sticky, root-owned folder on the way is fine, an open one is not.
import { chmod, chown, lchown, mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { othersCanWrite, ownerProblem, pathControl } from '../../src/path-control.js';
import { canActAsOtherUser, OTHER_UID } from '../support/other-user.js';
import { TempDirs } from '../support/temp-dir.js';

const dirs = new TempDirs('path-control-');
afterEach(() => dirs.removeAll());
const uid = process.getuid!();

describe('the rules for one entry', () => {
  it('another owner is a problem; root counts as this user only where allowed', () => {
    expect(ownerProblem({ uid: 1000, mode: 0o755 }, 1000)).toBeUndefined();
    expect(ownerProblem({ uid: 65534, mode: 0o755 }, 1000)).toBe('belongs to uid 65534, not to this user (uid 1000)');
    expect(ownerProblem({ uid: 0, mode: 0o755 }, 1000)).toBe('belongs to uid 0, not to this user (uid 1000)');
    expect(ownerProblem({ uid: 0, mode: 0o755 }, 1000, { rootAllowed: true })).toBeUndefined();
    expect(ownerProblem({ uid: 65534, mode: 0o755 }, 1000, { rootAllowed: true })).toBe('belongs to uid 65534, not to this user (uid 1000) or root');
    expect(ownerProblem({ uid: 65534, mode: 0o755 }, undefined)).toBeUndefined();
  });

  it('group or other write bits are a problem; the sticky bit excuses them only where asked', () => {
    expect(othersCanWrite({ uid: 0, mode: 0o755 })).toBe(false);
    expect(othersCanWrite({ uid: 0, mode: 0o775 })).toBe(true);
    expect(othersCanWrite({ uid: 0, mode: 0o757 })).toBe(true);
    expect(othersCanWrite({ uid: 0, mode: 0o1777 })).toBe(true);
    expect(othersCanWrite({ uid: 0, mode: 0o1777 }, { stickyExcuses: true })).toBe(false);
    expect(othersCanWrite({ uid: 0, mode: 0o777 }, { stickyExcuses: true })).toBe(true);
  });
});

describe('the walk to a path', () => {
  it('finds nothing below a private folder; a sticky folder on the way is fine, as the target (strict) it is not', async () => {
    const base = await dirs.make();
    const shared = path.join(base, 'shared');
    await mkdir(path.join(shared, 'mine'), { recursive: true });
    await chmod(shared, 0o1777);
    await chmod(path.join(shared, 'mine'), 0o755);
    expect(await pathControl(path.join(shared, 'mine'), { uid, strictTarget: true })).toEqual([]);
    expect(await pathControl(shared, { uid, strictTarget: false })).toEqual([]);
    expect(await pathControl(shared, { uid, strictTarget: true })).toEqual([{ path: shared, kind: 'directory', ownerUid: uid, mode: 0o1777, reason: 'writable', target: true }]);
  });

  it('a folder on the way that others can write without the sticky bit is found, however deep below it the path is', async () => {
    const base = await dirs.make();
    const open = path.join(base, 'open');
    await mkdir(path.join(open, 'a', 'b'), { recursive: true });
    await chmod(open, 0o777);
    expect(await pathControl(path.join(open, 'a', 'b'), { uid, strictTarget: true })).toEqual([{ path: open, kind: 'directory', ownerUid: uid, mode: 0o777, reason: 'writable', target: false }]);
  });

  it('follows links: what is checked is where the path leads, and the missing rest is not walked', async () => {
    const base = await dirs.make();
    const open = path.join(base, 'open');
    await mkdir(path.join(open, 'real'), { recursive: true });
    await chmod(open, 0o777);
    await symlink(path.join(open, 'real'), path.join(base, 'link'));
    await symlink('open/real', path.join(base, 'relative'));
    for (const via of ['link', 'relative']) {
      expect(await pathControl(path.join(base, via, 'missing', 'deeper'), { uid, strictTarget: true }), via).toEqual([
        { path: open, kind: 'directory', ownerUid: uid, mode: 0o777, reason: 'writable', target: false },
      ]);
    }
  });

  it.runIf(canActAsOtherUser)('a folder or a link on the way that another user owns is found; root-owned ones are fine', async () => {
    const base = await dirs.make();
    const theirs = path.join(base, 'theirs');
    await mkdir(path.join(theirs, 'inner'), { recursive: true });
    await chown(theirs, OTHER_UID, OTHER_UID);
    await symlink(path.join(theirs, 'inner'), path.join(base, 'link'));
    await lchown(path.join(base, 'link'), OTHER_UID, OTHER_UID);
    expect(await pathControl(path.join(base, 'link'), { uid, strictTarget: true })).toEqual([
      { path: path.join(base, 'link'), kind: 'symbolic link', ownerUid: OTHER_UID, mode: expect.any(Number), reason: 'owner', target: false },
      { path: theirs, kind: 'directory', ownerUid: OTHER_UID, mode: 0o755, reason: 'owner', target: false },
    ]);
    if (uid !== 0) return;
    // As another user, root's folders (/, /tmp) are not findings.
    expect(await pathControl(base, { uid: 4242, strictTarget: false })).toEqual([]);
  });
});
