// Loads the project's own libfuse 3 addon (native/): the SKILLS_FUSE_ADDON override, a source
// build, or the package's prebuild for this platform and arch; and types its surface. Imported only
// under src/fuse, lazily: nothing loads it before a mount (or doctor's probe) asks for it.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** An opaque mounted session. */
export type Session = { readonly __session: unique symbol };

/** Request codes, as the addon numbers them (its `ops`). */
export interface OpCodes {
  INIT: number;
  LOOKUP: number;
  FORGET: number;
  GETATTR: number;
  OPEN: number;
  READ: number;
  RELEASE: number;
  OPENDIR: number;
  READDIR: number;
  READDIRPLUS: number;
  RELEASEDIR: number;
  STATFS: number;
  GETXATTR: number;
  LISTXATTR: number;
  EXIT: number;
  /** No reply due: the last kernel handle on a retired counted entry was released (a = fh, b = the entry's gen). */
  DRAINED: number;
  /** No reply due: the notifier reached the barrier with token a (every notification queued before it is sent). */
  NOTIFIED: number;
  /** No reply due: lookups the addon answered from its table wait for tableLookups (absent in a stand-in without a table). */
  LOOKUPS?: number;
}

/**
 * One kernel request: op, reply id (-1 when no reply is due), inode, then op-specific numbers:
 * a = fh (FORGET: nlookup; INIT: capable), b = offset or open flags (INIT: want), c = size (INIT: the kernel's protocol, major << 16 | minor).
 */
export type RequestHandler = (op: number, id: number, ino: number, a: number, b: number, c: number, name: string | undefined) => void;

/** Attribute fields in the order the addon reads them from a Float64Array. */
export const ATTR = { ino: 0, mode: 1, nlink: 2, uid: 3, gid: 4, size: 5, mtimeMs: 6, entryTimeoutSeconds: 7, attrTimeoutSeconds: 8 } as const;
export const ATTR_FIELDS = 9;
/** replyOpen flag bits. */
export const OPEN_FLAGS = { keepCache: 1, directIo: 2, cacheReaddir: 4 } as const;

/** The lookups the addon answered from its table: names, and per name (parent, times, ATTR_FIELDS attributes). */
export interface AddonLookups {
  names: string[];
  fields: Float64Array;
}
/** Numbers per lookup in AddonLookups.fields. */
export const LOOKUP_FIELDS = 2 + ATTR_FIELDS;

/** What the addon counts: requests in flight, notifications, counted opens, and its table of names. */
export interface AddonStats {
  outstanding: number;
  notifications: number;
  pendingNotifications: number;
  countedInodes: number;
  opensAnswered: number;
  releasesAnswered: number;
  readsAnswered: number;
  /** Opens whose leading bytes went to the kernel's page cache before the reply (replyOpenCounted's storeBytes). */
  storedOpens?: number;
  // The table's (absent in a stand-in without one).
  lookupsAnswered?: number;
  getattrsAnswered?: number;
  readdirsAnswered?: number;
  tableDirectories?: number;
  tableEntries?: number;
  tableLimit?: number;
  tablePeakEntries?: number;
  /** Directories dropped for the limit, since mounting. */
  tableEvictions?: number;
  lookupsPending?: number;
  // The opens of local copies (absent in a stand-in without them).
  copyOpensAnswered?: number;
  /** Copies that did not verify (or were gone): those opens went to JS. */
  copyRefusals?: number;
  copyInodes?: number;
  copyBytes?: number;
}

