// The filesystem core: resolves each path by its first segment(s) to the one view that serves it
// (node-provider.ts: the root, a server's full view, the generated documents, the approved view,
// the records), numbers inodes per content version, pins one version per open handle, and passes
// on what changed. Knows no view's contents. No FUSE, no SDK.
import { NoAttributeError, NotFoundError } from '../errors.js';
import type { ApprovalsSource } from '../approvals/approval-ledger.js';
import type { ServerCatalog } from '../catalog/server-catalog.js';
import type { ChangeListener, FilesystemCore, HeldListing, NodeAttributes } from './filesystem-core.js';
import { LRUCache } from 'lru-cache';
import type { MountStatus } from './skills-json.js';
import type { ByteSource } from './generated-document.js';
import { ApprovedView } from './approved-view.js';
import { APPROVED_DIR, INSPECT_DIR } from './mount-layout.js';
import { MOUNT_DIRECTORY, noSuchLabel, splitFirst, type NodeProvider, type NodeStat, type ViewPath } from './node-provider.js';
import { KernelHold } from './reported-versions.js';
import { KernelPublication } from './kernel-publication.js';
import { RootNodes } from './root-nodes.js';
import { ServerNodes } from './server-nodes.js';
import { DocumentNodes } from './document-nodes.js';
import { ApprovedNodes } from './approved-nodes.js';
import { RecordNodes } from './record-nodes.js';

export { SKILLS_JSON, STATUS_JSON } from './mount-layout.js';
export { XATTR } from './node-provider.js';

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
  /** The approvals: with them the mount has its approved view (`_approved/`) and the records `skills-mount approve` reads. */
  approvals?: ApprovalsSource;
  /** Labels whose skills are served only in the approved view. */
  approvedOnly?: ReadonlySet<string>;
  log?: (line: string) => void;
}

/** A path resolved: the view that serves it, and the path as that view sees it. */
interface Resolved {
  provider: NodeProvider;
  at: ViewPath;
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
  private readonly hasApprovedView: boolean;
  /** The approved view (with approvals), for the outlets that read it by skill rather than by path (serve). */
  readonly approvedView: ApprovedView | undefined;
  /** The documents, found by their whole path (one of them lies in `_approved`). */
  private readonly documents: DocumentNodes;
  /** Every other view by the first segment of the paths it serves: "" is the root itself. */
  private readonly views = new Map<string, NodeProvider>();
  /** The documents show a change once the kernel has been told of it. */
  private readonly publication = new KernelPublication();

  constructor(catalogs: readonly ServerCatalog[], private readonly options: SkillsFilesystemOptions = {}) {
    this.catalogs = new Map(catalogs.map((catalog) => [catalog.label, catalog]));
    this.now = options.now ?? Date.now;
    this.mountedAtMs = this.now();
    const approved = options.approvals && new ApprovedView(this.catalogs, options.approvals, options.log);
    this.approvedView = approved;
    this.hasApprovedView = approved !== undefined;
    // What the kernel holds depends on what this filesystem reported (the versions), so the
    // record stays here; the views that serve bytes read it to keep within the size it clamps to.
    const hold = new KernelHold((path) => this.versions.get(path), { metadataTtlMs: options.metadataTtlMs ?? 0, now: this.now, log: options.log });
    this.documents = new DocumentNodes(this.catalogs, {
      approved: approved && options.approvals && { view: approved, ledger: options.approvals },
      mountStatus: () => this.options.mountStatus?.(),
      ttlMs: options.skillsJsonTtlMs ?? 1_000,
      kernelHoldMs: options.metadataTtlMs ?? 0,
      now: this.now,
      published: () => this.publication.settled(),
    });
    this.views.set('', new RootNodes([...this.catalogs.keys()], { approvedOnly: options.approvedOnly, approvals: approved !== undefined }));
    for (const catalog of this.catalogs.values()) this.views.set(catalog.label, new ServerNodes(catalog, options.approvedOnly, hold));
    // Labels never start with "_" or "." (src/labels.ts): these names cannot shadow a server.
    if (approved) {
      this.views.set(APPROVED_DIR, new ApprovedNodes(this.catalogs, approved, hold));
      this.views.set(INSPECT_DIR, new RecordNodes(this.catalogs, approved, hold));
      for (const catalog of this.catalogs.values()) catalog.onChange(() => approved.judge(catalog.label));
    }
  }

