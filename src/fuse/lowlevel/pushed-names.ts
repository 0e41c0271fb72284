// The names and attributes the edge pushes to the addon's table (native/entry_table.c), so that
// LOOKUP, GETATTR and READDIR(PLUS) of them are answered without JavaScript: which directories
// hold pushed names, their removal before the kernel hears of a change, and the lookups the addon
// answered from them, counted into the InodeTable. What to push is the edge's policy; no requests here.
import { LRUCache } from 'lru-cache';
import { ATTR_FIELDS, LOOKUP_FIELDS, type AddonLookups } from './addon.js';
import type { InodeTable, KernelNode } from './inode-table.js';

/** The addon's table, bound to the mounted session. */
export interface AddonTable {
  /** copies: per name, the path of a local copy the addon may open (read whole, hashed to the name's 32 bytes in `digests`). */
  put(dir: number, whole: boolean, names: string[], attrs: Float64Array, copies?: Array<string | undefined>, digests?: Uint8Array): boolean;
  drop(dir: number): boolean;
  lookups(): AddonLookups | undefined;
}

/** Local copies pushed with a directory's names: per name a path or none, 32 digest bytes each. */
export interface PushedCopies {
  /** undefined: no name has a copy. */
  paths: Array<string | undefined> | undefined;
  digests: Uint8Array | undefined;
  /** Some file's copy waits for its skill's SKILL.md: push the directory again after a read below it. */
  pending: boolean;
}

/** A directory names are pushed for: one the kernel holds, or one pushed ahead of its first lookup. */
export type PushedDirectory = Pick<KernelNode, 'ino' | 'path'>;

/** Directories pushed ahead of the kernel's knowing them, kept at most: the oldest still unknown go. */
const MAX_AHEAD_DIRECTORIES = 4_096;

export class PushedNames {
  /** Directories whose names were pushed (some may have been evicted by the addon since), by inode. */
  private readonly pushed = new Map<number, PushedDirectory>();
  /** Of those, the ones pushed before the kernel looked them up (dropped once too many, if still unknown). */
  private readonly ahead: LRUCache<number, true>;
  /** Of those, the ones whose names were pushed together: a complete listing, or all the names the core held. */
  private readonly resolved = new Set<number>();
  /** Of those, the ones pushed while some file's copy waited for its skill's SKILL.md to verify, with their parent's inode. */
  private readonly copiesPending = new Map<number, number>();
  /** Per directory, its subdirectories in copiesPending. */
  private readonly pendingBelow = new Map<number, Set<number>>();
  /** Bumped by every invalidation: what was resolved before one must not be pushed after it. */
  private invalidations = 0;

  /** `table` undefined: nothing is pushed, every request goes to JS. */
  constructor(
    private readonly table: AddonTable | undefined,
    private readonly inodes: InodeTable,
  ) {
    this.ahead = new LRUCache<number, true>({
      max: MAX_AHEAD_DIRECTORIES,
      dispose: (_, ino, reason) => {
        if (reason === 'evict' && this.inodes.get(ino) === undefined) this.forgotten(ino);
      },
    });
  }

  /** Whether anything pushed reaches an addon table (else every request goes to JS). */
  get enabled(): boolean {
    return this.table !== undefined;
  }

  /** Whether the directory's names were pushed together (and not dropped since; the addon may have evicted them). */
  isResolved(ino: number): boolean {
    return this.resolved.has(ino);
  }

  /** Taken before resolving what may be pushed; pass it to the push. */
  mark(): number {
    return this.invalidations;
  }

  /** One name in `parent` (with the parent's own attributes as "."), as a lookup just answered it. */
  entry(mark: number, parent: KernelNode, parentFields: Float64Array, name: string, fields: Float64Array): void {
    const attrs = new Float64Array(2 * ATTR_FIELDS);
    attrs.set(parentFields, 0);
    attrs.set(fields, ATTR_FIELDS);
    this.put(mark, parent, false, ['.', name], attrs);
  }

  /** A directory's complete listing, "." and ".." first (ATTR_FIELDS per name; mode 0: listed only). */
  listing(mark: number, directory: KernelNode, names: string[], attrs: Float64Array): void {
    if (this.put(mark, directory, true, names, attrs)) this.resolved.add(directory.ino);
  }

