// What one mount's subtree holds: the index of its cached files (least recently used first;
// recency survives a restart through each file's mtime), the per-mount bound kept by removing
// the least recently used, and the removal of whole labels (prune, clear). Knows labels, names
// and sizes; never reads a file's content.
import { chmod, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { PRIVATE_FILE_MODE } from '../file-modes.js';
import { isValidLabel } from '../labels.js';
import type { Log } from '../log.js';
import { kindOf, lstatOrUndefined } from '../private-files.js';
import { removeTemps } from './cache-root.js';
import { ensurePrivateMode, type ClaimedSubtree } from './claimed-subtree.js';
import { BUCKET_PATTERN, FILES_DIR, KEY_PATTERN, TEMP_PREFIX, labelsOnDisk } from './layout.js';

/** One cached file. */
export interface IndexEntry {
  label: string;
  /** Path relative to the subtree (its index key). */
  file: string;
  sizeBytes: number;
}

/** A cached file's key in the index, relative to the subtree (as the scan spells it: `<label>/files/<hh>/<hex>`). */
export function indexKey(label: string, name: string): string {
  return `${label}/${FILES_DIR}/${name}`;
}

/**
 * The index of one claimed subtree, kept by its lock holder alone: a file it does not know is not
 * in the subtree, so a lookup of it needs no disk.
 */
export class CacheIndex {
  /** Files by index key, least recently used first (a Map keeps insertion order; a hit re-inserts). */
  private readonly entries = new Map<string, IndexEntry>();
  private total = 0;
  /** Files indexed per label, so a label with none misses without a key being computed. */
  private readonly filesByLabel = new Map<string, number>();
  /** Bumped by removeLabel so a write that raced the removal does not resurrect its file. */
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly held: ClaimedSubtree,
    private limit: number,
    private readonly log: Log,
  ) {}

  /** Bytes of the indexed files. */
  get totalBytes(): number {
    return this.total;
  }

  /** The bound on totalBytes. */
  get limitBytes(): number {
    return this.limit;
  }

  /** A new bound (the root's bound may leave less than was asked for), removing what no longer fits. */
  async setLimit(limitBytes: number): Promise<void> {
    this.limit = limitBytes;
    await this.evict(undefined);
  }

  /** Whether `file` (an index key) is cached. */
  has(file: string): boolean {
    return this.entries.has(file);
  }

  /** Its entry, if `file` is cached. */
  get(file: string): IndexEntry | undefined {
    return this.entries.get(file);
  }

  /** Whether any file of `label` is indexed. */
  hasFilesOf(label: string): boolean {
    return this.filesByLabel.has(label);
  }

  /** Adds or refreshes an entry as the most recently used. */
  touch(entry: IndexEntry): void {
    this.forget(entry.file);
    this.entries.set(entry.file, entry);
    this.total += entry.sizeBytes;
    this.filesByLabel.set(entry.label, (this.filesByLabel.get(entry.label) ?? 0) + 1);
  }

  /** Drops an entry (its file is gone, or about to be). */
  forget(file: string): void {
    const entry = this.entries.get(file);
    if (entry === undefined) return;
    this.entries.delete(file);
    this.total -= entry.sizeBytes;
    const left = (this.filesByLabel.get(entry.label) ?? 1) - 1;
    if (left > 0) this.filesByLabel.set(entry.label, left);
    else this.filesByLabel.delete(entry.label);
  }

  /** Removes least recently used files (any label) until the bound holds; `keep` is never evicted. */
  async evict(keep: string | undefined): Promise<void> {
    while (this.total > this.limit) {
      let victim: IndexEntry | undefined;
      for (const entry of this.entries.values()) {
        if (entry.file !== keep) {
          victim = entry;
          break;
        }
      }
      if (victim === undefined) return;
      // Out of the index before the await, so concurrent evictions never pick the same file.
      this.forget(victim.file);
      const dirs = await this.held.labelDirectories(victim.label).catch(() => undefined);
      if (dirs !== undefined) await rm(dirs.files.at(path.relative(path.join(victim.label, FILES_DIR), victim.file)), { force: true }).catch(() => {});
    }
  }

  /** How many times the label was removed: a write compares it before and after. */
  generation(label: string): number {
    return this.generations.get(label) ?? 0;
  }

  /** The labels that have indexed files. */
  labelsWithFiles(): Set<string> {
    return new Set(this.filesByLabel.keys());
  }

  /** Labels on disk or in the index, sorted. */
  async knownLabels(): Promise<string[]> {
    const labels = new Set(await labelsOnDisk(this.held.dir.at(''), isValidLabel));
    for (const entry of this.entries.values()) labels.add(entry.label);
    return [...labels].sort();
  }

  /** Removes a label's directory and everything indexed in it. */
  async removeLabel(label: string): Promise<void> {
    this.generations.set(label, this.generation(label) + 1);
    for (const [file, entry] of [...this.entries]) if (entry.label === label) this.forget(file);
    this.held.retireLabel(label);
    await rm(this.held.dir.at(label), { recursive: true, force: true });
  }

  /** Indexes the subtree with mtimes as recency; removes temp files (the lock says no writer is alive) and anything of the wrong type. */
  async scan(): Promise<void> {
    const found: Array<IndexEntry & { mtimeMs: number }> = [];
    await removeTemps(this.held.dir.at(''));
    for (const entry of await readdir(this.held.dir.at(''), { withFileTypes: true })) {
      if (!isValidLabel(entry.name)) continue;
      const label = entry.name;
      const labelDir = this.held.dir.at(label);
      const discard = (relative: string, reason: string) => this.discardAtScan(label, relative, reason);
      if (!entry.isDirectory()) {
        await discard('', `${kindOf(entry)} where a directory belongs`);
        continue;
      }
      await ensurePrivateMode(labelDir, this.held.dir.shown(label), this.log);
      await removeTemps(labelDir);
      const filesDir = path.join(labelDir, FILES_DIR);
      const filesStats = await lstatOrUndefined(filesDir);
      if (filesStats === undefined) continue;
      if (!filesStats.isDirectory()) {
        await discard(FILES_DIR, `${kindOf(filesStats)} where a directory belongs`);
        continue;
      }
      await ensurePrivateMode(filesDir, this.held.dir.shown(path.join(label, FILES_DIR)), this.log);
      for (const bucket of await readdir(filesDir, { withFileTypes: true })) {
        if (!BUCKET_PATTERN.test(bucket.name)) continue;
        const bucketRelative = path.join(FILES_DIR, bucket.name);
        if (!bucket.isDirectory()) {
          await discard(bucketRelative, `${kindOf(bucket)} where a directory belongs`);
          continue;
        }
        const bucketDir = path.join(labelDir, bucketRelative);
        await ensurePrivateMode(bucketDir, this.held.dir.shown(path.join(label, bucketRelative)), this.log);
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
          if ((stats.mode & 0o777) !== PRIVATE_FILE_MODE) await chmod(path.join(labelDir, relative), PRIVATE_FILE_MODE).catch(() => {});
          found.push({ label, file: path.join(label, relative), sizeBytes: stats.size, mtimeMs: stats.mtimeMs });
        }
      }
    }
    found.sort((a, b) => a.mtimeMs - b.mtimeMs);
    for (const { mtimeMs: _mtimeMs, ...entry } of found) this.touch(entry);
  }

  private async discardAtScan(label: string, relative: string, reason: string): Promise<void> {
    await rm(this.held.dir.at(path.join(label, relative)), { recursive: true, force: true }).catch(() => {});
    this.log(`[${label}] disk cache: ${relative === '' ? 'label directory' : relative}: ${reason}; discarded`);
  }
}
