// --allow-user USER|UID: who that is (uid and primary group), and whether the path to the
// mountpoint lets them reach it. A name is looked up through NSS (`getent passwd`, so LDAP
// and sssd users resolve too); a uid with no passwd entry (a container's agent uid) is
// taken as it is, with its own number as group.
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors.js';

export interface AllowedUser {
  /** As given on the command line (a name or a uid), for messages. */
  name: string;
  uid: number;
  gid: number;
}

const LOOKUP_TIMEOUT_MS = 5_000;

export async function resolveAllowedUser(text: string, lookup: (key: string) => Promise<string | undefined> = getentPasswd): Promise<AllowedUser> {
  const entry = parsePasswdLine(await lookup(text));
  if (entry) return { name: text, uid: entry.uid, gid: entry.gid };
  if (/^[0-9]+$/.test(text)) {
    const uid = Number(text);
    if (uid > 0xfffffffe) throw new ConfigError(`--allow-user ${text}: not a valid uid`);
    return { name: text, uid, gid: uid };
  }
  throw new ConfigError(`--allow-user ${text}: no such user (getent passwd ${text} finds nothing); give an existing user name or a numeric uid`);
}

/** uid and gid of one `name:x:uid:gid:...` line; undefined for no line or a malformed one. */
export function parsePasswdLine(line: string | undefined): { uid: number; gid: number } | undefined {
  const fields = line?.split('\n')[0]?.split(':');
  if (!fields || fields.length < 4 || !/^[0-9]+$/.test(fields[2]!) || !/^[0-9]+$/.test(fields[3]!)) return undefined;
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

function getentPasswd(key: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('getent', ['passwd', key], { timeout: LOOKUP_TIMEOUT_MS }, (error, stdout) => resolve(error ? undefined : stdout));
  });
}

/**
 * The first directory above `mountpoint` that `user` cannot pass through (no search
 * permission for them), described; undefined when they can reach it. Root passes anywhere.
 * Groups beyond the user's primary one are not looked up: a miss here is a warning only.
 */
export async function unreachableAncestor(mountpoint: string, user: AllowedUser): Promise<string | undefined> {
  if (user.uid === 0) return undefined;
  for (let dir = path.dirname(mountpoint); ; dir = path.dirname(dir)) {
    const info = await stat(dir).catch(() => undefined);
    if (info) {
      const bit = info.uid === user.uid ? 0o100 : info.gid === user.gid ? 0o010 : 0o001;
      if ((info.mode & bit) === 0) {
        return `${dir} (mode ${(info.mode & 0o777).toString(8).padStart(4, '0')}, owner uid ${info.uid}) does not let uid ${user.uid} through`;
      }
    }
    if (dir === path.dirname(dir)) return undefined;
  }
}
