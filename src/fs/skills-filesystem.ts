// The filesystem core: "/" holds one directory per server label and skills.json;
// "/<label>/<path>" is that server's resource. Pins one content version per open
// handle, numbers inodes per content version, and answers xattrs. No FUSE, no SDK.
import { IsADirectoryError, NoAttributeError, NotADirectoryError, NotFoundError, StaleVersionError } from '../errors.js';
import type { CatalogNode, ServerCatalog } from '../catalog/server-catalog.js';
import type { FilesystemCore, NodeAttributes } from './filesystem-core.js';
import { LRUCache } from 'lru-cache';
import { sha256Digest } from '../format/digest.js';
import { skillsJsonParts, type MountStatus } from './skills-json.js';
import { renderStatusJson } from './status-json.js';
import { GeneratedDocument, type ByteSource } from './generated-document.js';

export const SKILLS_JSON = 'skills.json';
/** The small health file `skills-mount status` reads: per-server counts, never per-skill lists. */
export const STATUS_JSON = 'status.json';
const SKILLS_JSON_SIZE_STEP_BYTES = 16 * 1024;
const STATUS_JSON_SIZE_STEP_BYTES = 4 * 1024;

/** Extended attributes carried by nodes, in listing order. */
export const XATTR = {
  server: 'user.mcp.server',
  uri: 'user.mcp.uri',
  digest: 'user.mcp.digest',
  verified: 'user.mcp.verified',
  /** On a label directory while the server is offline: since when (ISO time). */
  offline: 'user.mcp.offline',
} as const;

interface PathVersion {
  digest: string | undefined;
  inode: number;
  mtimeMs: number;
  /** The size getattr last reported for the path, and when: the kernel holds it for the attribute timeout. */
  sizeBytes?: number;
  reportedAtMs?: number;
}

const MAX_PATH_VERSIONS = 250_000;

export interface SkillsFilesystemOptions {
  now?: () => number;
  /** How long one rendering of skills.json is reused by getattr/open. */
  skillsJsonTtlMs?: number;
  /** The daemon's own state, shown at the top of skills.json. */
  mountStatus?: () => MountStatus;
  /** The kernel's attribute timeout (--metadata-ttl): how long a reported size may still clamp reads. */
  metadataTtlMs?: number;
  log?: (line: string) => void;
}

export class SkillsFilesystem implements FilesystemCore {
  private readonly catalogs: Map<string, ServerCatalog>;
  private readonly handles = new Map<number, { bytes: ByteSource; attributes: NodeAttributes }>();
  // One per path the kernel was told about; bounded (a dropped path gets a new inode next time,
  // which only makes the kernel drop its cached pages for it).
  private readonly versions = new LRUCache<string, PathVersion>({ max: MAX_PATH_VERSIONS });
  private nextHandle = 1;
  private nextInode = 2;
  private readonly mountedAtMs: number;
  private readonly now: () => number;
  private readonly skillsJson: GeneratedDocument;
  private readonly statusJson: GeneratedDocument;

  constructor(catalogs: readonly ServerCatalog[], private readonly options: SkillsFilesystemOptions = {}) {
    this.catalogs = new Map(catalogs.map((catalog) => [catalog.label, catalog]));
    this.now = options.now ?? Date.now;
    this.mountedAtMs = this.now();
    const timing = { ttlMs: options.skillsJsonTtlMs ?? 1_000, kernelHoldMs: options.metadataTtlMs ?? 0, now: this.now };
    this.skillsJson = new GeneratedDocument(
      () => skillsJsonParts([...this.catalogs.values()].map((catalog) => catalog.summary()), this.options.mountStatus?.()),
      { stepBytes: SKILLS_JSON_SIZE_STEP_BYTES, ...timing },
    );
    // status.json: the cheap health answer, small and independent of the catalogs' sizes.
    this.statusJson = new GeneratedDocument(
      () => [renderStatusJson([...this.catalogs.values()].map((catalog) => catalog.health()), this.options.mountStatus?.()).slice(0, -1)],
      { stepBytes: STATUS_JSON_SIZE_STEP_BYTES, ...timing },
    );
  }

  async getattr(path: string): Promise<NodeAttributes> {
    const target = this.route(path);
    switch (target.kind) {
      case 'root':
        return this.directoryAttributes('/');
      case 'generated': {
        const reported = await this.documentOf(target.name).reported();
        return this.attributes(path, { kind: 'file', sizeBytes: reported.length, digest: reported.digest });
      }
      case 'label':
        return this.directoryAttributes(path);
      case 'node':
        return this.attributes(path, await target.catalog.lookup(target.path));
    }
  }

  async readdir(path: string): Promise<string[]> {
    const target = this.route(path);
    switch (target.kind) {
      case 'root':
        return [...this.catalogs.keys(), SKILLS_JSON, STATUS_JSON];
      case 'generated':
        throw new NotADirectoryError(`${path} is a file`);
      case 'label':
      case 'node':
        return target.catalog.list(target.path);
    }
  }

