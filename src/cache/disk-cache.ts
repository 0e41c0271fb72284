// The on-disk verified content store (issue 13): bytes that verified once, kept per mount and
// server label under <root>/<mountKey>/<label>/ and hashed again on every read, as SEP-2640's
// "Cache integrity" requires; a mismatch is discarded and reads as a miss. Best effort: a failing
// disk never fails a read. Knows nothing of MCP, the catalog or the filesystem.
//
// Layout (every directory 0700, every file 0600):
//   <root>/<mountKey>/.lock                          pid and host of the daemon serving this mount
//   <root>/<mountKey>/<label>/listing.json           { savedAt, document }: the last verified listing
//   <root>/<mountKey>/<label>/files/<hh>/<hex>       hex = sha256(uri NUL digest), hh = hex[0..1]
//   .tmp-<pid>-<random> beside its target            a write in progress (removed on open after a crash)
// Labels never start with '.', so `.lock` and temp names can never collide with them.
// No sidecar keeps the URI and digest of a file: a read names both and the bytes are checked
// against that digest, and status, eviction and pruning need only label and size. A sidecar
// would double the files and be one more thing a tamperer could edit.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { sha256Digest } from '../format/digest.js';
import { isValidLabel } from '../labels.js';
import { discoveryFolderProblem } from './discovery-folders.js';
import type { Log } from '../log.js';
import { LockHeldError, lockHeldBy, readLock, releaseLock, tryLock } from '../lock-file.js';
import { errorCode, errorMessage, kindOf, lstatOrUndefined, writeAtomically } from '../private-files.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface DiskCacheOptions {
  /** The cache root, shared by every mount (see defaultCacheRoot). */
  root: string;
  /** The mountpoint this daemon serves, canonical (fuse/mount-table canonicalMountpoint); it selects the subtree and is never itself touched. */
  mountpoint: string;
  /** Bound on the bytes of cached files in this mount's subtree (all labels together; listings not counted). */
  limitBytes: number;
  /** One line per event; the sink escapes server-supplied text. */
  log: Log;
  /** Home directory for the discovery-folder check; default os.homedir(). */
  home?: string | undefined;
  /** Environment for the discovery-folder check ($CODEX_HOME, $XDG_CONFIG_HOME); default process.env. */
  env?: Env | undefined;
}

/** What one label's subtree holds. */
export interface LabelStatus {
  label: string;
  files: number;
  bytes: number;
  /** ISO time of the saved listing, when there is a readable one. */
  listingSavedAt: string | undefined;
}

export interface CacheStatus {
  /** The mount's subtree: <root>/<mountKey>. */
  subtree: string;
  /** Pid of the live daemon holding the subtree's lock, if any. */
  lockHolderPid: number | undefined;
  /** Sorted by label. */
  labels: LabelStatus[];
}

/** A listing as saved by saveListing; the document's shape is the caller's to check. */
export interface SavedListing {
  savedAt: string;
  document: unknown;
}

/** One server's part of the cache. */
export interface ServerCache {
  readonly label: string;
  /**
   * The cached bytes for (uri, digest), hashed again now; undefined on a miss or when the file
   * failed a check (then it is removed and one line logged). `sizeBytes`, when given, must match too.
   */
  get(uri: string, digest: string, sizeBytes?: number): Promise<Buffer | undefined>;
  /** Stores bytes that just verified against `digest`; true when they are in the cache afterwards. Never throws. */
  put(uri: string, digest: string, bytes: Uint8Array): Promise<boolean>;
  /** Keeps the server's last verified listing; true when written. Never throws. */
  saveListing(document: unknown): Promise<boolean>;
  /**
   * The saved listing, or undefined (none, or unreadable: then it is removed and one line logged).
   * No digest vouches for it: it is as trustworthy as the user's own account, which can write it.
   */
  loadListing(): Promise<SavedListing | undefined>;
}

/** A second daemon on a mount subtree whose lock a live process holds. */
export class CacheLockedError extends LockHeldError {
  override name = 'CacheLockedError';
  readonly code = 'CACHE_LOCKED';
}

