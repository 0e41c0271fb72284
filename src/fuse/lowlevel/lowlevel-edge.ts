// The low-level FUSE edge: each kernel request the addon hands over becomes one FilesystemCore
// call and exactly one reply. Kernel caching is decided here: one inode per content version
// (so pages are always kept), opens pinned once per version and then answered by the addon
// (counted opens), names and attributes pushed for the addon to answer (pushed-names.ts),
// zero-message opendir where the kernel offers it, readdirplus, per-reply timeouts, and
// invalidations when the core reports a change.
import { constants as fsConstants } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { LRUCache } from 'lru-cache';
import type { FilesystemCore, HeldListing, NodeAttributes } from '../../fs/filesystem-core.js';
import type { Log } from '../../log.js';
import type { AddonAnswers, OperationObserver } from '../operation-observer.js';
import { Errno, errnoForDomainError } from '../errno.js';
import { describeError } from '../describe-error.js';
import { ATTR, ATTR_FIELDS, OPEN_FLAGS, type Addon, type Session } from './addon.js';
import { observeAddon } from './observed-addon.js';
import { InodeTable, ROOT_INODE, childPath, encodeAttributes, type KernelNode, type Ownership } from './inode-table.js';
import { VersionPins, type Pin } from './version-pins.js';
import { PushedNames, type AddonTable, type PushedCopies, type PushedDirectory } from './pushed-names.js';

const { errno } = osConstants;
const ENOSYS = errno.ENOSYS;
const ESTALE = errno.ESTALE ?? 116;
const ENOENT = errno.ENOENT;
const ERANGE = errno.ERANGE;
const ENOTSUP = errno.ENOTSUP;
const ENOTDIR = errno.ENOTDIR;
const ETIMEDOUT = errno.ETIMEDOUT;
const EISDIR = errno.EISDIR;
const ESTALE_RETRY_NOTE = 'the kernel retries the open with a fresh lookup';
const USER_XATTR_PREFIX = 'user.';
const NAME_MAX_BYTES = 255;
const BLOCK_SIZE_BYTES = 4096;
const ST_RDONLY = 1;
const ST_NOSUID = 2;
/** fuse_dirent header (24 bytes) and fuse_entry_out (128): the sizes a directory reply packs. */
const DIRENT_HEADER_BYTES = 24;
const DIRENTPLUS_HEADER_BYTES = 24 + 128;
/** Negative answers the kernel may hold, remembered so a change can take them back. */
const MAX_REMEMBERED_MISSES = 10_000;
/** How soon after a failed read the kernel's retry of the same page is answered with the same error. */
const READ_RETRY_WINDOW_MS = 50;
/** Directories whose listing is held while the kernel pages through it. */
const MAX_LISTINGS_PAGED = 64;
/**
 * The leading bytes of a version handed to the kernel's page cache with its first open's reply
 * (one READ's worth at most, 1 MiB): a reader's reads of a file up to this size then need no
 * trip to the daemon. Bytes the daemon already holds for this open; nothing is fetched for it.
 */
const STORED_WITH_OPEN_BYTES = 1 << 20;
/** How long the invalidations of one burst of changes are gathered before they are sent. */
const CHANGE_BATCH_MS = 10;
/** Names pushed ahead at a first lookup, its directory and held subdirectories together (a skill's folders, not a label of 10,000 skills). */
const MAX_HELD_NAMES_PUSHED = 512;
/** Bytes of a SHA-256 digest, as the addon's table takes each copy's. */
const DIGEST_BYTES = 32;
/** Names the addon keeps to answer lookups, getattrs and listings itself (about 190 bytes each: 12 MiB at the limit). */
export const DEFAULT_ADDON_TABLE_ENTRIES = 65_536;
/**
 * The largest stored copy the addon opens itself: it reads and hashes it on the session thread,
 * which holds up the requests behind it for ~1 ms at this size (open to close of a 1 MiB copy,
 * 1.2 ms; in JavaScript 2.2-3 ms). All 195 files of the real corpus are under 256 KiB, and the
 * benchmark's realistic sizes reach 1 MiB; a larger file opens in JavaScript, so no single open
 * stalls the others longer.
 */
const ADDON_COPY_MAX_BYTES = 1024 * 1024;
/** Bytes the addon's open copies hold together (each is freed at its last release). */
const ADDON_COPY_TOTAL_BYTES = 64 * 2 ** 20;