export interface Addon {
  mount(mountpoint: string, args: string[], wantOn: number, wantOff: number, maxBackground: number, handler: RequestHandler): Session;
  unmount(session: Session): boolean;
  replyErr(session: Session, id: number, errno: number): boolean;
  replyEntry(session: Session, id: number, attrs: Float64Array, entryTimeoutSeconds: number, attrTimeoutSeconds: number): boolean;
  replyAttr(session: Session, id: number, attrs: Float64Array, attrTimeoutSeconds: number): boolean;
  /** False also when the open was interrupted before the reply reached the kernel (no release will come). */
  replyOpen(session: Session, id: number, fh: number, flags: number): boolean;
  /**
   * Answers an open with `fh` and counts the kernel's handles on `ino` in the addon, which also
   * answers their releases; with `answerLater`, later opens of `ino` are answered there too. With
   * `bytes` (the version's, never to be written again) it answers reads of those handles from them.
   * Returns the gen of the inode's entry that counts this handle (an entry made now is held by
   * one reference of the caller's until retireOpens returns 0 or DRAINED names the gen), or -1
   * when the open is not counted (already answered). `storeBytes`: how many leading bytes of
   * `bytes` to put in the kernel's page cache of `ino` first (with keepCache), so the reader's
   * first reads are answered by the kernel itself.
   */
  replyOpenCounted(session: Session, id: number, ino: number, fh: number, flags: number, answerLater: boolean, bytes?: Uint8Array, storeBytes?: number): number;
  /** Opens of `ino` reach JS again; returns the kernel handles still open (0: the entry is gone). */
  retireOpens(session: Session, ino: number): number;
  replyBuf(session: Session, id: number, bytes: Uint8Array): boolean;
  replyXattrSize(session: Session, id: number, sizeBytes: number): boolean;
  replyStatfs(session: Session, id: number, fields: Float64Array): boolean;
  /** Each name's attributes with its timeouts; returns how many fit in maxBytes (-1 when already answered). */
  replyDirectory(session: Session, id: number, plus: boolean, maxBytes: number, firstOffset: number, names: string[], attrs: Float64Array): number;
  notifyInvalEntry(session: Session, parent: number, name: string): boolean;
  notifyInvalInode(session: Session, ino: number, offset: number, length: number): boolean;
  /** NOTIFIED with `token` comes once every notification queued before this one has been sent. */
  notifyBarrier(session: Session, token: number): boolean;
  // The table of names and attributes the addon answers LOOKUP, GETATTR and READDIR(PLUS) from
  // (native/entry_table.c). Optional: an addon without one (a test's stand-in) leaves them all to JS.
  /** The most names it keeps (0: none). */
  tableLimit?(session: Session, entries: number): boolean;
  /** Names in `dir` with their attributes (ATTR_FIELDS each, timeouts included; mode 0: listed only); whole: its complete listing, "." and ".." first. */
  tablePut?(session: Session, dir: number, whole: boolean, names: string[], attrs: Float64Array, copies?: Array<string | undefined>, digests?: Uint8Array): boolean;
  /** Drops what it keeps of `dir`; made before the kernel is told of a change there. */
  tableDrop?(session: Session, dir: number): boolean;
  /** The lookups answered from the table since the last call (the kernel counts them), oldest first. */
  tableLookups?(session: Session): AddonLookups | undefined;
  /**
   * The addon's opens of local copies (native/verified_copy.c): the largest copy it reads and the
   * bytes open copies may hold together (0: it opens none). False: it cannot (no SHA-256 in this
   * Node, or unmounted), so no copy should be pushed.
   */
  copyLimits?(session: Session, fileBytes: number, totalBytes: number): boolean;
  stats(session: Session): AddonStats;
  /** Marks every descriptor above stderr close-on-exec (mount() does it for its own mount). */
  closeOnExecAll(): void;
  /** One sd_notify(3) datagram to the socket $NOTIFY_SOCKET names: 0, or the errno value of the failure. */
  notifyService?(socketPath: string, message: string): number;
  readonly capabilities: Record<string, number>;
  readonly ops: OpCodes;
}

/** Where an addon was found: the SKILLS_FUSE_ADDON override, a source build (a checkout, or npm run build-native), or the package's prebuild. */
export type AddonOrigin = 'override' | 'source-build' | 'prebuild';

/** One place an addon may be loaded from. */
export interface AddonCandidate {
  origin: AddonOrigin;
  path: string;
}

/** The addon that loaded, and from where. */
export interface LoadedAddon extends AddonCandidate {
  addon: Addon;
}

const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Where the addon is looked for, in order: SKILLS_FUSE_ADDON alone when set (the sanitizer build, a
 * test's stand-in), else native/build (a source build wins: it was made on this machine), then
 * prebuilds/<platform>-<arch>/ (the package's, linux-x64 and linux-arm64).
 */
export function addonCandidates(env: NodeJS.ProcessEnv = process.env, platform: string = process.platform, arch: string = process.arch): AddonCandidate[] {
  const override = env['SKILLS_FUSE_ADDON'];
  if (override) return [{ origin: 'override', path: path.resolve(override) }];
  return [
    { origin: 'source-build', path: path.join(PACKAGE_ROOT, 'native', 'build', 'Release', 'skills_fuse.node') },
    { origin: 'prebuild', path: path.join(PACKAGE_ROOT, 'prebuilds', `${platform}-${arch}`, 'skills_fuse.node') },
  ];
}

let loaded: LoadedAddon | undefined;

/**
 * The addon, loaded once from the first candidate that exists and loads; throws (with each
 * candidate's reason) when none does. An override that does not load is not passed over.
 */
export function loadAddonFrom(): LoadedAddon {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const reasons: string[] = [];
  for (const candidate of addonCandidates()) {
    if (candidate.origin !== 'override' && !existsSync(candidate.path)) {
      reasons.push(`${candidate.origin} ${candidate.path}: not there`);
      continue;
    }
    try {
      loaded = { ...candidate, addon: require(candidate.path) as Addon };
      return loaded;
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).split('\n')[0];
      reasons.push(`${candidate.origin} ${candidate.path}: ${message}`);
      if (candidate.origin === 'override') break;
    }
  }
  throw new Error(`no libfuse 3 addon loads on ${process.platform}-${process.arch} (${reasons.join('; ')})`);
}

/** The addon, loaded once; throws (with the loader's reason) when it was not built or cannot load. */
export function loadAddon(): Addon {
  return loadAddonFrom().addon;
}