const TEMP_PREFIX = '.tmp-';
const LOCK_NAME = '.lock';
const LISTING_NAME = 'listing.json';
const FILES_DIR = 'files';
const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;
const KEY_PATTERN = /^[0-9a-f]{64}$/;
/** What mountKey makes: a label-safe name and 12 hex digits. */
const SUBTREE_KEY_PATTERN = /^[a-z0-9][a-z0-9_-]*-[0-9a-f]{12}$/;
const BUCKET_PATTERN = /^[0-9a-f]{2}$/;
// A listing.json bigger than this is not read into memory (a real one is far smaller).
const MAX_LISTING_BYTES = 64 * 1024 * 1024;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK; // O_NONBLOCK: a FIFO must not hang open()

/** `$XDG_CACHE_HOME/skills-mount` when that is an absolute path (the XDG rule), else `<home>/.cache/skills-mount`. */
export function defaultCacheRoot(env: Env, home: string): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg !== undefined && xdg !== '' && path.isAbsolute(xdg) ? xdg : path.join(home, '.cache');
  return path.join(base, 'skills-mount');
}

/**
 * The subtree name for a canonical mountpoint: its last segment made label-safe (for people
 * reading the cache) and 12 hex digits of its sha256 (so two mounts never share), e.g.
 * `/home/me/mcp-skills` -> `mcp-skills-3f2a9c1b0d4e`.
 */
export function mountKey(canonicalMountpoint: string): string {
  const readable = path
    .basename(canonicalMountpoint)
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
    .slice(0, 40)
    .replace(/[-_]+$/g, '');
  const hash = createHash('sha256').update(canonicalMountpoint).digest('hex').slice(0, 12);
  return `${readable || 'root'}-${hash}`;
}

/** The file name (relative to a label's directory) that holds (uri, digest). */
export function cacheFileName(uri: string, digest: string): string {
  const hex = createHash('sha256').update(uri).update('\0').update(digest).digest('hex');
  return path.join(FILES_DIR, hex.slice(0, 2), hex);
}

interface IndexEntry {
  label: string;
  /** Path relative to the subtree. */
  file: string;
  sizeBytes: number;
}

/**
 * The verified content store of one mount subtree. open() takes the subtree's lock, so one
 * daemon per mountpoint; daemons of other mountpoints share the root and keep their own subtree
 * and their own limitBytes bound. prune() and clear() need that lock too: run while a daemon
 * serves the mount, open() refuses with CacheLockedError (the daemon itself can prune through
 * its instance). readCacheStatus() reads a subtree without the lock.
 */
export class DiskCache {
  /** Files by index key, least recently used first (a Map keeps insertion order; a hit re-inserts). */
  private readonly index = new Map<string, IndexEntry>();
  private totalBytesValue = 0;
  private readonly stores = new Map<string, ServerCache>();
  /** Writes under way by index key, so two puts of one key write once. */
  private readonly pending = new Map<string, Promise<boolean>>();
  /** Every write under way (files and listings), for close() to wait on. */
  private readonly inflight = new Set<Promise<unknown>>();
  /** Bumped by clear/prune so a write that raced the removal does not resurrect its file. */
  private readonly generations = new Map<string, number>();
  /** Error codes of failed writes already logged; cleared by a write that succeeds. */
  private readonly silencedWriteErrors = new Set<string>();
  private closed = false;

  private constructor(
    /** <root>/<mountKey>. */
    readonly subtree: string,
    readonly lockPath: string,
    private readonly lockToken: string,
    readonly limitBytes: number,
    private readonly log: Log,
  ) {}

  /** Creates the directories (0700), takes the mount's lock, removes crash leftovers and indexes what is there. */
  static async open(options: DiskCacheOptions): Promise<DiskCache> {
    return DiskCache.openSubtree({ ...options, key: mountKey(path.resolve(options.mountpoint)) });
  }

