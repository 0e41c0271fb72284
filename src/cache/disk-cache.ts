// The on-disk verified content store (issue 13): bytes that verified once, kept per mount and
// server label under <root>/<mountKey>/<label>/ and hashed again on every read, as SEP-2640's
// "Cache integrity" requires; a mismatch is discarded and reads as a miss. Best effort: a failing
// disk never fails a read. Knows nothing of MCP, the catalog or the filesystem.
//
// DiskCache wires the parts, each in a module of its own:
//   claimed-subtree.ts      the root and this mount's subtree: checked, held open, locked
//   cache-index.ts       what the subtree holds: the index, the per-mount bound, eviction, label removal
//   read-cached-file.ts  a cached file read back and verified (type, size, digest)
//   write-queue.ts       the writes, off the serving path: paced, bounded, logged once per error
//   saved-listing.ts     the kept listing's format, written and read back
//   cache-status.ts      what a subtree holds, read without its lock
//   cache-root.ts        the other mounts' subtrees and the root's bound
// The layout on disk, and why it is so, is in layout.ts.
import { rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { isValidLabel } from '../labels.js';
import type { Log } from '../log.js';
import { errorCode, errorMessage } from '../private-files.js';
import { appDir } from '../user-dirs.js';
import { CacheIndex, indexKey } from './cache-index.js';
import { DEFAULT_ROOT_LIMIT_BYTES, DEFAULT_UNUSED_GRACE_MS, RECORD_REFRESH_MS, tidyCacheRoot, writeSubtreeRecord } from './cache-root.js';
import { readSubtreeStatus, type CacheStatus } from './cache-status.js';
import { withShownPaths } from './anchored-directory.js';
import { ClaimedSubtree, type LabelDirectories } from './claimed-subtree.js';
import { DIGEST_PATTERN, LISTING_NAME, cacheFileNameIn, formatBytes, mountKey } from './layout.js';
import { readCachedFile } from './read-cached-file.js';
import { loadSavedListing, type SavedListing } from './saved-listing.js';
import { WriteQueue } from './write-queue.js';

export { DEFAULT_ROOT_LIMIT_BYTES, DEFAULT_UNUSED_GRACE_MS, listSubtrees, tidyCacheRoot } from './cache-root.js';
export { readCacheStatus, type CacheStatus, type LabelStatus } from './cache-status.js';
export { CacheLockedError } from './claimed-subtree.js';
export { cacheFileName, mountKey } from './layout.js';
export type { SavedListing } from './saved-listing.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface DiskCacheOptions {
  /** The cache root, shared by every mount (see defaultCacheRoot). */
  root: string;
  /** The mountpoint this daemon serves, canonical (fuse/mount-table canonicalMountpoint); it selects the subtree and is never itself touched. */
  mountpoint: string;
  /** Bound on the bytes of cached files in this mount's subtree (all labels together; listings not counted). */
  limitBytes: number;
  /** Bound on the cached files of every mount's subtree together (default DEFAULT_ROOT_LIMIT_BYTES). */
  rootLimitBytes?: number | undefined;
  /** Another mount's subtree whose mountpoint is gone is removed once unused this long (default 7 days). */
  unusedGraceMs?: number | undefined;
  /** One line per event; the sink escapes server-supplied text. */
  log: Log;
  /** Home directory for the discovery-folder check; default os.homedir(). */
  home?: string | undefined;
  /** Environment for the discovery-folder check ($CODEX_HOME, $XDG_CONFIG_HOME); default process.env. */
  env?: Env | undefined;
  /** Told of every file lookup, found (and hashed right) or not (metrics); never changes what is found. */
  onLookup?: ((hit: boolean) => void) | undefined;
}

/** One server's part of the cache. */
export interface ServerCache {
  readonly label: string;
  /**
   * The cached bytes for (uri, digest), hashed again now; undefined on a miss or when the file
   * failed a check (then it is removed and one line logged). `sizeBytes`, when given, must match too.
   * `binding`: what else the bytes verified against when stored (layout.ts); found only under it.
   */
  get(uri: string, digest: string, sizeBytes?: number, binding?: string): Promise<Buffer | undefined>;
  /**
   * Queues bytes that just verified against `digest`; resolves true once they are in the cache.
   * The write starts after the caller's current work (the read being served). Never throws.
   */
  put(uri: string, digest: string, bytes: Uint8Array, binding?: string): Promise<boolean>;
  /**
   * Where the file for (uri, digest) is, when the index has it and its label's directories are
   * open (a path through the held descriptor, never a link followed): for a reader that reads it
   * whole and hashes it on every access itself. Nothing is read or checked here.
   */
  copyPath(uri: string, digest: string, binding?: string): string | undefined;
  /** Keeps the server's last verified listing; true when written. Never throws. */
  saveListing(document: unknown): Promise<boolean>;
  /**
   * The saved listing, or undefined (none, or unreadable: then it is removed and one line logged).
   * No digest vouches for it: it is as trustworthy as the user's own account, which can write it.
   */
  loadListing(): Promise<SavedListing | undefined>;
}

