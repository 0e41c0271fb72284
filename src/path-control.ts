// Who besides this user can change what a path names: the owner and write-bit rules that the
// disk cache, the approvals store and snapshots share, and the walk that applies them to every
// directory and symbolic link on the way to a path. Knows nothing of what the paths hold.
import type { Stats } from 'node:fs';
import { lstat, readlink } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from './errors.js';
import { errorCode } from './private-files.js';

/** The owner and mode bits the rules read (fs.Stats has them). */
export type OwnedStats = Pick<Stats, 'uid' | 'mode'>;

/** What lets someone else change an entry: its owner, or write bits for group or others. */
export type ControlReason = 'owner' | 'writable';

/** One directory or link on the way to a path (or the path itself) that someone else controls. */
export interface PathControlFinding {
  /** As reached: the links before it resolved. */
  path: string;
  kind: 'directory' | 'symbolic link' | 'file';
  ownerUid: number;
  mode: number;
  reason: ControlReason;
  /** The path the walk was asked about (a directory), not one on the way to it. */
  target: boolean;
}

/** An entry another user controls where only this user (or root) may: refused, with what to do. */
export class ControlledPathError extends ConfigError {
  override name = 'ControlledPathError';

  constructor(
    message: string,
    readonly path: string,
    readonly ownerUid: number,
    readonly mode: number,
  ) {
    super(message);
  }
}

/** "the directory /x belongs to uid 1001", "the directory /y can be written by other users (mode 0777)". */
export function describeControlFinding(finding: PathControlFinding): string {
  const who = finding.reason === 'owner' ? `belongs to uid ${finding.ownerUid}` : `can be written by other users (mode ${modeText(finding.mode)})`;
  return `the ${finding.kind} ${finding.path} ${who}`;
}

/** Links followed on the way to a path before giving up, as the kernel's ELOOP. */
const MAX_LINKS = 40;

/** This process's uid; undefined where there are no uids (Windows), and then no rule applies. */
export function currentUid(): number | undefined {
  return process.getuid?.();
}

/** "0755", "1777": the mode as chmod takes it. */
export function modeText(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

/**
 * "belongs to uid N, not to this user (uid M)" when the entry is someone else's (root's counts as
 * this user's with `rootAllowed`); undefined when it is this user's, or there are no uids.
 */
export function ownerProblem(stats: OwnedStats, uid: number | undefined, options: { rootAllowed?: boolean } = {}): string | undefined {
  if (uid === undefined || stats.uid === uid || (options.rootAllowed === true && stats.uid === 0)) return undefined;
  return `belongs to uid ${stats.uid}, not to this user (uid ${uid})${options.rootAllowed === true && uid !== 0 ? ' or root' : ''}`;
}

/**
 * Whether group or other users may write the entry. With `stickyExcuses`, a sticky directory's
 * write bits do not count: they let others add names but not rename or remove what they do not own.
 */
export function othersCanWrite(stats: OwnedStats, options: { stickyExcuses?: boolean } = {}): boolean {
  if ((stats.mode & 0o022) === 0) return false;
  return !(options.stickyExcuses === true && (stats.mode & 0o1000) !== 0);
}

/** The rule for one entry met on the way to a path; undefined when only this user (or root) controls it. */
export function controlReason(stats: OwnedStats & { isDirectory(): boolean }, uid: number | undefined, options: { stickyExcuses: boolean }): ControlReason | undefined {
  if (ownerProblem(stats, uid, { rootAllowed: true }) !== undefined) return 'owner';
  // A link's own mode means nothing (0777 everywhere); only who owns it, in a sticky folder, can replace it.
  if (stats.isDirectory() && othersCanWrite(stats, options)) return 'writable';
  return undefined;
}

/**
 * The rule for an entry that must be this user's (or root's) alone, a file or a folder: another
 * owner, or write bits for others (no sticky excuse: whoever can make names in a folder can plant
 * one); undefined when it passes, and for a link (its own mode means nothing).
 */
export function entryControl(at: string, stats: Stats, uid: number | undefined): PathControlFinding | undefined {
  if (stats.isSymbolicLink()) return undefined;
  const reason: ControlReason | undefined = ownerProblem(stats, uid, { rootAllowed: true }) !== undefined ? 'owner' : othersCanWrite(stats) ? 'writable' : undefined;
  if (reason === undefined) return undefined;
  return { path: at, kind: stats.isDirectory() ? 'directory' : 'file', ownerUid: stats.uid, mode: stats.mode & 0o7777, reason, target: false };
}

/**
 * Every directory and symbolic link the kernel passes through to reach `target` (absolute), links
 * followed, `/` first. Each must belong to `uid` or root. A directory on the way may be writable by
 * others only with the sticky bit (/tmp's 1777: they cannot rename what is not theirs); `target`
 * itself not at all when `strictTarget` (whoever can write a folder can make names in it first).
 * Stops where a name is missing or is not a directory. The findings in walk order; none: no one else controls it.
 */
export async function pathControl(target: string, options: { uid: number | undefined; strictTarget: boolean }): Promise<PathControlFinding[]> {
  const { uid } = options;
  const findings: PathControlFinding[] = [];
  if (uid === undefined) return findings;
  const pending = path.resolve(target).split('/').filter((name) => name !== '' && name !== '.');
  const note = (at: string, stats: Stats): void => {
    const last = pending.length === 0;
    const reason = controlReason(stats, uid, { stickyExcuses: !(last && options.strictTarget) });
    if (reason === undefined) return;
    const kind = stats.isSymbolicLink() ? 'symbolic link' : 'directory';
    findings.push({ path: at, kind, ownerUid: stats.uid, mode: stats.mode & 0o7777, reason, target: last && kind === 'directory' });
  };
  let at = '/';
  note(at, await lstat(at));
  let links = 0;
  while (pending.length > 0) {
    const name = pending.shift()!;
    if (name === '.') continue;
    if (name === '..') {
      at = path.dirname(at);
      continue;
    }
    const next = path.join(at, name);
    let stats: Stats;
    try {
      stats = await lstat(next);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return findings;
      throw error;
    }
    if (stats.isSymbolicLink()) {
      if (++links > MAX_LINKS) throw new ConfigError(`${target}: more than ${MAX_LINKS} symbolic links on the way to it`);
      note(next, stats);
      const to = await readlink(next);
      pending.unshift(...to.split('/').filter((part) => part !== ''));
      if (to.startsWith('/')) at = '/';
      continue;
    }
    if (!stats.isDirectory()) return findings;
    at = next;
    note(at, stats);
  }
  return findings;
}