  /**
   * The same for a subtree named by its key (one of listSubtrees), for `skills-mount cache`:
   * it takes the lock, so it refuses while a daemon serves that mount.
   */
  static async openSubtree(options: Omit<DiskCacheOptions, 'mountpoint'> & { key: string }): Promise<DiskCache> {
    const { limitBytes, log } = options;
    if (!Number.isFinite(limitBytes) || limitBytes < 0) throw new ConfigError(`disk cache: limitBytes must be a number >= 0, got ${String(limitBytes)}`);
    if (!SUBTREE_KEY_PATTERN.test(options.key)) throw new ConfigError(`disk cache: ${JSON.stringify(options.key)} is not a mount subtree name`);
    const root = path.resolve(options.root);
    // Checked before anything is created. The root is enough: below it no segment starts with '.'
    // (labels cannot) and mount keys end in a hash, so no deeper path can spell a discovery folder.
    const problem = await discoveryFolderProblem(root, { home: options.home ?? homedir(), env: options.env ?? process.env });
    if (problem !== undefined) throw new ConfigError(`disk cache root: ${problem}`);
    await ensurePrivateDirectory(root, log);
    const subtree = path.join(root, options.key);
    await ensurePrivateDirectory(subtree, log);
    const lockPath = path.join(subtree, LOCK_NAME);
    const lockToken = await lockSubtree(lockPath, subtree, log);
    const cache = new DiskCache(subtree, lockPath, lockToken, limitBytes, log);
    try {
      await cache.scan();
      await cache.evict(undefined);
    } catch (error) {
      await releaseLock(lockPath, lockToken);
      throw error;
    }
    return cache;
  }

  /** The store of one server label (validated like a config label). */
  server(label: string): ServerCache {
    if (!isValidLabel(label)) throw new ConfigError(`disk cache: invalid server label ${JSON.stringify(label)}`);
    let store = this.stores.get(label);
    if (store === undefined) {
      store = Object.freeze({
        label,
        get: (uri: string, digest: string, sizeBytes?: number) => this.getFile(label, uri, digest, sizeBytes),
        put: (uri: string, digest: string, bytes: Uint8Array) => this.putFile(label, uri, digest, bytes),
        saveListing: (document: unknown) => this.saveListing(label, document),
        loadListing: () => this.loadListing(label),
      });
      this.stores.set(label, store);
    }
    return store;
  }

  /** Bytes of the cached files of this subtree, as indexed. */
  get totalBytes(): number {
    return this.totalBytesValue;
  }

  /** Per label: files and bytes as indexed, and when its listing was saved. */
  async status(): Promise<CacheStatus> {
    const rows: LabelStatus[] = [];
    for (const label of await this.knownLabels()) {
      let files = 0;
      let bytes = 0;
      for (const entry of this.index.values()) {
        if (entry.label !== label) continue;
        files += 1;
        bytes += entry.sizeBytes;
      }
      rows.push({ label, files, bytes, listingSavedAt: (await readListing(path.join(this.subtree, label, LISTING_NAME))).listing?.savedAt });
    }
    return { subtree: this.subtree, lockHolderPid: this.closed ? undefined : process.pid, labels: rows };
  }

  /** Removes the subtree of every label not in `keepLabels` (a server the user removed); returns the labels removed. */
  async prune(keepLabels: Iterable<string>): Promise<string[]> {
    this.assertOpen('prune');
    const keep = new Set(keepLabels);
    const removed: string[] = [];
    for (const label of await this.knownLabels()) {
      if (keep.has(label)) continue;
      await this.removeLabel(label);
      removed.push(label);
    }
    return removed;
  }

  /** Removes one label's subtree, or every label's; returns the labels removed. The lock and subtree stay. */
  async clear(label?: string): Promise<string[]> {
    this.assertOpen('clear');
    if (label !== undefined && !isValidLabel(label)) throw new ConfigError(`disk cache: invalid server label ${JSON.stringify(label)}`);
    const labels = (await this.knownLabels()).filter((known) => label === undefined || known === label);
    for (const known of labels) await this.removeLabel(known);
    return labels;
  }

