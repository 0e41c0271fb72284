// The one interface each view of the mount implements (the root, one server's full view, the
// generated documents, the approved view, the records): a path relative to the view's root in;
// kind, size, digest, names, bytes and xattrs out. Inodes, handles and routing are the filesystem's.
import { IsADirectoryError, NotADirectoryError, NotFoundError } from '../errors.js';
import type { LocalCopy } from '../catalog/content-fetcher.js';
import type { ServerCatalog } from '../catalog/server-catalog.js';
import type { ByteSource } from './generated-document.js';

/** Extended attributes carried by nodes, in listing order. */
export const XATTR = {
  server: 'user.mcp.server',
  uri: 'user.mcp.uri',
  digest: 'user.mcp.digest',
  verified: 'user.mcp.verified',
  /** On a label directory while the server is offline: since when (ISO time). */
  offline: 'user.mcp.offline',
} as const;

/** Generated documents are rendered from live state: the kernel asks each time. */
export const LIVE_CACHE_SECONDS = 0;
/** The approvals file is re-read at most every 100 ms: views of it are trusted for a second. */
export const APPROVALS_CACHE_SECONDS = 1;

/** What a view holds of a directory's children (NodeProvider.heldChildren). */
export interface HeldChildren {
  complete: boolean;
  children: Array<{ name: string; stat: NodeStat | undefined; copy?: LocalCopy | undefined }>;
  /** Some child's copy may be allowed once something of its skill was read (ask again then). */
  copiesPending?: boolean;
}

/** A path as the view that serves it sees it. */
export interface ViewPath {
  /** Below the view's root, without leading or trailing slashes ("" is the view's root itself). */
  relative: string;
  /** The path as asked: what messages name. */
  path: string;
}

/** What a view knows of a node: its kind, its size, and the digest that names its content version when known. */
export interface NodeStat {
  kind: 'file' | 'directory';
  sizeBytes: number;
  digest: string | undefined;
}

/**
 * The stat of a directory the mount itself makes (not one a server serves): it has no content
 * version, and its mtime is the mount's. The filesystem tells it apart by identity.
 */
export const MOUNT_DIRECTORY: NodeStat = Object.freeze({ kind: 'directory', sizeBytes: 0, digest: undefined });

/** An opened file: the bytes its handle serves and the digest that names their version. */
export interface OpenedFile {
  bytes: ByteSource;
  digest: string;
}

/** One view of the mount. Every method may throw a SkillsMountError; a view that must refresh state first does so inside. */
export interface NodeProvider {
  stat(at: ViewPath): Promise<NodeStat>;
  /** Names of the direct children (without "." and ".."). */
  list(at: ViewPath): Promise<string[]>;
  open(at: ViewPath): Promise<OpenedFile>;
  /** Extended attributes by name, in listing order. */
  xattrs(at: ViewPath): Promise<Record<string, string>>;
  /** How long the kernel may reuse an answer about a node that stat found, when shorter than the edge's default. */
  cacheSeconds(at: ViewPath): number | undefined;
  /**
   * The directory's children with their stats (undefined: only its content can say) as far as the
   * view holds them without asking anyone; `complete` when list would answer just these names now.
   * Undefined when nothing is held, or when there are more than `maxChildren` (checked first).
   * Optional: a view without it is simply asked each time.
   */
  heldChildren?(at: ViewPath, maxChildren: number): HeldChildren | undefined;
}

/** The error for opening a directory. */
export function isADirectory(at: ViewPath): IsADirectoryError {
  return new IsADirectoryError(`${at.path} is a directory`);
}

/** The error for listing a file. */
export function notADirectory(at: ViewPath): NotADirectoryError {
  return new NotADirectoryError(`${at.path} is a file`);
}

/** The error for a first segment (or a label in a view) that names no server. */
export function noSuchLabel(path: string): NotFoundError {
  return new NotFoundError(`${path}: no such server label`);
}

/** A relative path's first segment and what follows it ("" when nothing does). */
export function splitFirst(relative: string): { first: string; rest: string } {
  const slash = relative.indexOf('/');
  return slash === -1 ? { first: relative, rest: '' } : { first: relative.slice(0, slash), rest: relative.slice(slash + 1) };
}

/** In a view with a directory per label: the server `at` lies under and the path below its directory, or undefined at the view's root. */
export function labelled(catalogs: ReadonlyMap<string, ServerCatalog>, at: ViewPath): { catalog: ServerCatalog; rest: string } | undefined {
  if (at.relative === '') return undefined;
  const { first, rest } = splitFirst(at.relative);
  const catalog = catalogs.get(first);
  if (!catalog) throw noSuchLabel(at.path);
  return { catalog, rest };
}

/** A whole buffer as the bytes of a handle. */
export function bufferSource(bytes: Buffer): ByteSource {
  return {
    length: bytes.length,
    whole: () => bytes,
    slice: (position, length) => (position >= bytes.length ? Buffer.alloc(0) : bytes.subarray(position, Math.min(bytes.length, position + length))),
  };
}