export interface LowLevelEdgeOptions {
  log: Log;
  owner: Ownership;
  /** Names and attributes of content-addressed nodes: long, since every change is invalidated. */
  entryTimeoutSeconds: number;
  attrTimeoutSeconds: number;
  negativeTimeoutSeconds: number;
  /** Bytes of opened versions kept for the next open of the same inode (beyond what open handles hold). */
  pinnedBytesLimit: number;
  /** A request the core has not answered by then gets ETIMEDOUT (a late answer is dropped). */
  operationTimeoutMs: number;
  /**
   * Let the kernel open files without asking (FUSE_CAP_NO_OPEN_SUPPORT): no round trip per open
   * or release, but a version is pinned at the first read rather than at open, so a handle
   * opened and not yet read when the server changes fails its read with ESTALE where a counted
   * open reads the version it opened. Off by default (the benchmark compares the two).
   */
  zeroMessageOpen?: boolean;
  /**
   * Names (with attributes) the addon keeps to answer LOOKUP, GETATTR and READDIR(PLUS) without
   * JS; the least recently used directories go first. 0: none, every such request reaches JS.
   * Default DEFAULT_ADDON_TABLE_ENTRIES.
   */
  addonTableEntries?: number;
  /**
   * Let the addon open a file itself from the stored copy the core names for it (the disk cache's,
   * read whole and hashed on every open), answering its reads and release too: after a restart a
   * skill's files other than SKILL.md cost no trip to JS. Default true; needs the addon's table.
   */
  addonCopyOpens?: boolean;
  verbose?: boolean;
  /** Told of every request from its arrival to its reply (metrics). */
  observer?: OperationObserver;
}

/** What init negotiated, for --verbose and tests. */
export interface Negotiated {
  zeroMessageOpen: boolean;
  zeroMessageOpendir: boolean;
  readdirPlus: boolean;
  autoInvalData: boolean;
  /** The kernel's FUSE protocol version ("7.39"), when the addon reports it. */
  kernelProtocol?: string;
}

export class LowLevelEdge {
  private readonly addon: Addon;
  /** With an observer: marks a request's start (its reply, through this.addon, marks its end). */
  private readonly observeStart: ((id: number, op: number) => void) | undefined;
  private readonly table: InodeTable;
  private session: Session | undefined;
  private negotiated: Negotiated = { zeroMessageOpen: false, zeroMessageOpendir: false, readdirPlus: false, autoInvalData: false };
  private readonly pins: VersionPins;
  /** A failed first read, kept for the kernel's immediate retry of the same page (readahead, then readpage). */
  private readonly failedReads = new Map<number, { error: unknown; atMs: number }>();
  private readonly misses = new LRUCache<string, { parent: number; name: string }>({ max: MAX_REMEMBERED_MISSES });
  private readonly listings = new LRUCache<number, Listing>({ max: MAX_LISTINGS_PAGED });
  /** What the addon answers from its table without JS. */
  private readonly pushed: PushedNames;
  /** Whether the addon opens stored copies itself (pushed with their names). */
  private copyOpens = false;
  private pendingChanges = new Set<string>();
  private changeTimer: NodeJS.Timeout | undefined;
  /** Settled once the kernel has been told of the changes gathered for the next flush. */
  private nextFlush: { told: Promise<void>; settle: () => void } | undefined;
  /** Flushes waiting for the notifier to reach their barrier, by token. */
  private readonly barriers = new Map<number, () => void>();
  private lastBarrier = 0;
  private onInit: ((negotiated: Negotiated) => void) | undefined;
  private onExit: (() => void) | undefined;

  /** `root`: the core's attributes of "/" (the kernel's inode 1). */
  constructor(
    addon: Addon,
    private readonly core: FilesystemCore,
    private readonly options: LowLevelEdgeOptions,
    root: NodeAttributes,
  ) {
    if (options.observer) {
      const observed = observeAddon(addon, options.observer);
      const names = new Map(Object.entries(addon.ops).map(([name, code]) => [code, name.toLowerCase()]));
      this.addon = observed.addon;
      this.observeStart = (id, op) => observed.started(id, names.get(op) ?? `op${op}`);
    } else {
      this.addon = addon;
      this.observeStart = undefined;
    }
    this.table = new InodeTable({ attrs: encodeAttributes(ROOT_INODE, root, options.owner), kind: 'directory', cacheSeconds: undefined });
    this.pins = new VersionPins((handle) => core.release(handle), { retire: (ino) => (this.session === undefined ? 0 : this.addon.retireOpens(this.session, ino)) }, options.pinnedBytesLimit);
    this.pushed = new PushedNames(this.addonTable(addon), this.table);
    core.onChange?.((prefix) => this.changed(prefix));
  }

  /** Capabilities the edge asks for (the addon wants only those the kernel offers). */
  wants(): { on: number; off: number } {
    const caps = this.addon.capabilities;
    return { on: (caps['READDIRPLUS'] ?? 0) | (caps['READDIRPLUS_AUTO'] ?? 0) | (caps['AUTO_INVAL_DATA'] ?? 0) | (caps['PARALLEL_DIROPS'] ?? 0) | (caps['ASYNC_READ'] ?? 0), off: (caps['WRITEBACK_CACHE'] ?? 0) | (caps['POSIX_LOCKS'] ?? 0) | (caps['FLOCK_LOCKS'] ?? 0) | (caps['EXPORT_SUPPORT'] ?? 0) };
  }