  /** Waits for writes under way, then releases the lock. Later reads miss and writes are ignored. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.inflight]);
    await releaseLock(this.lockPath, this.lockToken);
  }

  // ---- one label's files ----

  private async getFile(label: string, uri: string, digest: string, sizeBytes: number | undefined): Promise<Buffer | undefined> {
    if (this.closed || !DIGEST_PATTERN.test(digest)) return undefined;
    try {
      return await this.lookup(label, uri, digest, sizeBytes);
    } catch (error) {
      // An I/O error is a miss: the caller fetches again, and the file is left for the next open's scan.
      this.log(`[${label}] disk cache: ${uri}: cannot read (${errorMessage(error)}); treated as a miss`);
      return undefined;
    }
  }

  private async lookup(label: string, uri: string, digest: string, sizeBytes: number | undefined): Promise<Buffer | undefined> {
    const file = path.join(label, cacheFileName(uri, digest));
    const absolute = path.join(this.subtree, file);
    const discard = async (reason: string): Promise<undefined> => {
      this.forget(file);
      await rm(absolute, { recursive: true, force: true }).catch(() => {});
      this.log(`[${label}] disk cache: ${uri}: ${reason}; discarded`);
      return undefined;
    };
    let handle: FileHandle;
    try {
      handle = await open(absolute, READ_FLAGS);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        this.forget(file);
        return undefined;
      }
      // O_NOFOLLOW refuses a symlink with ELOOP (EMLINK on FreeBSD).
      return discard(code === 'ELOOP' || code === 'EMLINK' ? 'a symbolic link, not a regular file' : `cannot be opened (${errorMessage(error)})`);
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) return await discard(`${kindOf(stats)}, not a regular file`);
      const expected = sizeBytes ?? this.index.get(file)?.sizeBytes;
      if (expected !== undefined && stats.size !== expected) return await discard(`${stats.size} bytes where ${expected} are expected (truncated or replaced)`);
      // Never read a file into memory that the cache could not have stored.
      if (stats.size > this.limitBytes) return await discard(`${stats.size} bytes, more than the cache limit`);
      const bytes = await readExactly(handle, stats.size);
      if (bytes === undefined) return await discard('changed size while being read');
      if (sha256Digest(bytes) !== digest) return await discard('content does not match its digest');
      this.touch({ label, file, sizeBytes: bytes.length });
      // Recency survives a restart through the mtime (the scan orders by it); content is untouched.
      const now = new Date();
      await handle.utimes(now, now).catch(() => {});
      return bytes;
    } finally {
      await handle.close().catch(() => {});
    }
  }

  private async putFile(label: string, uri: string, digest: string, bytes: Uint8Array): Promise<boolean> {
    if (this.closed) return false;
    // Callers put only bytes that just verified; checking again is cheap next to the write.
    if (!DIGEST_PATTERN.test(digest) || sha256Digest(bytes) !== digest) {
      this.log(`[${label}] disk cache: ${uri}: bytes do not match ${digest}; not stored`);
      return false;
    }
    if (bytes.length > this.limitBytes) return false;
    const file = path.join(label, cacheFileName(uri, digest));
    const entry = this.index.get(file);
    if (entry !== undefined) {
      // Never rewritten: a file that went bad is caught (and removed) by the next get.
      this.touch(entry);
      return true;
    }
    const running = this.pending.get(file);
    if (running !== undefined) return running;
    const job = this.track(this.writeFile(label, uri, file, bytes)).finally(() => this.pending.delete(file));
    this.pending.set(file, job);
    return job;
  }

  private async writeFile(label: string, uri: string, file: string, bytes: Uint8Array): Promise<boolean> {
    const generation = this.generation(label);
    const absolute = path.join(this.subtree, file);
    try {
      await mkdir(path.dirname(absolute), { recursive: true, mode: 0o700 });
      await writeAtomically(path.dirname(absolute), path.basename(absolute), bytes, TEMP_PREFIX);
    } catch (error) {
      // A clear() that removed the directory mid-write is not a disk problem.
      if (generation === this.generation(label)) this.writeFailed(label, uri, error);
      return false;
    }
    if (generation !== this.generation(label)) {
      await rm(absolute, { force: true }).catch(() => {});
      return false;
    }
    this.silencedWriteErrors.clear();
    this.touch({ label, file, sizeBytes: bytes.length });
    await this.evict(file);
    return true;
  }

  private async saveListing(label: string, document: unknown): Promise<boolean> {
    if (this.closed) return false;
    const generation = this.generation(label);
    const labelDir = path.join(this.subtree, label);
    const job = (async () => {
      try {
        const text = JSON.stringify({ savedAt: new Date().toISOString(), document });
        await mkdir(labelDir, { recursive: true, mode: 0o700 });
        await writeAtomically(labelDir, LISTING_NAME, Buffer.from(text, 'utf8'), TEMP_PREFIX);
      } catch (error) {
        if (generation === this.generation(label)) this.writeFailed(label, LISTING_NAME, error);
        return false;
      }
      this.silencedWriteErrors.clear();
      return true;
    })();
    return this.track(job);
  }

  private async loadListing(label: string): Promise<SavedListing | undefined> {
    if (this.closed) return undefined;
    const file = path.join(this.subtree, label, LISTING_NAME);
    let found: Awaited<ReturnType<typeof readListing>>;
    try {
      found = await readListing(file);
    } catch (error) {
      this.log(`[${label}] disk cache: ${LISTING_NAME}: cannot read (${errorMessage(error)}); not used`);
      return undefined;
    }
    if (found.problem !== undefined) {
      await rm(file, { recursive: true, force: true }).catch(() => {});
      this.log(`[${label}] disk cache: ${LISTING_NAME}: ${found.problem}; discarded`);
    }
    return found.listing;
  }

  // ---- the index ----

  /** Adds or refreshes an entry as the most recently used. */
  private touch(entry: IndexEntry): void {
    this.forget(entry.file);
    this.index.set(entry.file, entry);
    this.totalBytesValue += entry.sizeBytes;
  }