/** `<cache>/skills-mount` (user-dirs.ts: `$XDG_CACHE_HOME` when absolute, else `~/.cache`; `%LOCALAPPDATA%\skills-mount\cache` on Windows). */
export function defaultCacheRoot(env: Env, home: string, platform: NodeJS.Platform = process.platform): string {
  return appDir('cache', 'skills-mount', { env, home, platform });
}

/**
 * The verified content store of one mount subtree. open() takes the subtree's lock, so one
 * daemon per mountpoint; daemons of other mountpoints share the root and keep their own subtree
 * and their own limitBytes bound, and open() keeps the root as a whole within rootLimitBytes
 * (cache-root.ts). prune() and clear() need that lock too: run while a daemon serves the mount,
 * openSubtree() refuses with CacheLockedError (the daemon itself can prune through its instance).
 * readCacheStatus() reads a subtree without the lock.
 */
export class DiskCache {
  private readonly stores = new Map<string, ServerCache>();
  /** Every operation under way (reads, writes, listings), for close() to wait on before the descriptors go. */
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly writes: WriteQueue;
  private recordWrittenMs = 0;
  private closed = false;

  private constructor(
    private readonly held: ClaimedSubtree,
    private readonly index: CacheIndex,
    private readonly log: Log,
    /** The mountpoint the daemon serves (undefined for a management open, which leaves the record alone). */
    private readonly mountpoint: string | undefined,
    private readonly onLookup: (hit: boolean) => void = () => {},
  ) {
    this.writes = new WriteQueue(held, index, log, { track: (job) => this.track(job), stored: () => this.refreshRecord() });
  }

  /**
   * Creates the directories (0700), takes the mount's lock, removes crash leftovers, indexes
   * what is there, and keeps the root within rootLimitBytes (removing other mounts' subtrees
   * that are not in use: gone mountpoints after the grace period, then least recently used).
   */
  static async open(options: DiskCacheOptions): Promise<DiskCache> {
    const mountpoint = path.resolve(options.mountpoint);
    const key = mountKey(mountpoint);
    const cache = await DiskCache.openKey(options, key, mountpoint);
    try {
      await cache.tidyRoot(options.rootLimitBytes ?? DEFAULT_ROOT_LIMIT_BYTES, options.unusedGraceMs ?? DEFAULT_UNUSED_GRACE_MS);
      await cache.writeRecord();
      await cache.holdCachedLabels();
    } catch (error) {
      await cache.close();
      throw error;
    }
    return cache;
  }

  /**
   * The same for a subtree named by its key (one of listSubtrees), for `skills-mount cache`:
   * it takes the lock, so it refuses while a daemon serves that mount; the root is left as it is.
   */
  static async openSubtree(options: Omit<DiskCacheOptions, 'mountpoint'> & { key: string }): Promise<DiskCache> {
    return DiskCache.openKey(options, options.key, undefined);
  }

  private static async openKey(options: Omit<DiskCacheOptions, 'mountpoint'>, key: string, mountpoint: string | undefined): Promise<DiskCache> {
    const { limitBytes, log } = options;
    if (!Number.isFinite(limitBytes) || limitBytes < 0) throw new ConfigError(`disk cache: limitBytes must be a number >= 0, got ${String(limitBytes)}`);
    const held = await ClaimedSubtree.open({ root: options.root, key, log, checks: { home: options.home ?? homedir(), env: options.env ?? process.env } });
    const cache = new DiskCache(held, new CacheIndex(held, limitBytes, log), log, mountpoint, options.onLookup);
    try {
      await cache.index.scan();
      await cache.index.evict(undefined);
    } catch (error) {
      await cache.close();
      throw error;
    }
    return cache;
  }

  /** <root>/<mountKey>. */
  get subtree(): string {
    return this.held.dir.shownPath;
  }

  /** <root>/<mountKey>/.lock. */
  get lockPath(): string {
    return this.held.lockPath;
  }

