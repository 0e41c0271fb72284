// The contract between the FUSE edge and the filesystem core: paths in, attributes,
// names and verified bytes out, domain errors (src/errors.ts) on failure. No errno here.

/** What stat needs to know about a node. Modes and ownership are the edge's policy. */
export interface NodeAttributes {
  kind: 'file' | 'directory';
  sizeBytes: number;
  /** Changes whenever the node's content version changes, so kernel caches are invalidated. */
  mtimeMs: number;
  /** Stable for one content version of one path; a new version gets a new number. */
  inode: number;
  /**
   * How long this answer may be reused without asking again, when shorter than the edge's
   * default: 0 for documents rendered from live state, a second for views of the approvals file.
   */
  cacheSeconds?: number;
}

/**
 * Receives the path (a directory or file) at or below which what the core shows may have changed.
 * An edge that tells the kernel returns a promise settled once the kernel has been told, so the
 * core shows the change in its documents only then (whatever skills.json says, the next open gets).
 */
export type ChangeListener = (prefix: string) => void | Promise<void>;

/** A directory's children as the core holds them (FilesystemCore.readdirHeld). */
export interface HeldListing {
  complete: boolean;
  /** copy: a stored copy of the file's version the edge may open itself, reading it whole and hashing it to `digest` on every open. */
  children: Array<{ name: string; attributes: NodeAttributes | undefined; copy?: { path: string; digest: string } | undefined }>;
  /** Some child's copy may be allowed after a read in the directory: ask again then. */
  copiesPending?: boolean;
}

/** The filesystem the FUSE edge serves. Every method may throw a SkillsMountError. */
export interface FilesystemCore {
  getattr(path: string): Promise<NodeAttributes>;
  /** Names of the direct children (without "." and ".."). */
  readdir(path: string): Promise<string[]>;
  /**
   * What getattr of each child of a directory would answer, in readdir's order, as far as the core
   * holds it without asking a server (attributes undefined: only the child's content can say).
   * `complete`: the names are what readdir would answer now; otherwise readdir would ask the
   * server and the names serve lookups only. Undefined when nothing is held, or more than
   * `maxChildren` (checked first: a large directory costs nothing). Never fetches: an edge may
   * call it ahead of the kernel's asking.
   */
  readdirHeld?(path: string, maxChildren: number): HeldListing | undefined;
  /** Opens a file for reading; the handle pins one verified version until release. */
  open(path: string): Promise<number>;
  /** Attributes of the version an open handle pins (fstat, and libfuse's cache check at open). */
  fgetattr(handle: number): NodeAttributes;
  /** Copies up to `length` bytes at `position` of an open handle; returns the bytes (may be shorter at EOF). */
  read(handle: number, position: number, length: number): Buffer;
  /**
   * The handle's every byte when they are held in memory as one verified buffer (never to change),
   * so the edge may answer reads without asking again; undefined when reads must come through read().
   */
  bytesOf?(handle: number): Uint8Array | undefined;
  release(handle: number): void;
  listxattr(path: string): Promise<string[]>;
  /** Throws NoAttributeError when the node has no such attribute. */
  getxattr(path: string, name: string): Promise<Buffer>;
  /** Subscribes to changes the core learns of (listings, entries, refusals, reachability). */
  onChange?(listener: ChangeListener): void;
}