  private forget(file: string): void {
    const entry = this.index.get(file);
    if (entry === undefined) return;
    this.index.delete(file);
    this.totalBytesValue -= entry.sizeBytes;
  }

  /** Removes least recently used files (any label) until the bound holds; `keep` is never evicted. */
  private async evict(keep: string | undefined): Promise<void> {
    while (this.totalBytesValue > this.limitBytes) {
      let victim: string | undefined;
      for (const file of this.index.keys()) {
        if (file !== keep) {
          victim = file;
          break;
        }
      }
      if (victim === undefined) return;
      // Out of the index before the await, so concurrent evictions never pick the same file.
      this.forget(victim);
      await rm(path.join(this.subtree, victim), { force: true }).catch(() => {});
    }
  }

  // ---- housekeeping ----

  private generation(label: string): number {
    return this.generations.get(label) ?? 0;
  }

  /** Runs a write so close() can wait for it. */
  private track<T>(job: Promise<T>): Promise<T> {
    this.inflight.add(job);
    void job.finally(() => this.inflight.delete(job)).catch(() => {});
    return job;
  }

  private writeFailed(label: string, what: string, error: unknown): void {
    const code = errorCode(error) ?? 'error';
    if (this.silencedWriteErrors.has(code)) return;
    this.silencedWriteErrors.add(code);
    this.log(`[${label}] disk cache: ${what}: cannot write (${errorMessage(error)}); not cached, and further ${code} write errors are not logged until a write succeeds`);
  }

  private assertOpen(operation: string): void {
    if (this.closed) throw new Error(`disk cache ${this.subtree}: ${operation} after close()`);
  }

  private async knownLabels(): Promise<string[]> {
    const labels = new Set(await labelsOnDisk(this.subtree));
    for (const entry of this.index.values()) labels.add(entry.label);
    return [...labels].sort();
  }

  private async removeLabel(label: string): Promise<void> {
    this.generations.set(label, this.generation(label) + 1);
    for (const [file, entry] of [...this.index]) if (entry.label === label) this.forget(file);
    await rm(path.join(this.subtree, label), { recursive: true, force: true });
  }