  /** Binds the mounted session; `init` fires once the kernel's INIT was answered, `exit` when the session loop ends. */
  attach(session: Session, events: { init: (negotiated: Negotiated) => void; exit: () => void }): void {
    this.session = session;
    this.addon.tableLimit?.(session, this.tableEntries);
    const copies = this.options.addonCopyOpens !== false && this.tableEntries > 0;
    this.copyOpens = this.addon.copyLimits?.(session, copies ? ADDON_COPY_MAX_BYTES : 0, copies ? ADDON_COPY_TOTAL_BYTES : 0) === true && copies;
    this.onInit = events.init;
    this.onExit = events.exit;
  }


  get nodeCount(): number {
    this.pushed.absorb();
    return this.table.size;
  }

  /** Requests the addon answered itself (counted opens, pushed names), since mounting, and its table's size. */
  answeredByAddon(): AddonAnswers {
    if (this.session === undefined) return { opens: 0, releases: 0, reads: 0 };
    const stats = this.addon.stats(this.session);
    return {
      opens: stats.opensAnswered + (stats.copyOpensAnswered ?? 0),
      releases: stats.releasesAnswered,
      reads: stats.readsAnswered,
      ...(stats.storedOpens === undefined ? {} : { stored: stats.storedOpens }),
      ...(stats.lookupsAnswered === undefined ? {} : { lookups: stats.lookupsAnswered, getattrs: stats.getattrsAnswered ?? 0, readdirs: stats.readdirsAnswered ?? 0 }),
      ...(stats.tableEntries === undefined
        ? {}
        : { table: { entries: stats.tableEntries, directories: stats.tableDirectories ?? 0, limit: stats.tableLimit ?? 0, peakEntries: stats.tablePeakEntries ?? 0, evictions: stats.tableEvictions ?? 0 } }),
    };
  }

  /** The addon's table bound to this edge's session, when it has one and the edge uses it. */
  private addonTable(addon: Addon): AddonTable | undefined {
    const { tablePut, tableDrop, tableLookups } = addon;
    if (tablePut === undefined || tableDrop === undefined || tableLookups === undefined || this.tableEntries <= 0) return undefined;
    return {
      put: (dir, whole, names, attrs, copies, digests) =>
        this.session !== undefined && (copies === undefined ? tablePut.call(addon, this.session, dir, whole, names, attrs) : tablePut.call(addon, this.session, dir, whole, names, attrs, copies, digests)),
      drop: (dir) => this.session !== undefined && tableDrop.call(addon, this.session, dir),
      lookups: () => (this.session === undefined ? undefined : tableLookups.call(addon, this.session)),
    };
  }

  private get tableEntries(): number {
    return this.options.addonTableEntries ?? DEFAULT_ADDON_TABLE_ENTRIES;
  }

  /** Versions held open in the core (kept for the next open, or held by open handles). */
  get pinnedVersions(): number {
    return this.pins.size;
  }

  /** Releases everything pinned (after unmount). */
  close(): void {
    clearTimeout(this.changeTimer);
    this.pins.clear();
    // No kernel is left to tell: nobody waits for it.
    this.nextFlush?.settle();
    this.nextFlush = undefined;
    for (const settle of this.barriers.values()) settle();
    this.barriers.clear();
  }

  /** The addon's request handler: must never throw for a request it can answer. */
  readonly handle = (op: number, id: number, ino: number, a: number, b: number, c: number, name: string | undefined): void => {
    const ops = this.addon.ops;
    if (this.observeStart && id >= 0) this.observeStart(id, op);
    // Lookups the addon answered are counted before any request is handled (a FORGET among them).
    this.pushed.absorb();
    switch (op) {
      case ops.INIT:
        return this.init(a, b, c);
      case ops.EXIT:
        return this.onExit?.();
      case ops.FORGET:
        return this.forget(ino, a);
      case ops.LOOKUP:
        return this.answer(id, 'lookup', ino, name, () => this.lookup(id, ino, name ?? ''));
      case ops.GETATTR:
        return this.answer(id, 'getattr', ino, undefined, () => this.getattr(id, ino));
      case ops.OPEN:
        return this.answer(id, 'open', ino, undefined, () => this.open(id, ino, b));
      case ops.READ:
        return this.answer(id, 'read', ino, undefined, () => this.read(id, ino, a, b, c));
      case ops.RELEASE:
        // Only handles the addon did not count reach here (live documents).
        this.pins.unref(a);
        this.addon.replyErr(this.session!, id, 0);
        return;
      case ops.DRAINED:
        return this.pins.drained(a, b);
      case ops.NOTIFIED:
        return this.barrierReached(a);
      case ops.LOOKUPS:
        return; // absorbed above

      case ops.OPENDIR:
        return this.opendir(id);
      case ops.RELEASEDIR:
        this.addon.replyErr(this.session!, id, 0);
        return;
      case ops.READDIR:
      case ops.READDIRPLUS:
        return this.answer(id, 'readdir', ino, undefined, () => this.readdir(id, ino, b, c, op === ops.READDIRPLUS));
      case ops.STATFS:
        return this.statfs(id);
      case ops.GETXATTR:
        return this.answer(id, 'getxattr', ino, undefined, () => this.getxattr(id, ino, name ?? '', c));
      case ops.LISTXATTR:
        return this.answer(id, 'listxattr', ino, undefined, () => this.listxattr(id, ino, c));
      default:
        this.addon.replyErr(this.session!, id, ENOSYS);
    }
  };

