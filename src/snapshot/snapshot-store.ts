// Where snapshots live and how one is published: DEST is a symlink to `.<name>.snapshots/<id>`
// beside it, a snapshot is built in `.build-<id>` there, and published by one rename(2) of a new
// symlink over DEST, so a reader sees the old snapshot or the new one, never a mix, and an
// interrupted run (SIGKILL, a full disk) leaves the published one as it was; its leftovers go at
// the next run. One writer per DEST (a lock file). Nowhere another user controls (the folders on
// the way to DEST, the snapshots folder, the lock: snapshot-location.ts). Knows nothing of skills or catalogs.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { OWNER_WRITABLE_DIRECTORY_MODE, READ_ONLY_DIRECTORY_MODE, READ_ONLY_FILE_MODE } from '../file-modes.js';
import { sha256Digest } from '../format/digest.js';
import { LockHeldError, releaseLock, tryLock } from '../lock-file.js';
import type { Log } from '../log.js';
import { currentUid } from '../path-control.js';
import { errorCode, errorMessage } from '../private-files.js';
import { MANIFEST_NAME, manifestText, parseManifest, safeRelativePath, type SnapshotManifest } from './snapshot-manifest.js';
import { nodeSnapshotFs, type SnapshotFs } from './snapshot-fs.js';
import { checkDestination, checkOwnEntry } from './snapshot-location.js';

const BUILD_PREFIX = '.build-';
const LOCK_NAME = '.lock';
const ID_PATTERN = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z-[0-9a-f]{6}$/;
/** Snapshots kept: the published one and the one before it. */
export const DEFAULT_KEEP = 2;
/** A snapshot replaced less than this long ago is kept too, so a reader that resolved DEST just before has time to finish its pass. */
export const DEFAULT_RETAIN_MS = 60_000;

/** Another process is writing snapshots to this DEST. */
export class SnapshotLockedError extends LockHeldError {
  override name = 'SnapshotLockedError';
  readonly code = 'SNAPSHOT_LOCKED';
}

export interface SnapshotStoreOptions {
  /** The published symlink's path (absolute). */
  dest: string;
  log: Log;
  fs?: SnapshotFs | undefined;
  keep?: number | undefined;
  retainMs?: number | undefined;
  now?: (() => number) | undefined;
  /** Who writes the snapshot (default this process's uid): only they and root may control where it goes. */
  uid?: number | undefined;
  /** DEST's folder may be writable by others (--allow-shared-parent: an emptyDir); everything else is checked still. */
  allowSharedParent?: boolean | undefined;
}

/** A published snapshot: its id, directory, manifest and the manifest's digest (both undefined when the manifest cannot be read). */
export type PublishedSnapshot = { id: string; dir: string } & (
  | {
      manifest: SnapshotManifest;
      /** sha256 of the manifest's exact bytes: what `verify --expect` checks. */
      manifestDigest: string;
    }
  | { manifest: undefined; manifestDigest: undefined }
);

/** The directory holding DEST's snapshots: `.<basename>.snapshots` beside DEST. */
export function snapshotsDirOf(dest: string): string {
  return path.join(path.dirname(dest), `.${path.basename(dest)}.snapshots`);
}

/** The snapshot DEST names now, or why DEST is not a published snapshot (ConfigError). */
export async function resolvePublished(dest: string, fs: SnapshotFs = nodeSnapshotFs): Promise<{ id: string; dir: string } | undefined> {
  const stats = await fs.lstat(dest);
  if (stats === undefined) return undefined;
  const snapshots = snapshotsDirOf(dest);
  if (!stats.isSymbolicLink()) throw new ConfigError(`${dest} exists and is not a snapshot link (expected a symlink into ${snapshots}); remove it or choose another DEST`);
  const target = await fs.readlink(dest);
  const expectedPrefix = `${path.basename(snapshots)}/`;
  const id = target.startsWith(expectedPrefix) ? target.slice(expectedPrefix.length) : undefined;
  if (id === undefined || !ID_PATTERN.test(id)) throw new ConfigError(`${dest} is a symlink to ${JSON.stringify(target)}, not to a snapshot in ${snapshots}; remove it or choose another DEST`);
  return { id, dir: path.join(snapshots, id) };
}