  /** Indexes the subtree with mtimes as recency; removes temp files (the lock says no writer is alive) and anything of the wrong type. */
  private async scan(): Promise<void> {
    const found: Array<IndexEntry & { mtimeMs: number }> = [];
    for (const entry of await readdir(this.subtree, { withFileTypes: true })) {
      if (!isValidLabel(entry.name)) continue;
      const label = entry.name;
      const labelDir = path.join(this.subtree, label);
      const discard = (relative: string, reason: string) => this.discardAtScan(label, relative, reason);
      if (!entry.isDirectory()) {
        await discard('', `${kindOf(entry)} where a directory belongs`);
        continue;
      }
      await ensurePrivateDirectory(labelDir, this.log);
      await removeTemps(labelDir);
      const filesDir = path.join(labelDir, FILES_DIR);
      const filesStats = await lstatOrUndefined(filesDir);
      if (filesStats === undefined) continue;
      if (!filesStats.isDirectory()) {
        await discard(FILES_DIR, `${kindOf(filesStats)} where a directory belongs`);
        continue;
      }
      await ensurePrivateDirectory(filesDir, this.log);
      for (const bucket of await readdir(filesDir, { withFileTypes: true })) {
        if (!BUCKET_PATTERN.test(bucket.name)) continue;
        const bucketRelative = path.join(FILES_DIR, bucket.name);
        if (!bucket.isDirectory()) {
          await discard(bucketRelative, `${kindOf(bucket)} where a directory belongs`);
          continue;
        }
        const bucketDir = path.join(labelDir, bucketRelative);
        await ensurePrivateDirectory(bucketDir, this.log);
        for (const file of await readdir(bucketDir, { withFileTypes: true })) {
          const relative = path.join(bucketRelative, file.name);
          if (file.name.startsWith(TEMP_PREFIX)) {
            await rm(path.join(labelDir, relative), { recursive: true, force: true });
            continue;
          }
          if (!KEY_PATTERN.test(file.name) || !file.name.startsWith(bucket.name)) continue;
          const stats = await lstatOrUndefined(path.join(labelDir, relative));
          if (stats === undefined) continue;
          if (!stats.isFile()) {
            await discard(relative, `${kindOf(stats)}, not a regular file`);
            continue;
          }
          if ((stats.mode & 0o777) !== 0o600) await chmod(path.join(labelDir, relative), 0o600).catch(() => {});
          found.push({ label, file: path.join(label, relative), sizeBytes: stats.size, mtimeMs: stats.mtimeMs });
        }
      }
    }
    found.sort((a, b) => a.mtimeMs - b.mtimeMs);
    for (const { mtimeMs: _mtimeMs, ...entry } of found) this.touch(entry);
  }

  private async discardAtScan(label: string, relative: string, reason: string): Promise<void> {
    await rm(path.join(this.subtree, label, relative), { recursive: true, force: true }).catch(() => {});
    this.log(`[${label}] disk cache: ${relative === '' ? 'label directory' : relative}: ${reason}; discarded`);
  }
}

/**
 * The status of a mount's subtree read without its lock (a daemon may be writing): nothing is
 * created, changed or removed. An absent subtree has no labels.
 */
export async function readCacheStatus(options: { root: string; mountpoint: string } | { root: string; key: string }): Promise<CacheStatus> {
  const key = 'key' in options ? options.key : mountKey(path.resolve(options.mountpoint));
  const subtree = path.join(path.resolve(options.root), key);
  const holder = await readLock(path.join(subtree, LOCK_NAME));
  const lockHolderPid = holder?.pid !== undefined && lockHeldBy(holder) !== undefined ? holder.pid : undefined;
  const labels: LabelStatus[] = [];
  for (const label of await labelsOnDisk(subtree)) {
    let files = 0;
    let bytes = 0;
    const filesDir = path.join(subtree, label, FILES_DIR);
    for (const bucket of await readdirOrEmpty(filesDir)) {
      if (!BUCKET_PATTERN.test(bucket)) continue;
      for (const name of await readdirOrEmpty(path.join(filesDir, bucket))) {
        if (!KEY_PATTERN.test(name) || !name.startsWith(bucket)) continue;
        const stats = await lstatOrUndefined(path.join(filesDir, bucket, name));
        if (stats === undefined || !stats.isFile()) continue;
        files += 1;
        bytes += stats.size;
      }
    }
    labels.push({ label, files, bytes, listingSavedAt: (await readListing(path.join(subtree, label, LISTING_NAME))).listing?.savedAt });
  }
  return { subtree, lockHolderPid, labels };
}

/** The mount subtrees under a cache root (one per mountpoint that ever used it), sorted. */
export async function listSubtrees(root: string): Promise<string[]> {
  const names = await readdirOrEmpty(path.resolve(root));
  const keys: string[] = [];
  for (const name of names) {
    if (!SUBTREE_KEY_PATTERN.test(name)) continue;
    const stats = await lstatOrUndefined(path.join(path.resolve(root), name));
    if (stats?.isDirectory()) keys.push(name);
  }
  return keys.sort();
}

// ---- the lock ----