  private init(capable: number, want: number, protocol: number): void {
    const caps = this.addon.capabilities;
    const has = (name: string, mask: number) => ((caps[name] ?? 0) & mask) !== 0;
    this.negotiated = {
      zeroMessageOpen: (this.options.zeroMessageOpen ?? false) && has('NO_OPEN_SUPPORT', capable),
      zeroMessageOpendir: has('NO_OPENDIR_SUPPORT', capable),
      readdirPlus: has('READDIRPLUS', want),
      autoInvalData: has('AUTO_INVAL_DATA', want),
      ...(protocol > 0 ? { kernelProtocol: `${Math.floor(protocol / 65536)}.${protocol % 65536}` } : {}),
    };
    this.onInit?.(this.negotiated);
  }

  /**
   * Runs one request's work; any failure becomes its one reply (errno from the domain error),
   * and a core that has not answered within the operation timeout gets ETIMEDOUT sent for it.
   */
  private answer(id: number, op: string, ino: number, name: string | undefined, work: () => Promise<void> | void): void {
    let result: Promise<void> | void;
    try {
      result = work();
    } catch (error) {
      this.fail(id, op, ino, name, error);
      return;
    }
    if (result === undefined) return;
    const deadline = setTimeout(() => {
      if (this.session !== undefined && this.addon.replyErr(this.session, id, ETIMEDOUT)) this.options.log(`${op} ${this.pathOf(ino, name)}: no answer within ${this.options.operationTimeoutMs} ms; answered ETIMEDOUT`);
    }, this.options.operationTimeoutMs);
    result
      .catch((error: unknown) => this.fail(id, op, ino, name, error))
      .finally(() => clearTimeout(deadline));
  }

  private fail(id: number, op: string, ino: number, name: string | undefined, error: unknown): void {
    if (error instanceof StaleInode) {
      this.addon.replyErr(this.session!, id, ESTALE);
      return;
    }
    const mapped = errnoForDomainError(error);
    if (mapped === undefined || mapped === Errno.EIO) this.options.log(`${op} ${this.pathOf(ino, name)}: ${mapped === undefined ? 'unexpected ' : ''}${describeError(error)}`);
    this.addon.replyErr(this.session!, id, -(mapped ?? Errno.EIO));
  }

  private pathOf(ino: number, name: string | undefined): string {
    const node = this.table.get(ino);
    if (node === undefined) return `(inode ${ino})`;
    return name === undefined ? node.path : childPath(node.path, name);
  }

  private node(ino: number): KernelNode {
    const node = this.table.get(ino);
    if (node === undefined) throw new StaleInode(ino);
    return node;
  }

  private timeouts(node: { cacheSeconds: number | undefined }): { entry: number; attr: number } {
    return node.cacheSeconds === undefined ? { entry: this.options.entryTimeoutSeconds, attr: this.options.attrTimeoutSeconds } : { entry: node.cacheSeconds, attr: node.cacheSeconds };
  }

  private async lookup(id: number, parentIno: number, name: string): Promise<void> {
    const parent = this.node(parentIno);
    const path = childPath(parent.path, name);
    const mark = this.pushed.mark();
    let attributes: NodeAttributes;
    try {
      attributes = await this.core.getattr(path);
    } catch (error) {
      if (errnoForDomainError(error) !== -ENOENT) throw error;
      // A negative entry the kernel may hold for the negative timeout; a change takes it back.
      this.misses.set(`${parentIno}\0${name}`, { parent: parentIno, name });
      const none = new Float64Array(ATTR_FIELDS);
      this.addon.replyEntry(this.session!, id, none, this.options.negativeTimeoutSeconds, 0);
      return;
    }
    const node = this.table.lookedUp(parent, name, attributes.inode, attributes, this.options.owner);
    const timeouts = this.timeouts(node);
    // Before the reply: the caller's next lookup in the directory (a sibling) finds it pushed.
    this.pushHeldListing(mark, parent);
    if (!this.addon.replyEntry(this.session!, id, node.attrs, timeouts.entry, timeouts.attr)) {
      // Not delivered (interrupted, or unmounting): the kernel holds no reference to count.
      this.forget(node.ino, 1);
      return;
    }
    // The next lookup of the name, and getattrs of both, are the addon's to answer; only answers
    // held for the default timeouts (every change to them is invalidated) are pushed.
    if (parent.cacheSeconds === undefined && node.cacheSeconds === undefined) this.pushed.entry(mark, parent, this.pushedFields(parent), name, this.pushedFields(node));
  }