export class SnapshotStore {
  private constructor(
    readonly dest: string,
    readonly snapshotsDir: string,
    private readonly fs: SnapshotFs,
    private readonly log: Log,
    private readonly lockToken: string,
    private readonly keep: number,
    private readonly retainMs: number,
    private readonly now: () => number,
  ) {}

  /**
   * Takes DEST's lock, checks that DEST is missing, an empty directory (removed) or one of its
   * snapshots, and removes what an interrupted run left: builds, temp links, unpublished snapshots.
   */
  static async open(options: SnapshotStoreOptions): Promise<SnapshotStore> {
    const fs = options.fs ?? nodeSnapshotFs;
    const dest = path.resolve(options.dest);
    const parent = path.dirname(dest);
    const parentStats = await fs.lstat(parent);
    if (!parentStats?.isDirectory()) throw new ConfigError(`${dest}: its parent ${parent} is not an existing directory`);
    const uid = 'uid' in options ? options.uid : currentUid();
    await checkDestination(dest, uid, { allowSharedParent: options.allowSharedParent, log: options.log });
    const snapshotsDir = snapshotsDirOf(dest);
    const existing = await fs.lstat(snapshotsDir);
    if (existing === undefined) await fs.mkdir(snapshotsDir, OWNER_WRITABLE_DIRECTORY_MODE);
    else if (!existing.isDirectory()) throw new ConfigError(`${snapshotsDir} exists and is not a directory; remove it or choose another DEST`);
    else checkOwnEntry(snapshotsDir, 'snapshots folder', existing, dest, uid);
    const lockPath = path.join(snapshotsDir, LOCK_NAME);
    const planted = await fs.lstat(lockPath);
    if (planted !== undefined) checkOwnEntry(lockPath, 'lock file', planted, dest, uid);
    const locked = await tryLock(lockPath, (holder) => options.log(`snapshot: took over the lock of pid ${holder.pid ?? '?'}, which is gone`));
    if ('heldBy' in locked) throw new SnapshotLockedError(`${dest}: ${locked.heldBy} is writing snapshots here (lock ${lockPath})`, lockPath, locked.holder.pid);
    const store = new SnapshotStore(dest, snapshotsDir, fs, options.log, locked.token, options.keep ?? DEFAULT_KEEP, options.retainMs ?? DEFAULT_RETAIN_MS, options.now ?? Date.now);
    try {
      const destStats = await fs.lstat(dest);
      if (destStats?.isDirectory()) {
        // An empty directory someone made for us: nothing is published there yet.
        if ((await fs.readdir(dest)).length > 0) throw new ConfigError(`${dest} is a directory with files in it, not a snapshot link; remove it or choose another DEST`);
        await fs.rmdir(dest);
      } else {
        await resolvePublished(dest, fs);
      }
      await store.removeLeftovers();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /** The snapshot DEST names now, with its manifest when readable. */
  async published(): Promise<PublishedSnapshot | undefined> {
    const current = await resolvePublished(this.dest, this.fs);
    if (current === undefined) return undefined;
    try {
      const where = path.join(current.dir, MANIFEST_NAME);
      const bytes = await this.fs.readFile(where);
      return { ...current, manifest: parseManifest(bytes.toString('utf8'), where), manifestDigest: sha256Digest(bytes) };
    } catch (error) {
      this.log(`snapshot ${current.id}: its manifest cannot be read (${errorMessage(error)}); nothing is taken from it`);
      return { ...current, manifest: undefined, manifestDigest: undefined };
    }
  }

  /** A new, empty snapshot being built beside the published one. */
  async begin(): Promise<SnapshotBuild> {
    const published = await resolvePublished(this.dest, this.fs);
    const id = newId(this.now(), published?.id);
    const dir = path.join(this.snapshotsDir, `${BUILD_PREFIX}${id}`);
    // Writable until commit seals it read-only.
    await this.fs.mkdir(dir, OWNER_WRITABLE_DIRECTORY_MODE);
    return new SnapshotBuild(this, this.fs, id, dir);
  }

  /** Releases DEST's lock. */
  async close(): Promise<void> {
    await releaseLock(path.join(this.snapshotsDir, LOCK_NAME), this.lockToken);
  }

  /** Renames a finished build to its id and points DEST at it with one rename(2); then removes snapshots no longer kept. */
  async publish(build: SnapshotBuild): Promise<void> {
    const finalDir = path.join(this.snapshotsDir, build.id);
    await this.fs.rename(build.dir, finalDir);
    const temp = path.join(path.dirname(this.dest), `${tempLinkPrefix(this.dest)}${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      await this.fs.symlink(`${path.basename(this.snapshotsDir)}/${build.id}`, temp);
      await this.fs.rename(temp, this.dest);
    } catch (error) {
      await this.fs.unlink(temp).catch(() => {});
      await this.fs.removeTree(finalDir).catch(() => {});
      throw error;
    }
    await this.prune().catch((error: unknown) => this.log(`snapshot: removing old snapshots failed: ${errorMessage(error)}`));
  }

  /** Builds, temp links and unpublished snapshots: only an interrupted run leaves them (the lock keeps out any other writer). */
  private async removeLeftovers(): Promise<void> {
    for (const entry of await this.fs.readdir(this.snapshotsDir)) {
      if (entry.name.startsWith(BUILD_PREFIX)) {
        this.log(`snapshot: removing ${entry.name}, left by an interrupted run`);
        await this.fs.removeTree(path.join(this.snapshotsDir, entry.name));
      }
    }
    const prefix = tempLinkPrefix(this.dest);
    for (const entry of await this.fs.readdir(path.dirname(this.dest))) {
      if (entry.name.startsWith(prefix) && entry.isSymbolicLink()) await this.fs.unlink(path.join(path.dirname(this.dest), entry.name));
    }
    await this.prune();
  }

  /**
   * Keeps the published snapshot, the `keep - 1` before it, and any replaced less than retainMs
   * ago; removes the rest, and snapshots newer than the published one (a run stopped between
   * finishing one and publishing it).
   */
  private async prune(): Promise<void> {
    const published = await resolvePublished(this.dest, this.fs);
    const ids = (await this.fs.readdir(this.snapshotsDir)).filter((entry) => entry.isDirectory() && ID_PATTERN.test(entry.name)).map((entry) => entry.name);
    ids.sort();
    const publishedAt = published === undefined ? -1 : ids.indexOf(published.id);
    for (const [index, id] of ids.entries()) {
      const newer = ids[index + 1];
      const kept =
        index === publishedAt ||
        (publishedAt >= 0 && index < publishedAt && (publishedAt - index < this.keep || (newer !== undefined && this.now() - idTimeMs(newer) < this.retainMs)));
      if (kept) continue;
      await this.fs.removeTree(path.join(this.snapshotsDir, id));
    }
  }
}

/** One snapshot being written. Paths are relative to its root, '/'-separated. */
export class SnapshotBuild {
  private readonly directories = new Map<string, Promise<void>>([['', Promise.resolve()]]);
  private finished = false;

  constructor(
    private readonly store: SnapshotStore,
    private readonly fs: SnapshotFs,
    readonly id: string,
    /** Its directory while it is built. */
    readonly dir: string,
  ) {}

  /** Every directory made so far ('' excluded), sorted. */
  directoryPaths(): string[] {
    return [...this.directories.keys()].filter((dir) => dir !== '').sort();
  }

  /** Makes the directory and its missing parents. */
  ensureDirectory(relative: string): Promise<void> {
    if (relative !== '' && !safeRelativePath(relative)) return Promise.reject(new ConfigError(`snapshot: refusing the unsafe path ${JSON.stringify(relative)}`));
    let made = this.directories.get(relative);
    if (made === undefined) {
      const parent = relative.includes('/') ? relative.slice(0, relative.lastIndexOf('/')) : '';
      made = this.ensureDirectory(parent).then(() => this.fs.mkdir(this.absolute(relative), OWNER_WRITABLE_DIRECTORY_MODE)); // until commit seals it
      this.directories.set(relative, made);
      made.catch(() => this.directories.delete(relative));
    }
    return made;
  }

  /** A new file (0444) with these bytes. */
  async writeFile(relative: string, bytes: Uint8Array): Promise<void> {
    await this.ensureParent(relative);
    await this.fs.writeFile(this.absolute(relative), bytes, READ_ONLY_FILE_MODE);
  }

  /** A hard link to a file of an earlier snapshot (already 0444). */
  async linkFile(relative: string, existing: string): Promise<void> {
    await this.ensureParent(relative);
    await this.fs.link(existing, this.absolute(relative));
  }

  /** Removes a file written earlier (a skill left out after all). */
  async removeFile(relative: string): Promise<void> {
    await this.fs.unlink(this.absolute(relative));
  }

  /** Removes a directory if it is empty; true when it was removed. */
  async removeDirectoryIfEmpty(relative: string): Promise<boolean> {
    if (!this.directories.has(relative) || relative === '') return false;
    if ((await this.fs.readdir(this.absolute(relative))).length > 0) return false;
    await this.fs.rmdir(this.absolute(relative));
    this.directories.delete(relative);
    return true;
  }

  /** Writes the manifest, makes every directory read-only, and publishes the snapshot; resolves the sha256 of the manifest's bytes. */
  async commit(manifest: SnapshotManifest): Promise<string> {
    this.assertOpen();
    const bytes = Buffer.from(manifestText(manifest), 'utf8');
    try {
      await this.fs.writeFile(this.absolute(MANIFEST_NAME), bytes, READ_ONLY_FILE_MODE);
      // Deepest first: a parent made read-only first could not be descended into for writing, but chmod needs only search permission.
      for (const dir of this.directoryPaths().reverse()) await this.fs.chmod(this.absolute(dir), READ_ONLY_DIRECTORY_MODE);
      await this.fs.chmod(this.dir, READ_ONLY_DIRECTORY_MODE);
      this.finished = true;
      await this.store.publish(this);
      return sha256Digest(bytes);
    } catch (error) {
      this.finished = true;
      await this.fs.removeTree(this.dir).catch(() => {});
      throw error;
    }
  }

  /** Removes the build; the published snapshot stays as it is. */
  async abort(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    await this.fs.removeTree(this.dir);
  }

  absolute(relative: string): string {
    return relative === '' ? this.dir : path.join(this.dir, ...relative.split('/'));
  }

  private async ensureParent(relative: string): Promise<void> {
    this.assertOpen();
    if (!safeRelativePath(relative)) throw new ConfigError(`snapshot: refusing the unsafe path ${JSON.stringify(relative)}`);
    const slash = relative.lastIndexOf('/');
    await this.ensureDirectory(slash === -1 ? '' : relative.slice(0, slash));
  }

  private assertOpen(): void {
    if (this.finished) throw new Error(`snapshot ${this.id} is already committed or aborted`);
  }
}

/** `.<name>.link-`: a symlink being made beside DEST, renamed over it at once. */
function tempLinkPrefix(dest: string): string {
  return `.${path.basename(dest)}.link-`;
}

/** "20261201T232538123Z-1a2b3c": sorts as it was made, and always after `after`. */
export function newId(nowMs: number, after: string | undefined): string {
  const ms = after === undefined ? nowMs : Math.max(nowMs, idTimeMs(after) + 1);
  const stamp = new Date(ms).toISOString().replace(/[-:.]/g, '');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

function idTimeMs(id: string): number {
  const match = ID_PATTERN.exec(id);
  if (!match) return 0;
  const [, y, mo, d, h, mi, s, ms] = match;
  return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number(ms));
}

/** Whether an error is the disk being full or over quota: the run fails, the published snapshot stays. */
export function isDiskFull(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOSPC' || code === 'EDQUOT';
}