  async open(path: string): Promise<number> {
    const target = this.route(path);
    let bytes: ByteSource;
    let digest: string | undefined;
    switch (target.kind) {
      case 'root':
      case 'label':
        throw new IsADirectoryError(`${path} is a directory`);
      case 'generated': {
        const rendering = await this.documentOf(target.name).opened();
        bytes = rendering;
        digest = rendering.digest;
        break;
      }
      case 'node': {
        const reported = this.versions.get(path);
        const content = await target.catalog.read(target.path, reported?.digest);
        this.refuseClipped(path, reported, content);
        bytes = bufferSource(content.bytes);
        digest = content.digest;
        break;
      }
    }
    const handle = this.nextHandle++;
    this.handles.set(handle, { bytes, attributes: this.attributes(path, { kind: 'file', sizeBytes: bytes.length, digest }) });
    return handle;
  }

  /**
   * A read returns all the bytes of one verified version, or fails. The kernel clamps reads to
   * the size getattr last reported, for up to the attribute timeout; when the file has since
   * grown on the server and the reported version is gone, its new bytes would arrive cut short.
   */
  private refuseClipped(path: string, reported: PathVersion | undefined, content: { digest: string; bytes: Buffer }): void {
    if (!reported || reported.digest === undefined || reported.digest === content.digest) return;
    if (reported.sizeBytes === undefined || content.bytes.length <= reported.sizeBytes) return;
    const heldForMs = (this.options.metadataTtlMs ?? 0) - (this.now() - (reported.reportedAtMs ?? Number.NEGATIVE_INFINITY));
    if (heldForMs <= 0) return;
    const message =
      `${path}: changed on the server (now ${content.bytes.length} bytes) after the kernel was told ${reported.sizeBytes}; ` +
      `served whole after the kernel's attribute cache expires (within ${Math.ceil(heldForMs / 1000)} s)`;
    this.options.log?.(message);
    throw new StaleVersionError(message, { uri: path });
  }

  fgetattr(handle: number): NodeAttributes {
    const opened = this.handles.get(handle);
    if (!opened) throw new NotFoundError(`no open file with handle ${handle}`);
    return opened.attributes;
  }

  read(handle: number, position: number, length: number): Buffer {
    const bytes = this.handles.get(handle)?.bytes;
    if (!bytes) throw new NotFoundError(`no open file with handle ${handle}`);
    return bytes.slice(position, length);
  }

  release(handle: number): void {
    this.handles.delete(handle);
  }

  async listxattr(path: string): Promise<string[]> {
    return Object.keys(await this.xattrs(path));
  }

  async getxattr(path: string, name: string): Promise<Buffer> {
    const value = (await this.xattrs(path))[name];
    if (value === undefined) throw new NoAttributeError(`${path} has no attribute ${name}`);
    return Buffer.from(value, 'utf8');
  }

  private async xattrs(path: string): Promise<Record<string, string>> {
    const target = this.route(path);
    if (target.kind === 'root' || target.kind === 'generated') return {};
    const values: Record<string, string> = { [XATTR.server]: target.catalog.label };
    if (target.kind === 'label') {
      const offline = target.catalog.offline();
      if (offline) values[XATTR.offline] = offline.since;
      return values;
    }
    const node = await target.catalog.lookup(target.path);
    values[XATTR.uri] = node.uri;
    if (node.kind === 'file') {
      if (node.digest !== undefined) values[XATTR.digest] = node.digest;
      values[XATTR.verified] = node.verified ? 'true' : 'false';
    }
    return values;
  }

  private documentOf(name: string): GeneratedDocument {
    return name === STATUS_JSON ? this.statusJson : this.skillsJson;
  }

  private directoryAttributes(path: string): NodeAttributes {
    return { kind: 'directory', sizeBytes: 0, mtimeMs: this.mountedAtMs, inode: this.versionOf(path, undefined).inode };
  }

  private attributes(path: string, node: Pick<CatalogNode, 'kind' | 'sizeBytes' | 'digest'>): NodeAttributes {
    const version = this.versionOf(path, node.digest);
    // What the kernel now holds for this path, until its attribute timeout.
    version.sizeBytes = node.sizeBytes;
    version.reportedAtMs = this.now();
    return { kind: node.kind, sizeBytes: node.sizeBytes, mtimeMs: version.mtimeMs, inode: version.inode };
  }

  /** A new inode and mtime whenever a path's known digest changes, so kernel caches drop the old bytes. */
  private versionOf(path: string, digest: string | undefined): PathVersion {
    const known = this.versions.get(path);
    if (known && (digest === undefined || known.digest === undefined || known.digest === digest)) {
      if (known.digest === undefined && digest !== undefined) known.digest = digest;
      return known;
    }
    const version = { digest, inode: this.nextInode++, mtimeMs: known ? this.now() : this.mountedAtMs };
    this.versions.set(path, version);
    return version;
  }

  private route(path: string) {
    const relative = path.replace(/^\/+/, '');
    if (relative === '') return { kind: 'root' as const };
    if (relative === SKILLS_JSON || relative === STATUS_JSON) return { kind: 'generated' as const, name: relative };
    const slash = relative.indexOf('/');
    const label = slash === -1 ? relative : relative.slice(0, slash);
    const catalog = this.catalogs.get(label);
    if (!catalog) throw new NotFoundError(`${path}: no such server label`);
    if (slash === -1) return { kind: 'label' as const, catalog, path: '' };
    return { kind: 'node' as const, catalog, path: relative.slice(slash + 1).replace(/\/+$/, '') };
  }
}

function bufferSource(bytes: Buffer): ByteSource {
  return {
    length: bytes.length,
    slice: (position, length) => (position >= bytes.length ? Buffer.alloc(0) : bytes.subarray(position, Math.min(bytes.length, position + length))),
  };
}
