// The cache root as a whole (issue 22, item 5): every mount subtree under it, which mountpoint
// each serves and when it was last used, and the housekeeping that keeps the root bounded:
// subtrees of mountpoints that are gone go after a grace period, and past the root's size bound
// the least recently used subtrees go first. A subtree whose daemon runs (its lock says so) is
// never touched. Knows the layout's names, nothing of MCP or the catalog.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Log } from '../log.js';
import { lockHeldBy, readLock, releaseLock, tryLock } from '../lock-file.js';
import { errorCode, lstatOrUndefined, writeAtomically } from '../private-files.js';
import type { AnchoredDirectory } from './anchored-directory.js';
import { LOCK_NAME, RECORD_NAME, SUBTREE_KEY_PATTERN, TEMP_PREFIX, TRASH_PREFIX, countLabelFiles, formatBytes, labelsOnDisk, readdirOrEmpty } from './layout.js';

const GIB = 1024 ** 3;
const DAY_MS = 24 * 60 * 60 * 1000;
/** The default bound on the whole cache root (--disk-cache-total-size). */
export const DEFAULT_ROOT_LIMIT_BYTES = 2 * GIB;
/** How long a subtree whose mountpoint is gone is kept after its last use. */
export const DEFAULT_UNUSED_GRACE_MS = 7 * DAY_MS;
/** A running daemon refreshes its record (and so its last use) at most this often. */
export const RECORD_REFRESH_MS = 60 * 60 * 1000;
const MAX_RECORD_BYTES = 64 * 1024;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** What `.mount.json` says. */
export interface SubtreeRecord {
  /** The canonical mountpoint the subtree serves. */
  mountpoint: string;
  /** Bytes of its cached files when the record was written. */
  bytes: number;
}

/** One subtree as the root sees it, read without its lock and without changing anything. */
export interface SubtreeFacts {
  key: string;
  /** From its record; undefined for a subtree an older version wrote (no record). */
  mountpoint: string | undefined;
  /** Bytes of its cached files: from the record, or counted when there is none. */
  bytes: number;
  /** Last use: the record's or the lock's mtime, whichever is later (the directory's without a record). */
  lastUsedMs: number;
  /** Pid of the live process holding its lock, if any. */
  holderPid: number | undefined;
  /** Whether a live process holds its lock. */
  live: boolean;
}

/** The mount subtrees under a cache root (one per mountpoint that ever used it), sorted. */
export async function listSubtrees(root: string): Promise<string[]> {
  const keys: string[] = [];
  for (const name of await readdirOrEmpty(root)) {
    if (!SUBTREE_KEY_PATTERN.test(name)) continue;
    const stats = await lstatOrUndefined(path.join(root, name));
    if (stats?.isDirectory()) keys.push(name);
  }
  return keys.sort();
}

/** The record in `subtreePath`, or undefined when there is none or it cannot be used. */
export async function readSubtreeRecord(subtreePath: string): Promise<(SubtreeRecord & { mtimeMs: number }) | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path.join(subtreePath, RECORD_NAME), READ_FLAGS);
  } catch {
    return undefined;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > MAX_RECORD_BYTES) return undefined;
    const parsed: unknown = JSON.parse((await handle.readFile()).toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { mountpoint, bytes } = parsed as { mountpoint?: unknown; bytes?: unknown };
    if (typeof mountpoint !== 'string' || !path.isAbsolute(mountpoint)) return undefined;
    if (typeof bytes !== 'number' || !Number.isSafeInteger(bytes) || bytes < 0) return undefined;
    return { mountpoint, bytes, mtimeMs: stats.mtimeMs };
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => {});
  }
}

/** Writes the subtree's record (its mtime is its last use). Not fsynced: a torn record reads as none. */
export async function writeSubtreeRecord(subtree: AnchoredDirectory, record: SubtreeRecord): Promise<void> {
  await writeAtomically(subtree.at(''), RECORD_NAME, `${JSON.stringify(record)}\n`, TEMP_PREFIX, { durable: false });
}

/** What the root knows of one subtree; undefined when it is gone. */
export async function readSubtreeFacts(subtreePath: string, key: string, isLabel: (name: string) => boolean): Promise<SubtreeFacts | undefined> {
  // stat, not lstat: `subtreePath` may be a anchored directory's /proc/self/fd link (listSubtrees refused links).
  const dirStats = await stat(subtreePath).catch(() => undefined);
  if (dirStats === undefined || !dirStats.isDirectory()) return undefined;
  const record = await readSubtreeRecord(subtreePath);
  const holder = await readLock(path.join(subtreePath, LOCK_NAME));
  const live = holder !== undefined && lockHeldBy(holder) !== undefined;
  // The mtime itself, not now minus an age: two reads of one subtree must agree.
  const lockMtimeMs = holder?.mtimeMs ?? 0;
  let bytes = record?.bytes;
  if (bytes === undefined) {
    bytes = 0;
    for (const label of await labelsOnDisk(subtreePath, isLabel)) bytes += (await countLabelFiles(path.join(subtreePath, label))).bytes;
  }
  return {
    key,
    mountpoint: record?.mountpoint,
    bytes,
    lastUsedMs: record === undefined ? Math.max(dirStats.mtimeMs, lockMtimeMs) : Math.max(record.mtimeMs, lockMtimeMs),
    holderPid: live ? holder?.pid : undefined,
    live,
  };
}

/** Whether a mountpoint still exists: ENOENT and ENOTDIR say gone; a dead FUSE mount (ENOTCONN) or EACCES still exists. */
export async function mountpointExists(mountpoint: string): Promise<boolean> {
  try {
    await lstat(mountpoint);
    return true;
  } catch (error) {
    const code = errorCode(error);
    return code !== 'ENOENT' && code !== 'ENOTDIR';
  }
}