  /** Bound on this subtree's files: the one asked for, or less when the root's bound leaves less. */
  get limitBytes(): number {
    return this.index.limitBytes;
  }

  /** The store of one server label (validated like a config label). */
  server(label: string): ServerCache {
    if (!isValidLabel(label)) throw new ConfigError(`disk cache: invalid server label ${JSON.stringify(label)}`);
    let store = this.stores.get(label);
    if (store === undefined) {
      store = Object.freeze({
        label,
        get: (uri: string, digest: string, sizeBytes?: number, binding?: string) => this.getFile(label, uri, digest, sizeBytes, binding),
        put: (uri: string, digest: string, bytes: Uint8Array, binding?: string) => (this.closed ? Promise.resolve(false) : this.writes.put(label, uri, digest, bytes, binding)),
        copyPath: (uri: string, digest: string, binding?: string) => this.copyPath(label, uri, digest, binding),
        saveListing: (document: unknown) => (this.closed ? Promise.resolve(false) : this.writes.saveListing(label, document)),
        loadListing: () => this.loadListing(label),
      });
      this.stores.set(label, store);
    }
    return store;
  }

  /** Bytes of the cached files of this subtree, as indexed. */
  get totalBytes(): number {
    return this.index.totalBytes;
  }

  /** The subtree as readCacheStatus sees it: per label files, bytes and when its listing was saved. */
  async status(): Promise<CacheStatus> {
    const status = await readSubtreeStatus(this.held.dir.at(''), this.subtree, path.basename(this.subtree));
    return { ...status, lockHolderPid: this.closed ? undefined : process.pid };
  }

  /** Removes the subtree of every label not in `keepLabels` (a server the user removed); returns the labels removed. */
  async prune(keepLabels: Iterable<string>): Promise<string[]> {
    this.assertOpen('prune');
    const keep = new Set(keepLabels);
    const removed: string[] = [];
    for (const label of await this.index.knownLabels()) {
      if (keep.has(label)) continue;
      await this.index.removeLabel(label);
      removed.push(label);
    }
    return removed;
  }

  /** Removes one label's subtree, or every label's; returns the labels removed. The lock and subtree stay. */
  async clear(label?: string): Promise<string[]> {
    this.assertOpen('clear');
    if (label !== undefined && !isValidLabel(label)) throw new ConfigError(`disk cache: invalid server label ${JSON.stringify(label)}`);
    const labels = (await this.index.knownLabels()).filter((known) => label === undefined || known === label);
    for (const known of labels) await this.index.removeLabel(known);
    return labels;
  }

  /** Waits for the queued writes and everything under way, saves the record, then releases the lock. Later reads miss and writes are ignored. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.writes.drain(); // closed: the queue is written now, without waiting for a pause
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    this.writes.stop();
    if (this.mountpoint !== undefined && !this.held.writesStopped) await this.writeRecord().catch(() => {});
    await this.held.close();
  }

  // ---- the root ----

  /** Keeps the root within its bound (cache-root.ts), and this subtree within what that leaves. */
  private async tidyRoot(rootLimitBytes: number, graceMs: number): Promise<void> {
    if (!Number.isFinite(rootLimitBytes) || rootLimitBytes < 0) throw new ConfigError(`disk cache: rootLimitBytes must be a number >= 0, got ${String(rootLimitBytes)}`);
    // This subtree counts with what it may grow to, so the room it will take is made now.
    const ownBytes = Math.max(this.index.totalBytes, Math.min(this.index.limitBytes, rootLimitBytes));
    const tidy = await tidyCacheRoot({ root: this.held.root, ownKey: path.basename(this.subtree), ownBytes, limitBytes: rootLimitBytes, graceMs, isLabel: isValidLabel, log: this.log });
    const room = Math.max(0, rootLimitBytes - tidy.othersBytes);
    if (room < this.index.limitBytes) {
      this.log(
        `disk cache: this mount keeps at most ${formatBytes(room)} (the cache root's bound ${formatBytes(rootLimitBytes)}, less ${formatBytes(tidy.othersBytes)} in other mounts' subtrees` +
          `${tidy.liveOthersBytes > 0 ? `, ${formatBytes(tidy.liveOthersBytes)} of it in use by running daemons` : ''})`,
      );
      await this.index.setLimit(room);
    }
  }

