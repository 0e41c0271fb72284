// One lock file per protected directory, without flock(2): created with O_EXCL holding
// "pid\nhost\ntoken\n" and, for a lock taken for a moment (the disk cache removing a subtree),
// a fourth line naming why. A lock whose pid no longer runs on this host is stale and is taken over
// (removed only if it is still the same file, by inode); two takers of one stale lock in the
// same instant can both win, the inode check narrows that to the gap between lstat and unlink.
// The disk cache refuses a held lock at once; the approvals store waits for it.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, rm, unlink, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { SkillsMountError } from './errors.js';
import { CREATE_FLAGS, errorCode, isAlive, lstatOrUndefined } from './private-files.js';

/** A lock another process holds: which, and who. Each caller's subclass names its own case. */
export abstract class LockHeldError extends SkillsMountError {
  constructor(
    message: string,
    /** The lock file. */
    readonly lockPath: string,
    /** The holder's pid, when the lock names one. */
    readonly holderPid: number | undefined,
  ) {
    super(message);
  }
}

export interface LockHolder {
  pid: number | undefined;
  host: string | undefined;
  token: string | undefined;
  /** The fourth line: why a short-lived lock was taken (e.g. "prune"); undefined for a daemon's lock. */
  purpose: string | undefined;
  ino: number;
  ageMs: number;
}

/** A lock file with no pid yet may be one another process is still writing; past this age it is debris. */
const LOCK_SETTLE_MS = 5_000;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Takeovers in a row before giving up: a lock that keeps changing hands is not ours to take. */
const MAX_ATTEMPTS = 5;

/**
 * One attempt to take the lock: its token, or who holds it. `onStale` hears of each stale lock
 * taken over; `purpose` (one word) is written as the fourth line. Throws when the lock keeps changing hands.
 */
export async function tryLock(
  lockPath: string,
  onStale: (holder: LockHolder) => void = () => {},
  purpose?: string,
): Promise<{ token: string } | { heldBy: string; holder: LockHolder }> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const token = randomBytes(8).toString('hex');
    let handle: FileHandle | undefined;
    try {
      handle = await open(lockPath, CREATE_FLAGS, 0o600);
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
    if (handle !== undefined) {
      try {
        await handle.writeFile(`${process.pid}\n${hostname()}\n${token}\n${purpose === undefined ? '' : `${purpose}\n`}`);
        await handle.sync();
      } catch (error) {
        await handle.close().catch(() => {});
        await unlink(lockPath).catch(() => {});
        throw error;
      }
      await handle.close();
      return { token };
    }
    const holder = await readLock(lockPath);
    if (holder === undefined) continue; // released since: try again at once
    const heldBy = lockHeldBy(holder);
    if (heldBy !== undefined) return { heldBy, holder };
    const now = await lstatOrUndefined(lockPath);
    if (now !== undefined && now.ino === holder.ino) await rm(lockPath, { recursive: true, force: true });
    onStale(holder);
  }
  throw new Error(`the lock file ${lockPath} keeps changing hands`);
}

/** Who holds the lock, in words; undefined when it is stale. */
export function lockHeldBy(holder: LockHolder): string | undefined {
  if (holder.pid === undefined) return holder.ageMs < LOCK_SETTLE_MS ? 'a process still writing its pid' : undefined;
  if (holder.host !== undefined && holder.host !== hostname()) return `pid ${holder.pid} on host ${holder.host}`;
  if (holder.pid === process.pid) return `this process (pid ${holder.pid})`;
  return isAlive(holder.pid) ? `pid ${holder.pid}` : undefined;
}

/** The lock's holder as the file says, or undefined when there is no lock. */
export async function readLock(lockPath: string): Promise<LockHolder | undefined> {
  const stats = await lstatOrUndefined(lockPath);
  if (stats === undefined) return undefined;
  const holder: LockHolder = { pid: undefined, host: undefined, token: undefined, purpose: undefined, ino: stats.ino, ageMs: Date.now() - stats.mtimeMs };
  if (!stats.isFile()) return holder;
  try {
    const handle = await open(lockPath, READ_FLAGS);
    try {
      const buffer = Buffer.alloc(512);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      const [pidLine, hostLine, tokenLine, purposeLine] = buffer.subarray(0, bytesRead).toString('utf8').split('\n');
      if (pidLine !== undefined && /^[1-9][0-9]{0,9}$/.test(pidLine)) holder.pid = Number(pidLine);
      if (hostLine !== undefined && hostLine !== '') holder.host = hostLine;
      if (tokenLine !== undefined && tokenLine !== '') holder.token = tokenLine;
      if (purposeLine !== undefined && purposeLine !== '') holder.purpose = purposeLine;
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
  }
  return holder;
}

/** Removes the lock if it is still the one `token` took (a takeover by someone else is left alone). */
export async function releaseLock(lockPath: string, token: string): Promise<void> {
  const holder = await readLock(lockPath);
  if (holder?.token === token && holder.pid === process.pid) await unlink(lockPath).catch(() => {});
}