/** Takes the mount subtree's lock (one daemon per mountpoint), or says who holds it. */
async function lockSubtree(lockPath: string, subtree: string, log: Log): Promise<string> {
  let taken;
  try {
    taken = await tryLock(lockPath, (stale) =>
      log(`disk cache: took over the stale lock ${lockPath} (${stale.pid === undefined ? 'it named no process' : `pid ${stale.pid} is not running`})`),
    );
  } catch (error) {
    if (errorCode(error) !== undefined) throw error; // I/O, not a lock changing hands
    throw new CacheLockedError(`disk cache ${subtree}: ${errorMessage(error)}; is another skills-mount starting on this mountpoint?`, lockPath, undefined);
  }
  if ('token' in taken) return taken.token;
  throw new CacheLockedError(
    `disk cache ${subtree} is in use: ${taken.heldBy} holds the lock file ${lockPath}; one skills-mount per mountpoint (if that process is not a skills-mount serving this mountpoint, remove the lock file)`,
    lockPath,
    taken.holder.pid,
  );
}

// ---- files and directories ----

/**
 * Makes `dir` (and missing parents) with mode 0700. An existing one must be a real directory
 * owned by us, else ConfigError; group or other bits on it are removed (logged). Symlinked
 * ancestors are fine: only the cache's own directories must be what they claim.
 */
async function ensurePrivateDirectory(dir: string, log: Log): Promise<void> {
  let stats = await lstatOrUndefined(dir);
  if (stats === undefined) {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    stats = await lstat(dir);
  }
  if (stats.isSymbolicLink()) throw new ConfigError(`disk cache: ${dir} is a symbolic link; refusing to use it (configure the real directory instead)`);
  if (!stats.isDirectory()) throw new ConfigError(`disk cache: ${dir} exists and is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) {
    throw new ConfigError(`disk cache: ${dir} belongs to uid ${stats.uid}, not to this user (uid ${uid}); refusing a cache directory someone else controls`);
  }
  const mode = stats.mode & 0o777;
  if (mode !== 0o700) {
    await chmod(dir, 0o700);
    if ((mode & 0o077) !== 0) log(`disk cache: ${dir} had mode ${mode.toString(8).padStart(4, '0')}, open to other users; changed to 0700`);
  }
}

async function removeTemps(dir: string): Promise<void> {
  for (const name of await readdirOrEmpty(dir)) {
    if (name.startsWith(TEMP_PREFIX)) await rm(path.join(dir, name), { recursive: true, force: true });
  }
}

async function readExactly(handle: FileHandle, sizeBytes: number): Promise<Buffer | undefined> {
  const buffer = Buffer.alloc(sizeBytes);
  let offset = 0;
  while (offset < sizeBytes) {
    const { bytesRead } = await handle.read(buffer, offset, sizeBytes - offset, offset);
    if (bytesRead === 0) return undefined;
    offset += bytesRead;
  }
  const { bytesRead } = await handle.read(Buffer.alloc(1), 0, 1, sizeBytes);
  return bytesRead === 0 ? buffer : undefined;
}

/** The listing in `file`, or why it cannot be used; neither when there is none. */
async function readListing(file: string): Promise<{ listing?: SavedListing; problem?: string }> {
  let handle: FileHandle;
  try {
    handle = await open(file, READ_FLAGS);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return {};
    return { problem: code === 'ELOOP' || code === 'EMLINK' ? 'a symbolic link, not a regular file' : `cannot be opened (${errorMessage(error)})` };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { problem: `${kindOf(stats)}, not a regular file` };
    if (stats.size > MAX_LISTING_BYTES) return { problem: `${stats.size} bytes, more than a listing can be` };
    const bytes = await readExactly(handle, stats.size);
    if (bytes === undefined) return { problem: 'changed size while being read' };
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch (error) {
      return { problem: `not JSON (${errorMessage(error)})` };
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !('document' in parsed)) return { problem: 'not a saved listing (no document)' };
    const { savedAt, document } = parsed as { savedAt?: unknown; document: unknown };
    if (typeof savedAt !== 'string' || Number.isNaN(Date.parse(savedAt))) return { problem: 'not a saved listing (no savedAt time)' };
    return { listing: { savedAt, document } };
  } finally {
    await handle.close().catch(() => {});
  }
}

/** Label directories in a subtree (not the lock, temp files or strangers). */
async function labelsOnDisk(subtree: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(subtree, { withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return [];
    throw error;
  }
  return entries.filter((entry) => entry.isDirectory() && isValidLabel(entry.name)).map((entry) => entry.name).sort();
}

async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}