  /** Writes `.mount.json` (mountpoint and bytes); its mtime says when the subtree was last used. */
  private async writeRecord(): Promise<void> {
    if (this.mountpoint === undefined) return;
    this.recordWrittenMs = Date.now();
    try {
      await writeSubtreeRecord(this.held.dir, { mountpoint: this.mountpoint, bytes: this.index.totalBytes });
    } catch (error) {
      this.writes.failed(undefined, '.mount.json', error);
    }
  }

  /** A running daemon's last use, refreshed at most once per RECORD_REFRESH_MS of activity. */
  private refreshRecord(): void {
    if (this.mountpoint === undefined || this.closed || Date.now() - this.recordWrittenMs < RECORD_REFRESH_MS) return;
    void this.track(this.writeRecord());
  }

  // ---- one label's files and listing ----

  /**
   * Opens the directories of every label that has cached files, so that copyPath names them from
   * a restarted daemon's first lookup on (it answers only for a label whose directories are held).
   * A label that cannot be opened now is left to its first read, which logs why.
   */
  private async holdCachedLabels(): Promise<void> {
    await Promise.all([...this.index.labelsWithFiles()].map((label) => this.held.labelDirectories(label).catch(() => undefined)));
  }

  private copyPath(label: string, uri: string, digest: string, binding: string | undefined): string | undefined {
    if (this.closed || !DIGEST_PATTERN.test(digest)) return undefined;
    if (!this.index.hasFilesOf(label)) return undefined;
    const name = cacheFileNameIn(uri, digest, binding);
    if (!this.index.has(indexKey(label, name))) return undefined;
    return this.held.heldLabelDirectories(label)?.files.at(name);
  }

  private getFile(label: string, uri: string, digest: string, sizeBytes: number | undefined, binding: string | undefined): Promise<Buffer | undefined> {
    if (this.closed || !DIGEST_PATTERN.test(digest)) return Promise.resolve(undefined);
    this.writes.noteActivity();
    // The index knows every file of the subtree (scanned at open, and only this lock holder
    // writes it): a file it does not know is a miss without touching the disk (nor hashing its
    // name, when the label has nothing cached: a first mount's every read).
    const name = this.index.hasFilesOf(label) ? cacheFileNameIn(uri, digest, binding) : undefined;
    if (name === undefined || !this.index.has(indexKey(label, name))) {
      this.onLookup(false);
      return Promise.resolve(undefined);
    }
    return this.track(
      this.lookup(label, uri, name, digest, sizeBytes)
        .catch((error: unknown) => {
          // An I/O error is a miss: the caller fetches again, and the file is left for the next open's scan.
          this.log(`[${label}] disk cache: ${uri}: cannot read (${withShownPaths(errorMessage(error))}); treated as a miss`);
          return undefined;
        })
        .then((bytes) => {
          this.onLookup(bytes !== undefined);
          return bytes;
        }),
    );
  }

  private async lookup(label: string, uri: string, name: string, digest: string, sizeBytes: number | undefined): Promise<Buffer | undefined> {
    const file = indexKey(label, name);
    let dirs: LabelDirectories;
    try {
      dirs = await this.held.labelDirectories(label);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') {
        this.index.forget(file);
        return undefined;
      }
      throw error;
    }
    const absolute = dirs.files.at(name);
    const discard = async (reason: string): Promise<undefined> => {
      this.index.forget(file);
      await rm(absolute, { recursive: true, force: true }).catch(() => {});
      this.log(`[${label}] disk cache: ${uri}: ${reason}; discarded`);
      return undefined;
    };
    const read = await readCachedFile(absolute, digest, sizeBytes ?? this.index.get(file)?.sizeBytes, this.index.limitBytes);
    if ('missing' in read) {
      this.index.forget(file);
      return undefined;
    }
    if ('problem' in read) return discard(read.problem);
    this.index.touch({ label, file, sizeBytes: read.bytes.length });
    this.refreshRecord();
    return read.bytes;
  }

  private async loadListing(label: string): Promise<SavedListing | undefined> {
    if (this.closed) return undefined;
    return loadSavedListing(this.held.dir.at(path.join(label, LISTING_NAME)), label, this.log);
  }

  // ---- housekeeping ----

  /** Runs an operation so close() can wait for it. */
  private track<T>(job: Promise<T>): Promise<T> {
    this.inflight.add(job);
    void job.finally(() => this.inflight.delete(job)).catch(() => {});
    return job;
  }

  private assertOpen(operation: string): void {
    if (this.closed) throw new Error(`disk cache ${this.subtree}: ${operation} after close()`);
  }
}