  /**
   * At the first lookup in a directory: what the core holds of it without asking a server (a
   * skill's manifest, a listed tree) goes to the addon as a READDIRPLUS would give it, and so do
   * its held subdirectories, depth first, up to MAX_HELD_NAMES_PUSHED names in all: the lookups of
   * the other names there, and each complete listing, are then the addon's to answer. The work is
   * synchronous, so a label of 10,000 skills is left to be pushed name by name.
   */
  private pushHeldListing(mark: number, directory: KernelNode): void {
    if (!this.pushed.enabled || directory.cacheSeconds !== undefined || this.pushed.isResolved(directory.ino) || this.core.readdirHeld === undefined) return;
    const parentFields = this.pushedFields(this.table.get(directory.parent) ?? directory);
    this.pushHeld(mark, directory, this.pushedFields(directory), parentFields, MAX_HELD_NAMES_PUSHED, directory.parent);
  }

  /**
   * One held directory's names (all of them, or none) and then its subdirectories'; returns the
   * names left to push. `again`: push the directory even though it was, and those of its
   * subdirectories whose copies were pending (after a read that may have allowed them).
   */
  private pushHeld(mark: number, directory: PushedDirectory, fields: Float64Array, parentFields: Float64Array, budget: number, parent: number, again = false): number {
    let held: HeldListing | undefined;
    try {
      held = this.core.readdirHeld!(directory.path, budget);
    } catch {
      return budget; // Only an optimization: the kernel's requests reach JS as before.
    }
    if (held === undefined) return budget;
    let left = budget - held.children.length;
    const names = ['.', '..', ...held.children.map((child) => child.name)];
    const attrs = new Float64Array(names.length * ATTR_FIELDS);
    attrs.set(fields, 0);
    attrs.set(parentFields, ATTR_FIELDS);
    const childFields = held.children.map(({ attributes }) => (attributes === undefined || attributes.cacheSeconds !== undefined ? namedOnly() : this.defaultFields(attributes)));
    childFields.forEach((child, index) => attrs.set(child, (index + 2) * ATTR_FIELDS));
    if (!this.pushed.names(mark, directory, held.complete, names, attrs, this.copiesOf(held), parent)) return left;
    for (const [index, { name, attributes }] of held.children.entries()) {
      if (attributes?.kind !== 'directory' || attributes.cacheSeconds !== undefined) continue;
      if (this.pushed.isResolved(attributes.inode) && !(again && this.pushed.hasCopiesPending(attributes.inode))) continue;
      const known = this.table.get(attributes.inode);
      const child: PushedDirectory = known ?? { ino: attributes.inode, path: childPath(directory.path, name) };
      left = this.pushHeld(mark, child, childFields[index]!, fields, left, directory.ino, again);
    }
    return left;
  }

  /** The stored copies the addon may open, in the order of the names pushed ("." and ".." first, with none). */
  private copiesOf(held: HeldListing): PushedCopies | undefined {
    if (!this.copyOpens) return undefined;
    const pending = held.copiesPending ?? false;
    if (!held.children.some((child) => child.copy !== undefined)) return { paths: undefined, digests: undefined, pending };
    const paths: Array<string | undefined> = [undefined, undefined];
    const digests = new Uint8Array((held.children.length + 2) * DIGEST_BYTES);
    for (const [index, { copy }] of held.children.entries()) {
      paths.push(copy?.path);
      if (copy !== undefined) digests.set(Buffer.from(copy.digest, 'hex'), (index + 2) * DIGEST_BYTES);
    }
    return { paths, digests, pending };
  }

  /**
   * After JS opened a file: when copies wait in its directory or a subdirectory (for the skill's
   * SKILL.md, which this open may have verified), the directory is pushed again with those
   * subdirectories, so the addon opens the files allowed now itself.
   */
  private pushCopiesAfterOpen(node: KernelNode): void {
    if (!this.copyOpens) return;
    const directory = this.table.get(node.parent);
    if (directory === undefined || directory.cacheSeconds !== undefined || !this.pushed.copiesWaitAt(directory.ino)) return;
    const parentFields = this.pushedFields(this.table.get(directory.parent) ?? directory);
    this.pushHeld(this.pushed.mark(), directory, this.pushedFields(directory), parentFields, MAX_HELD_NAMES_PUSHED, directory.parent, true);
  }

  /** Attributes of a node the kernel has not been given yet, as pushed: with the default timeouts. */
  private defaultFields(attributes: NodeAttributes): Float64Array {
    const fields = encodeAttributes(attributes.inode, attributes, this.options.owner);
    fields[ATTR.entryTimeoutSeconds] = this.options.entryTimeoutSeconds;
    fields[ATTR.attrTimeoutSeconds] = this.options.attrTimeoutSeconds;
    return fields;
  }

  /** A node's attributes as pushed to the addon: with its timeouts; listed only (mode 0) when they hold briefly. */
  private pushedFields(node: KernelNode): Float64Array {
    if (node.cacheSeconds !== undefined) return namedOnly();
    const fields = Float64Array.from(node.attrs);
    const timeouts = this.timeouts(node);
    fields[ATTR.entryTimeoutSeconds] = timeouts.entry;
    fields[ATTR.attrTimeoutSeconds] = timeouts.attr;
    return fields;
  }

  private getattr(id: number, ino: number): void {
    // A node's attributes belong to its version and never change: answered from the table.
    const node = this.node(ino);
    this.addon.replyAttr(this.session!, id, node.attrs, this.timeouts(node).attr);
  }