  /**
   * Names of a directory resolved without the kernel asking, "." and ".." first: its complete
   * listing when `complete`, else names for lookups only. The directory may be one the kernel
   * has not looked up yet. Returns whether they were pushed.
   */
  names(mark: number, directory: PushedDirectory, complete: boolean, names: string[], attrs: Float64Array, copies?: PushedCopies, parent?: number): boolean {
    const known = this.inodes.get(directory.ino) !== undefined;
    if (!this.put(mark, directory, complete, names, attrs, copies)) return false;
    this.noPendingCopies(directory.ino);
    if (copies?.pending && parent !== undefined) {
      this.copiesPending.set(directory.ino, parent);
      const below = this.pendingBelow.get(parent) ?? new Set<number>();
      below.add(directory.ino);
      this.pendingBelow.set(parent, below);
    }
    this.resolved.add(directory.ino);
    if (!known) this.ahead.set(directory.ino, true);
    return true;
  }

  /** Before the kernel is told that names in `ino` (or its listing) changed. */
  dropDirectory(ino: number): void {
    this.invalidations++;
    this.forgotten(ino);
  }

  /**
   * At once when the core reports a change at `prefix` (a path), before the kernel is told: every
   * directory pushed at or under it, and its parent (whose entry for it may name another version).
   */
  dropChanged(prefix: string): void {
    this.invalidations++;
    const base = prefix === '/' ? '/' : `${prefix}/`;
    const parent = prefix === '/' ? '/' : prefix.slice(0, prefix.lastIndexOf('/')) || '/';
    for (const [ino, directory] of this.pushed) {
      if (directory.path === prefix || directory.path.startsWith(base) || directory.path === parent) this.forgotten(ino);
    }
  }

  /** The kernel forgot the directory: it asks nothing more in it, so its names go. */
  forgotten(ino: number): void {
    this.resolved.delete(ino);
    this.noPendingCopies(ino);
    this.pendingBelow.delete(ino);
    if (this.pushed.delete(ino)) this.table?.drop(ino);
  }

  /** Counts the lookups the addon answered into the inode table: before anything reads the table. */
  absorb(): void {
    const taken = this.table?.lookups();
    if (taken === undefined) return;
    const { names, fields } = taken;
    for (const [index, name] of names.entries()) {
      const at = index * LOOKUP_FIELDS;
      const parent = this.inodes.get(fields[at]!);
      // The kernel looks names up only in a directory it holds, and forgets it only after what it
      // looked up there: the parent is known, unless an earlier mount's inode is named.
      if (parent === undefined) continue;
      this.inodes.lookedUpInAddon(parent, name, fields.subarray(at + 2, at + 2 + ATTR_FIELDS), fields[at + 1]!);
    }
  }

  /** Whether the directory was pushed while some file's copy there waited (push it again after a read that may allow it). */
  hasCopiesPending(ino: number): boolean {
    return this.copiesPending.has(ino);
  }

  /** Whether copies wait in the directory or in one of its subdirectories. */
  copiesWaitAt(ino: number): boolean {
    return this.copiesPending.has(ino) || (this.pendingBelow.get(ino)?.size ?? 0) > 0;
  }

  private noPendingCopies(ino: number): void {
    const parent = this.copiesPending.get(ino);
    if (parent === undefined) return;
    this.copiesPending.delete(ino);
    const below = this.pendingBelow.get(parent);
    below?.delete(ino);
    if (below?.size === 0) this.pendingBelow.delete(parent);
  }

  private put(mark: number, directory: PushedDirectory, whole: boolean, names: string[], attrs: Float64Array, copies?: PushedCopies): boolean {
    if (this.table === undefined || mark !== this.invalidations) return false;
    // Still the node the kernel holds (not forgotten while the answer was resolved), or one it does not know yet.
    const known = this.inodes.get(directory.ino);
    if (known !== undefined && known !== directory) return false;
    const pushed = copies?.paths === undefined ? this.table.put(directory.ino, whole, names, attrs) : this.table.put(directory.ino, whole, names, attrs, copies.paths, copies.digests);
    if (!pushed) return false;
    this.pushed.set(directory.ino, directory);
    return true;
  }
}
