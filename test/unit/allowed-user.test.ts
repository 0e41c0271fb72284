// --allow-user's user: a name through NSS, a bare uid as it is, a name nobody has refused;
// and the warning when the mountpoint's parents do not let that user through.
import { chmod, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePasswdLine, resolveAllowedUser, unreachableAncestor } from '../../src/config/allowed-user.js';
import { ConfigError } from '../../src/errors.js';
import { withTempDir } from '../support/temp-dir.js';

describe('the user --allow-user names', () => {
  it('is looked up by name or uid; a uid without an entry is its own group; an unknown name is refused', async () => {
    const passwd: Record<string, string> = { nobody: 'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n', '1000': 'me:x:1000:100::/home/me:/bin/sh\n' };
    const lookup = async (key: string) => passwd[key];
    expect(await resolveAllowedUser('nobody', lookup)).toEqual({ name: 'nobody', uid: 65534, gid: 65534 });
    expect(await resolveAllowedUser('1000', lookup)).toEqual({ name: '1000', uid: 1000, gid: 100 });
    expect(await resolveAllowedUser('4242', lookup)).toEqual({ name: '4242', uid: 4242, gid: 4242 });
    await expect(resolveAllowedUser('ghost', lookup)).rejects.toThrow(ConfigError);
    await expect(resolveAllowedUser('ghost', lookup)).rejects.toThrow(/--allow-user ghost: no such user/);
    await expect(resolveAllowedUser('99999999999', lookup)).rejects.toThrow(/not a valid uid/);
  });

  it('resolves through the real getent', async () => {
    expect(await resolveAllowedUser('root')).toEqual({ name: 'root', uid: 0, gid: 0 });
  });

  it('reads uid and gid of a passwd line, nothing of a malformed one', () => {
    expect(parsePasswdLine('a:x:1:2:::')).toEqual({ uid: 1, gid: 2 });
    expect(parsePasswdLine('a:x:one:2')).toBeUndefined();
    expect(parsePasswdLine(undefined)).toBeUndefined();
    expect(parsePasswdLine('')).toBeUndefined();
  });

  it('names the first parent that does not let the user through, and none when all do', async () => {
    await withTempDir('skills-mount-allowed-user-', async (tmp) => {
      const closed = path.join(tmp, 'closed');
      const mountpoint = path.join(closed, 'open', 'mnt');
      await mkdir(path.dirname(mountpoint), { recursive: true });
      await chmod(tmp, 0o755);
      await chmod(closed, 0o700);
      const stranger = { name: 'x', uid: 4242, gid: 4242 };
      expect(await unreachableAncestor(mountpoint, stranger)).toMatch(new RegExp(`^${closed} \\(mode 0700, owner uid \\d+\\) does not let uid 4242 through$`));
      await chmod(closed, 0o711);
      expect(await unreachableAncestor(mountpoint, stranger)).toBeUndefined();
      expect(await unreachableAncestor(mountpoint, { name: 'root', uid: 0, gid: 0 })).toBeUndefined();
    });
  });
});