  async getattr(path: string): Promise<NodeAttributes> {
    const { provider, at } = this.resolve(path);
    const stat = await provider.stat(at);
    const attributes = stat === MOUNT_DIRECTORY ? this.directoryAttributes(path) : this.attributes(path, stat);
    const cacheSeconds = provider.cacheSeconds(at);
    return cacheSeconds === undefined ? attributes : { ...attributes, cacheSeconds };
  }

  /** Tells `listener` the subtree of a label (in every view) whenever that server's catalog changes, and the approved views when the approvals do. */
  onChange(listener: ChangeListener): void {
    const report = (prefix: string) => this.publication.track(listener(prefix));
    this.options.approvals?.onChange(() => {
      report(`/${APPROVED_DIR}`);
      report(`/${INSPECT_DIR}`);
    });
    for (const catalog of this.catalogs.values()) {
      catalog.onChange(() => {
        report(`/${catalog.label}`);
        if (this.hasApprovedView) {
          report(`/${APPROVED_DIR}/${catalog.label}`);
          report(`/${INSPECT_DIR}/${catalog.label}`);
        }
      });
    }
  }

  async readdir(path: string): Promise<string[]> {
    const { provider, at } = this.resolve(path);
    return provider.list(at);
  }

  readdirHeld(path: string, maxChildren: number): HeldListing | undefined {
    const { provider, at } = this.resolve(path);
    // Only views whose answers hold for the edge's default time: what is pushed ahead is held that long.
    if (provider.cacheSeconds(at) !== undefined) return undefined;
    const held = provider.heldChildren?.(at, maxChildren);
    if (held === undefined) return undefined;
    const base = path === '/' ? '' : path;
    return {
      complete: held.complete,
      children: held.children.map(({ name, stat, copy }) => ({ name, attributes: stat && stat !== MOUNT_DIRECTORY ? this.attributes(`${base}/${name}`, stat) : undefined, copy })),
      copiesPending: held.copiesPending ?? false,
    };
  }

  async open(path: string): Promise<number> {
    const { provider, at } = this.resolve(path);
    const { bytes, digest } = await provider.open(at);
    const handle = this.nextHandle++;
    this.handles.set(handle, { bytes, attributes: this.attributes(path, { kind: 'file', sizeBytes: bytes.length, digest }) });
    return handle;
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

  bytesOf(handle: number): Uint8Array | undefined {
    return this.handles.get(handle)?.bytes.whole?.();
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
    const { provider, at } = this.resolve(path);
    return provider.xattrs(at);
  }

  /** The view that serves `path`, by its first segment(s); throws NotFoundError for a first segment that names nothing. */
  private resolve(path: string): Resolved {
    const relative = path.replace(/^\/+/, '').replace(/\/+$/, '');
    // The documents are named by their whole path: `_approved/skills.json` is one, not a label of the approved view.
    if (this.documents.serves(relative)) return { provider: this.documents, at: { relative, path } };
    const { first, rest } = splitFirst(relative);
    const provider = this.views.get(first);
    if (!provider) throw noSuchLabel(path);
    return { provider, at: { relative: rest, path } };
  }

  private directoryAttributes(path: string): NodeAttributes {
    return { kind: 'directory', sizeBytes: 0, mtimeMs: this.mountedAtMs, inode: this.versionOf(path, undefined).inode };
  }

  private attributes(path: string, node: NodeStat): NodeAttributes {
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
}