  private async open(id: number, ino: number, flags: number): Promise<void> {
    const node = this.node(ino);
    if (node.kind === 'directory') {
      this.addon.replyErr(this.session!, id, EISDIR);
      return;
    }
    if ((flags & (fsConstants.O_WRONLY | fsConstants.O_RDWR)) !== 0 || (flags & fsConstants.O_TRUNC) !== 0) {
      this.addon.replyErr(this.session!, id, -Errno.EROFS);
      return;
    }
    if (this.negotiated.zeroMessageOpen) {
      // ENOSYS once: the kernel opens every file itself from now on, keeping its page cache.
      this.addon.replyErr(this.session!, id, ENOSYS);
      return;
    }
    // Documents rendered from live state get a rendering of their own per open, read directly.
    if (node.cacheSeconds === 0) {
      const handle = await this.openVersion(node);
      if (handle === undefined) {
        this.addon.replyErr(this.session!, id, ESTALE);
        return;
      }
      const own = this.pins.own(handle);
      if (!this.addon.replyOpen(this.session!, id, own.handle, OPEN_FLAGS.directIo)) this.pins.unref(own.handle);
      return;
    }
    const pin = await this.pinnedVersion(node);
    if (pin === undefined) {
      this.addon.replyErr(this.session!, id, ESTALE);
      return;
    }
    // The addon counts this handle and its release, and answers its reads from the version's bytes
    // when the core holds them in memory (a view, not a copy); while the version is kept it
    // answers the inode's later opens itself, so a warm open never reaches JS, nor a cold file's reads.
    const answering = !this.pins.isEvicted(pin);
    const bytes = this.core.bytesOf?.(pin.handle);
    // Only bytes of exactly the size the kernel holds for the inode: a store past it would grow the file.
    const storeBytes = bytes !== undefined && bytes.length === node.attrs[ATTR.size] ? Math.min(bytes.length, STORED_WITH_OPEN_BYTES) : 0;
    this.pins.countedBy(pin, this.addon.replyOpenCounted(this.session!, id, node.ino, pin.handle, OPEN_FLAGS.keepCache, answering, bytes, storeBytes), answering);
    this.pushCopiesAfterOpen(node);
  }

  /**
   * Opens the node's path in the core: the inode's own version, or undefined (ESTALE) when the
   * core now holds another (the server changed since the kernel's lookup; the name is then
   * invalidated, so a new lookup finds the new version under a new inode). Never another
   * version's bytes under this inode.
   */
  private async openVersion(node: KernelNode): Promise<number | undefined> {
    const handle = await this.core.open(node.path);
    const opened = this.core.fgetattr(handle);
    // Generated documents are re-rendered within the size the kernel holds: any rendering is theirs.
    if (opened.inode === node.ino || node.cacheSeconds === 0) return handle;
    this.core.release(handle);
    this.options.log(`${node.path}: changed since the kernel looked it up; ${ESTALE_RETRY_NOTE}`);
    this.invalidateName(node);
    return undefined;
  }

  private async read(id: number, ino: number, fh: number, offset: number, sizeBytes: number): Promise<void> {
    if (fh !== 0) {
      this.addon.replyBuf(this.session!, id, this.core.read(fh, offset, sizeBytes));
      return;
    }
    const failed = this.failedReads.get(ino);
    if (failed !== undefined) {
      this.failedReads.delete(ino);
      // The same read(2) retrying the page it just failed: one server round trip per read, not two.
      if (Date.now() - failed.atMs <= READ_RETRY_WINDOW_MS) throw failed.error;
    }
    let pin: Pin | undefined;
    try {
      pin = await this.pinnedVersion(this.node(ino));
    } catch (error) {
      this.failedReads.set(ino, { error, atMs: Date.now() });
      throw error;
    }
    if (pin === undefined) {
      this.addon.replyErr(this.session!, id, ESTALE);
      return;
    }
    try {
      this.addon.replyBuf(this.session!, id, this.core.read(pin.handle, offset, sizeBytes));
    } finally {
      this.pins.unref(pin.handle);
    }
  }

  /** The inode's version, pinned (see VersionPins.acquire: one reference taken for the caller). */
  private pinnedVersion(node: KernelNode): Promise<Pin | undefined> {
    return this.pins.acquire(
      node.ino,
      async () => {
        const handle = await this.openVersion(node);
        return handle === undefined ? undefined : { handle, sizeBytes: this.core.fgetattr(handle).sizeBytes };
      },
      () => this.table.get(node.ino) === node,
    );
  }

  private forget(ino: number, nlookup: number): void {
    // The addon's lookups first: the kernel's count may include some.
    this.pushed.absorb();
    const dropped = this.table.forget(ino, nlookup);
    if (dropped === undefined) return;
    this.pins.forget(ino);
    if (dropped.kind === 'directory') this.pushed.forgotten(ino);
  }

  private opendir(id: number): void {
    if (this.negotiated.zeroMessageOpendir) {
      // ENOSYS once: the kernel opens directories itself, with its readdir cache on.
      this.addon.replyErr(this.session!, id, ENOSYS);
      return;
    }
    this.addon.replyOpen(this.session!, id, 0, OPEN_FLAGS.keepCache | OPEN_FLAGS.cacheReaddir);
  }