export interface TidyOptions {
  /** The cache root, held open. */
  root: AnchoredDirectory;
  /** The caller's own subtree (never removed, its bytes counted as `ownBytes`). */
  ownKey: string | undefined;
  ownBytes: number;
  /** Bound on every subtree's files together; Infinity for none. */
  limitBytes: number;
  /** A subtree whose mountpoint is gone (or unknown) goes once unused for this long. */
  graceMs: number;
  isLabel: (name: string) => boolean;
  log: Log;
}

export interface TidyResult {
  removed: Array<{ key: string; reason: 'mountpoint gone' | 'size'; bytes: number }>;
  /** Bytes of the other subtrees that stay (live ones, and those the bound leaves). */
  othersBytes: number;
  /** Bytes of the other subtrees whose daemons run: what no one can remove now. */
  liveOthersBytes: number;
}

/**
 * Removes subtrees whose mountpoint is gone (or unknown: an older version's) and which were
 * unused for `graceMs`, then, while all subtrees together exceed `limitBytes`, the least
 * recently used ones. Live subtrees are never touched; one log line per kind of removal.
 */
export async function tidyCacheRoot(options: TidyOptions): Promise<TidyResult> {
  const { root, log } = options;
  // Leftovers of a removal cut short (a crash between rename and rm).
  for (const name of await readdirOrEmpty(root.at(''))) {
    if (name.startsWith(TRASH_PREFIX)) await rm(root.at(name), { recursive: true, force: true }).catch(() => {});
  }
  const nowMs = Date.now();
  const others: SubtreeFacts[] = [];
  for (const key of await listSubtrees(root.at(''))) {
    if (key === options.ownKey) continue;
    // Best effort: a subtree that cannot be read (permissions changed by hand) is left as it is.
    const facts = await readSubtreeFacts(root.at(key), key, options.isLabel).catch(() => undefined);
    if (facts !== undefined) others.push(facts);
  }
  const removed: TidyResult['removed'] = [];
  const kept: SubtreeFacts[] = [];
  for (const facts of others) {
    const unused = !facts.live && nowMs - facts.lastUsedMs >= options.graceMs;
    if (unused && (facts.mountpoint === undefined || !(await mountpointExists(facts.mountpoint))) && (await removeSubtree(root, facts.key))) {
      removed.push({ key: facts.key, reason: 'mountpoint gone', bytes: facts.bytes });
    } else {
      kept.push(facts);
    }
  }
  let totalBytes = options.ownBytes + kept.reduce((sum, facts) => sum + facts.bytes, 0);
  const staying: SubtreeFacts[] = [];
  for (const facts of [...kept].sort((a, b) => a.lastUsedMs - b.lastUsedMs)) {
    if (totalBytes > options.limitBytes && !facts.live && (await removeSubtree(root, facts.key))) {
      removed.push({ key: facts.key, reason: 'size', bytes: facts.bytes });
      totalBytes -= facts.bytes;
    } else {
      staying.push(facts);
    }
  }
  logRemovals(removed, options, log);
  return {
    removed,
    othersBytes: staying.reduce((sum, facts) => sum + facts.bytes, 0),
    liveOthersBytes: staying.filter((facts) => facts.live).reduce((sum, facts) => sum + facts.bytes, 0),
  };
}

function logRemovals(removed: TidyResult['removed'], options: TidyOptions, log: Log): void {
  for (const reason of ['mountpoint gone', 'size'] as const) {
    const these = removed.filter((entry) => entry.reason === reason);
    if (these.length === 0) continue;
    const bytes = these.reduce((sum, entry) => sum + entry.bytes, 0);
    const names = these.slice(0, 3).map((entry) => entry.key).join(', ') + (these.length > 3 ? ` and ${these.length - 3} more` : '');
    const why =
      reason === 'size'
        ? `least recently used first, to keep the cache root within ${formatBytes(options.limitBytes)}`
        : `their mountpoints are gone and they were unused for ${Math.round(options.graceMs / DAY_MS)} days or more`;
    log(`disk cache: removed ${these.length} mount subtree${these.length === 1 ? '' : 's'} (${formatBytes(bytes)}) of ${options.root.shownPath}: ${names} (${why})`);
  }
}

/**
 * Removes one subtree unless a live process holds its lock: takes the lock (marked "prune", so a
 * daemon starting on it waits a moment instead of refusing), renames the subtree away (its name
 * is free at once), lets go of the lock and removes the renamed tree. False when it stays.
 */
export async function removeSubtree(root: AnchoredDirectory, key: string): Promise<boolean> {
  let dir: AnchoredDirectory;
  try {
    dir = await root.child(key, { create: false });
  } catch {
    return false;
  }
  try {
    const taken = await tryLock(dir.at(LOCK_NAME), () => {}, 'prune');
    if (!('token' in taken)) return false;
    const trash = `${TRASH_PREFIX}${key}-${randomBytes(4).toString('hex')}`;
    if (!(await root.stillHolds(key, dir))) {
      await releaseLock(dir.at(LOCK_NAME), taken.token);
      return false;
    }
    await rename(root.at(key), root.at(trash));
    await releaseLock(dir.at(LOCK_NAME), taken.token);
    await rm(root.at(trash), { recursive: true, force: true });
    return true;
  } catch {
    return false;
  } finally {
    await dir.close();
  }
}

/** Removes temp files a crash left in a directory (the caller holds the lock that says no writer is alive). */
export async function removeTemps(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith(TEMP_PREFIX)) await rm(path.join(dir, name), { recursive: true, force: true });
  }
}