  private async readdir(id: number, ino: number, offset: number, maxBytes: number, plus: boolean): Promise<void> {
    const directory = this.node(ino);
    if (directory.kind !== 'directory') {
      this.addon.replyErr(this.session!, id, ENOTDIR);
      return;
    }
    // One listing per pass over a directory: later pages (offset > 0) page through the same names.
    let listing = offset > 0 ? this.listings.get(ino) : undefined;
    if (listing === undefined) {
      const mark = this.pushed.mark();
      const listed = ['.', '..', ...(await this.core.readdir(directory.path))];
      listing = { names: listed, attrs: new Float64Array(listed.length * ATTR_FIELDS), answered: 0, mark };
      this.listings.set(ino, listing);
    }
    const names = listing.names;
    const chunk: string[] = [];
    let used = 0;
    for (let index = offset; index < names.length; index++) {
      const name = names[index]!;
      const bytes = align8((plus ? DIRENTPLUS_HEADER_BYTES : DIRENT_HEADER_BYTES) + Buffer.byteLength(name));
      if (used + bytes > maxBytes) break;
      used += bytes;
      chunk.push(name);
    }
    const attrs = new Float64Array(chunk.length * ATTR_FIELDS);
    const children: Array<KernelNode | undefined> = [];
    for (const [index, name] of chunk.entries()) {
      let fields: Float64Array;
      if (name === '.' || name === '..') {
        fields = (name === '.' ? directory : (this.table.get(directory.parent) ?? directory)).attrs;
        children.push(undefined);
      } else if (plus) {
        const child = await this.core.getattr(childPath(directory.path, name)).then(
          (attributes) => this.table.lookedUp(directory, name, attributes.inode, attributes, this.options.owner),
          // Listed but not statable now: the name is shown, without attributes (the kernel looks it up).
          () => undefined,
        );
        children.push(child);
        fields = child?.attrs ?? namedOnly();
      } else {
        children.push(undefined);
        fields = namedOnly();
      }
      attrs.set(fields, index * ATTR_FIELDS);
      const child = children[index];
      if (child) {
        const timeouts = this.timeouts(child);
        attrs[index * ATTR_FIELDS + ATTR.entryTimeoutSeconds] = timeouts.entry;
        attrs[index * ATTR_FIELDS + ATTR.attrTimeoutSeconds] = timeouts.attr;
      }
    }
    const added = this.addon.replyDirectory(this.session!, id, plus, maxBytes, offset, chunk, attrs);
    // A view whose answers hold only briefly (the approvals): its readdir cache must not outlive them.
    if (directory.cacheSeconds !== undefined) this.expireListing(directory);
    // Entries that did not reach the kernel are not held by it: undo their lookup counts.
    children.forEach((child, index) => {
      if (child && index >= Math.max(0, added)) this.forget(child.ino, 1);
    });
    if (plus && added > 0) this.keepListed(listing, directory, offset, chunk, children, added);
  }

  /**
   * Keeps the attributes of the entries a READDIRPLUS page gave, in order; once the listing's
   * every entry was given in one pass with nothing invalidated meanwhile, the addon gets it
   * whole (names whose answers hold briefly listed only) and answers the next listings itself.
   */
  private keepListed(listing: Listing, directory: KernelNode, offset: number, chunk: string[], children: Array<KernelNode | undefined>, added: number): void {
    if (listing.answered !== offset || directory.cacheSeconds !== undefined) return;
    for (let index = 0; index < added; index++) {
      const name = chunk[index]!;
      const node = name === '.' ? directory : name === '..' ? (this.table.get(directory.parent) ?? directory) : children[index];
      listing.attrs.set(node ? this.pushedFields(node) : namedOnly(), (offset + index) * ATTR_FIELDS);
    }
    listing.answered += added;
    if (listing.answered === listing.names.length) this.pushed.listing(listing.mark, directory, listing.names, listing.attrs);
  }

  private statfs(id: number): void {
    // Content lives on MCP servers: no local capacity to report, nothing free to write.
    this.addon.replyStatfs(this.session!, id, Float64Array.of(BLOCK_SIZE_BYTES, BLOCK_SIZE_BYTES, 0, 0, 0, 0, 0, 0, 0, ST_RDONLY | ST_NOSUID, NAME_MAX_BYTES));
  }

  private async getxattr(id: number, ino: number, name: string, sizeBytes: number): Promise<void> {
    // Only user.* attributes exist. ENOTSUP for the rest tells ls to stop asking.
    if (!name.startsWith(USER_XATTR_PREFIX)) {
      this.addon.replyErr(this.session!, id, ENOTSUP);
      return;
    }
    this.replySized(id, await this.core.getxattr(this.node(ino).path, name), sizeBytes);
  }

  private async listxattr(id: number, ino: number, sizeBytes: number): Promise<void> {
    const names = await this.core.listxattr(this.node(ino).path);
    this.replySized(id, Buffer.from(names.map((name) => `${name}\0`).join(''), 'utf8'), sizeBytes);
  }

  /** xattr replies: size 0 is a size probe, a smaller buffer gets ERANGE. */
  private replySized(id: number, value: Buffer, sizeBytes: number): void {
    if (sizeBytes === 0) this.addon.replyXattrSize(this.session!, id, value.length);
    else if (value.length > sizeBytes) this.addon.replyErr(this.session!, id, ERANGE);
    else this.addon.replyBuf(this.session!, id, value);
  }

  // ---- invalidation -------------------------------------------------------------------------

  /**
   * The core reports that what it shows at `prefix` (a path) or below may have changed. Settles
   * once the kernel has been told (the notifier has sent every invalidation of the flush).
   */
  private changed(prefix: string): Promise<void> {
    // At once, before the kernel is told: from now on the addon sends what it held there to JS.
    this.pushed.dropChanged(prefix);
    this.pendingChanges.add(prefix);
    this.changeTimer ??= setTimeout(() => this.flushChanges(), CHANGE_BATCH_MS);
    if (this.nextFlush === undefined) {
      let settle!: () => void;
      const told = new Promise<void>((resolve) => (settle = resolve));
      this.nextFlush = { told, settle };
    }
    return this.nextFlush.told;
  }

  private barrierReached(token: number): void {
    this.barriers.get(token)?.();
    this.barriers.delete(token);
  }

  private flushChanges(): void {
    this.changeTimer = undefined;
    const flush = this.nextFlush;
    this.nextFlush = undefined;
    const prefixes = [...this.pendingChanges];
    this.pendingChanges = new Set();
    this.listings.clear();
    if (this.session === undefined) return flush?.settle();
    // Lookups the addon answered are names the kernel holds too.
    this.pushed.absorb();
    let entries = 0;
    const seen = new Set<number>();
    for (const prefix of prefixes) {
      for (const node of this.table.under(prefix)) {
        if (seen.has(node.ino)) continue;
        seen.add(node.ino);
        // The name, so the next lookup may find a new version; a directory's readdir cache too.
        // A file's pages stay: its inode is one version, still right for handles open on it.
        this.invalidateName(node);
        if (node.kind === 'directory') this.invalidateListing(node.ino);
        entries++;
      }
      const base = prefix === '/' ? '/' : `${prefix}/`;
      for (const [key, miss] of this.misses.entries()) {
        const parent = this.table.get(miss.parent);
        if (parent && (childPath(parent.path, miss.name) === prefix || childPath(parent.path, miss.name).startsWith(base))) {
          this.addon.notifyInvalEntry(this.session, miss.parent, miss.name);
          this.misses.delete(key);
        }
      }
      if (prefix === '/' || prefix.split('/').length <= 2) this.invalidateListing(ROOT_INODE);
    }
    if (this.options.verbose) this.options.log(`kernel told of changes under ${prefixes.join(', ')}: ${entries} names invalidated`);
    if (flush === undefined) return;
    const token = ++this.lastBarrier;
    this.barriers.set(token, flush.settle);
    if (!this.addon.notifyBarrier(this.session, token)) this.barrierReached(token);
  }

  private readonly expiring = new Set<number>();

  private expireListing(directory: KernelNode): void {
    if (this.expiring.has(directory.ino)) return;
    this.expiring.add(directory.ino);
    setTimeout(() => {
      this.expiring.delete(directory.ino);
      this.listings.delete(directory.ino);
      this.invalidateListing(directory.ino);
    }, (directory.cacheSeconds ?? 0) * 1000).unref();
  }

  // Each drops what the addon holds before the kernel is told: a reply from it reached the kernel
  // before (and is invalidated now) or is not sent.
  private invalidateName(node: KernelNode): void {
    if (node.ino === ROOT_INODE) return;
    this.pushed.dropDirectory(node.parent);
    if (this.session !== undefined) this.addon.notifyInvalEntry(this.session, node.parent, node.name);
  }

  private invalidateListing(ino: number): void {
    this.pushed.dropDirectory(ino);
    if (this.session !== undefined) this.addon.notifyInvalInode(this.session, ino, 0, 0);
  }
}

/** A directory's names in one pass of the kernel's paging, and the attributes of those given so far (for the addon). */
interface Listing {
  names: string[];
  /** ATTR_FIELDS per name, as pushed; filled in order up to `answered`. */
  attrs: Float64Array;
  answered: number;
  /** PushedNames.mark() when the listing was read. */
  mark: number;
}

/** A node the kernel names but the table does not hold (forgotten, or from an earlier mount). */
class StaleInode extends Error {
  constructor(ino: number) {
    super(`inode ${ino} is not known`);
  }
}

/** A name sent without attributes (mode 0): the kernel looks it up itself and counts no lookup. */
function namedOnly(): Float64Array {
  const fields = new Float64Array(ATTR_FIELDS);
  fields[ATTR.ino] = 1;
  return fields;
}

function align8(bytes: number): number {
  return (bytes + 7) & ~7;
}

