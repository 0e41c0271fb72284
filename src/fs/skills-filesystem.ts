// The filesystem core: "/" holds one directory per server label, skills.json and status.json;
// "/<label>/<path>" is that server's resource; "/_approved/<label>/<path>" the same resource
// while the skill it belongs to is approved as it is now (approved-view.ts). Pins one content
// version per open handle, numbers inodes per content version, and answers xattrs. No FUSE, no SDK.
import { IntegrityError, IsADirectoryError, NoAttributeError, NotADirectoryError, NotFoundError, StaleVersionError } from '../errors.js';
import type { ApprovalLedger } from '../approvals/approval-ledger.js';
import type { CatalogNode, ServerCatalog } from '../catalog/server-catalog.js';
import type { ChangeListener, FilesystemCore, NodeAttributes } from './filesystem-core.js';
import { LRUCache } from 'lru-cache';
import { sha256Digest } from '../format/digest.js';
import { documentText, jsonText, skillsJsonParts, type MountStatus } from './skills-json.js';
import { renderStatusJson } from './status-json.js';
import { GeneratedDocument, type ByteSource } from './generated-document.js';
import { ApprovedView } from './approved-view.js';
import { APPROVED_DIR, INSPECT_DIR, SKILLS_JSON, STATUS_JSON } from './mount-layout.js';

export { SKILLS_JSON, STATUS_JSON } from './mount-layout.js';
const SKILLS_JSON_SIZE_STEP_BYTES = 16 * 1024;
const STATUS_JSON_SIZE_STEP_BYTES = 4 * 1024;
/** Room a skill record (.inspect) has to grow while the kernel holds its size: approval fields and differing files. */
const RECORD_HEADROOM_BYTES = 16 * 1024;
/** Generated documents are rendered from live state: the kernel asks each time. */
const LIVE_CACHE_SECONDS = 0;
/** The approvals file is re-read at most every 100 ms: views of it are trusted for a second. */
const APPROVALS_CACHE_SECONDS = 1;

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
  /** The approvals: with them the mount has its approved view (`_approved/`) and the records `skills-mount approve` reads. */
  approvals?: ApprovalLedger;
  /** Labels whose skills are served only in the approved view. */
  approvedOnly?: ReadonlySet<string>;
  log?: (line: string) => void;
}

type Route =
  | { kind: 'root' }
  | { kind: 'generated'; name: string }
  | { kind: 'label'; catalog: ServerCatalog; path: '' }
  | { kind: 'node'; catalog: ServerCatalog; path: string }
  | { kind: 'approved-root' }
  | { kind: 'approved'; catalog: ServerCatalog; view: ApprovedView; path: string }
  | { kind: 'inspect-directory'; view: ApprovedView; catalog?: ServerCatalog }
  | { kind: 'inspect-record'; catalog: ServerCatalog; view: ApprovedView; name: string };

const APPROVED_SKILLS_JSON = `${APPROVED_DIR}/${SKILLS_JSON}`;

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
  private readonly approvedSkillsJson: GeneratedDocument | undefined;
  private readonly approved: ApprovedView | undefined;

  constructor(catalogs: readonly ServerCatalog[], private readonly options: SkillsFilesystemOptions = {}) {
    this.catalogs = new Map(catalogs.map((catalog) => [catalog.label, catalog]));
    this.now = options.now ?? Date.now;
    this.mountedAtMs = this.now();
    const approved = options.approvals && new ApprovedView(this.catalogs, options.approvals);
    this.approved = approved;
    const timing = { ttlMs: options.skillsJsonTtlMs ?? 1_000, kernelHoldMs: options.metadataTtlMs ?? 0, now: this.now };
    this.skillsJson = new GeneratedDocument(
      () =>
        skillsJsonParts(
          [...this.catalogs.values()].map((catalog) => catalog.summary()),
          this.options.mountStatus?.(),
          approved && ((label, uri) => approved.approvalOf(label, uri)),
        ),
      { stepBytes: SKILLS_JSON_SIZE_STEP_BYTES, ...timing },
    );
    // status.json: the cheap health answer, small and independent of the catalogs' sizes.
    this.statusJson = new GeneratedDocument(
      () => [
        renderStatusJson(
          [...this.catalogs.values()].map((catalog) => catalog.health()),
          this.options.mountStatus?.(),
          approved && ((label) => approved.serverApprovals(label)),
        ).slice(0, -1),
      ],
      { stepBytes: STATUS_JSON_SIZE_STEP_BYTES, ...timing },
    );
    this.approvedSkillsJson =
      approved &&
      new GeneratedDocument(() => [jsonText({ view: 'approved', approvals: { file: options.approvals!.file, problem: options.approvals!.problem ?? null }, servers: approved.skills() })], {
        // Small, but grows by an entry per approval: the larger step lets most approvals show at once.
        stepBytes: SKILLS_JSON_SIZE_STEP_BYTES,
        ...timing,
      });
  }

  async getattr(path: string): Promise<NodeAttributes> {
    const target = await this.route(path);
    const attributes = await this.attributesOf(target, path);
    const cacheSeconds = cacheSecondsOf(target);
    return cacheSeconds === undefined ? attributes : { ...attributes, cacheSeconds };
  }

  /** Tells `listener` the subtree of a label (in every view) whenever that server's catalog changes, and the approved views when the approvals do. */
  onChange(listener: ChangeListener): void {
    this.options.approvals?.onChange(() => {
      listener(`/${APPROVED_DIR}`);
      listener(`/${INSPECT_DIR}`);
    });
    for (const catalog of this.catalogs.values()) {
      catalog.onChange(() => {
        listener(`/${catalog.label}`);
        if (this.approved) {
          listener(`/${APPROVED_DIR}/${catalog.label}`);
          listener(`/${INSPECT_DIR}/${catalog.label}`);
        }
      });
    }
  }

  private async attributesOf(target: Route, path: string): Promise<NodeAttributes> {
    switch (target.kind) {
      case 'root':
      case 'label':
      case 'approved-root':
      case 'inspect-directory':
        return this.directoryAttributes(path);
      case 'generated': {
        const reported = await this.documentOf(target.name).reported();
        return this.attributes(path, { kind: 'file', sizeBytes: reported.length, digest: reported.digest });
      }
      case 'node':
        return this.attributes(path, await target.catalog.lookup(target.path));
      case 'approved': {
        const node = approvedNode(target, path);
        return node.kind === 'directory' ? this.directoryAttributes(path) : this.attributes(path, { kind: 'file', sizeBytes: node.file.sizeBytes, digest: node.file.digest });
      }
      case 'inspect-record': {
        const bytes = this.sizedRecord(path, inspectBytes(target, path));
        return this.attributes(path, { kind: 'file', sizeBytes: bytes.length, digest: sha256Digest(bytes) });
      }
    }
  }

  async readdir(path: string): Promise<string[]> {
    const target = await this.route(path);
    switch (target.kind) {
      case 'root': {
        const hidden = this.options.approvedOnly;
        const labels = hidden ? [...this.catalogs.keys()].filter((label) => !hidden.has(label)) : [...this.catalogs.keys()];
        return [...labels, SKILLS_JSON, STATUS_JSON, ...(this.approved ? [APPROVED_DIR] : [])];
      }
      case 'generated':
      case 'inspect-record':
        throw new NotADirectoryError(`${path} is a file`);
      case 'label':
      case 'node':
        return target.catalog.list(target.path);
      case 'approved-root':
        return [...this.catalogs.keys(), SKILLS_JSON];
      case 'approved': {
        const node = approvedNode(target, path);
        if (node.kind === 'file') throw new NotADirectoryError(`${path} is a file`);
        return [...node.children];
      }
      case 'inspect-directory':
        return target.catalog ? target.view.recordNames(target.catalog.label) : [...this.catalogs.keys()];
    }
  }

  async open(path: string): Promise<number> {
    const target = await this.route(path);
    let bytes: ByteSource;
    let digest: string | undefined;
    switch (target.kind) {
      case 'root':
      case 'label':
      case 'approved-root':
      case 'inspect-directory':
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
      case 'approved': {
        const node = approvedNode(target, path);
        if (node.kind === 'directory') throw new IsADirectoryError(`${path} is a directory`);
        const reported = this.versions.get(path);
        const content = await target.catalog.read(target.path, node.file.digest);
        this.refuseClipped(path, reported, content);
        // The catalog verified the bytes against the entry held now; the view serves only the approved ones.
        if (content.digest !== node.file.digest) {
          throw new IntegrityError(`${target.catalog.label}: ${node.file.uri}: the server serves ${content.digest} now, approved was ${node.file.digest}; not served in ${APPROVED_DIR}`, {
            server: target.catalog.label,
            uri: node.file.uri,
          });
        }
        bytes = bufferSource(content.bytes);
        digest = content.digest;
        break;
      }
      case 'inspect-record': {
        const rendered = this.sizedRecord(path, inspectBytes(target, path));
        bytes = bufferSource(rendered);
        digest = sha256Digest(rendered);
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
    const held = this.kernelHeldSize(reported);
    if (held === undefined || content.bytes.length <= held.sizeBytes) return;
    this.refuseStale(path, `changed on the server (now ${content.bytes.length} bytes) after the kernel was told ${held.sizeBytes}`, held.forMs);
  }

  /**
   * A skill record padded with spaces (JSON whitespace) to the size the kernel holds for the
   * path, so that a record re-rendered since (an approval added, a file changed) is read whole;
   * a fresh size leaves RECORD_HEADROOM_BYTES to grow into.
   */
  private sizedRecord(path: string, rendered: Buffer): Buffer {
    const held = this.kernelHeldSize(this.versions.get(path));
    if (held !== undefined && rendered.length > held.sizeBytes) this.refuseStale(path, `the skill's record outgrew the size the kernel holds (${held.sizeBytes} bytes)`, held.forMs);
    const size = held?.sizeBytes ?? Math.ceil((rendered.length + RECORD_HEADROOM_BYTES) / RECORD_HEADROOM_BYTES) * RECORD_HEADROOM_BYTES;
    return Buffer.concat([rendered, Buffer.alloc(size - rendered.length, ' ')]);
  }

  /** The size the kernel may still clamp reads of a path to, and for how long; undefined once its attribute timeout passed. */
  private kernelHeldSize(reported: PathVersion | undefined): { sizeBytes: number; forMs: number } | undefined {
    if (reported?.sizeBytes === undefined || reported.reportedAtMs === undefined) return undefined;
    const forMs = (this.options.metadataTtlMs ?? 0) - (this.now() - reported.reportedAtMs);
    return forMs > 0 ? { sizeBytes: reported.sizeBytes, forMs } : undefined;
  }

  private refuseStale(path: string, what: string, heldForMs: number): never {
    const message = `${path}: ${what}; served whole after the kernel's attribute cache expires (within ${Math.ceil(heldForMs / 1000)} s)`;
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
    const target = await this.route(path);
    switch (target.kind) {
      case 'root':
      case 'generated':
      case 'approved-root':
      case 'inspect-directory':
      case 'inspect-record':
        return {};
      case 'label': {
        const values: Record<string, string> = { [XATTR.server]: target.catalog.label };
        const offline = target.catalog.offline();
        if (offline) values[XATTR.offline] = offline.since;
        return values;
      }
      case 'approved': {
        const node = approvedNode(target, path);
        const values: Record<string, string> = { [XATTR.server]: target.catalog.label };
        if (node.kind === 'file') Object.assign(values, { [XATTR.uri]: node.file.uri, [XATTR.digest]: node.file.digest, [XATTR.verified]: 'true' });
        return values;
      }
      case 'node': {
        const node = await target.catalog.lookup(target.path);
        const values: Record<string, string> = { [XATTR.server]: target.catalog.label, [XATTR.uri]: node.uri };
        if (node.kind === 'file') {
          if (node.digest !== undefined) values[XATTR.digest] = node.digest;
          values[XATTR.verified] = node.verified ? 'true' : 'false';
        }
        return values;
      }
    }
  }

  private documentOf(name: string): GeneratedDocument {
    if (name === STATUS_JSON) return this.statusJson;
    if (name === APPROVED_SKILLS_JSON && this.approvedSkillsJson) return this.approvedSkillsJson;
    return this.skillsJson;
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

  private async route(path: string): Promise<Route> {
    const relative = path.replace(/^\/+/, '').replace(/\/+$/, '');
    if (relative === '') return { kind: 'root' };
    if (relative === SKILLS_JSON || relative === STATUS_JSON) {
      // Both show each skill's approval state: from the approvals file as it is now.
      await this.approved?.refresh();
      return { kind: 'generated', name: relative };
    }
    const segments = relative.split('/');
    const first = segments[0]!;
    if (this.approved && (first === APPROVED_DIR || first === INSPECT_DIR)) {
      // Everything here depends on the approvals file, which another process writes.
      await this.approved.refresh();
      if (first === APPROVED_DIR) {
        if (segments.length === 1) return { kind: 'approved-root' };
        if (relative === APPROVED_SKILLS_JSON) return { kind: 'generated', name: relative };
        return { kind: 'approved', catalog: this.catalogOf(path, segments[1]!), view: this.approved, path: segments.slice(2).join('/') };
      }
      if (segments.length === 1) return { kind: 'inspect-directory', view: this.approved };
      const catalog = this.catalogOf(path, segments[1]!);
      if (segments.length === 2) return { kind: 'inspect-directory', view: this.approved, catalog };
      if (segments.length === 3) return { kind: 'inspect-record', catalog, view: this.approved, name: segments[2]! };
      throw new NotFoundError(`${path}: no such skill record`);
    }
    const catalog = this.catalogOf(path, first);
    if (this.options.approvedOnly?.has(first)) throw new NotFoundError(`${path}: the skills of ${first} are served only under ${APPROVED_DIR}/${first}`);
    if (segments.length === 1) return { kind: 'label', catalog, path: '' };
    return { kind: 'node', catalog, path: segments.slice(1).join('/') };
  }

  private catalogOf(path: string, label: string): ServerCatalog {
    const catalog = this.catalogs.get(label);
    if (!catalog) throw new NotFoundError(`${path}: no such server label`);
    return catalog;
  }
}

/** How long the kernel may reuse an answer about this route, when shorter than the edge's default. */
function cacheSecondsOf(target: Route): number | undefined {
  switch (target.kind) {
    case 'generated':
    case 'inspect-record':
      return LIVE_CACHE_SECONDS;
    case 'approved-root':
    case 'approved':
    case 'inspect-directory':
      return APPROVALS_CACHE_SECONDS;
    default:
      return undefined;
  }
}

function approvedNode(target: Extract<Route, { kind: 'approved' }>, path: string) {
  const node = target.view.node(target.catalog.label, target.path);
  if (!node) throw new NotFoundError(`${path}: not in the approved view (not approved, or changed since approval)`);
  return node;
}

/** The record `.inspect/<label>/<name>` as JSON text. */
function inspectBytes(target: Extract<Route, { kind: 'inspect-record' }>, path: string): Buffer {
  const inspected = target.view.recordNamed(target.catalog.label, target.name);
  if (!inspected) throw new NotFoundError(`${path}: no skill record of that name`);
  return Buffer.from(documentText(inspected), 'utf8');
}

function bufferSource(bytes: Buffer): ByteSource {
  return {
    length: bytes.length,
    slice: (position, length) => (position >= bytes.length ? Buffer.alloc(0) : bytes.subarray(position, Math.min(bytes.length, position + length))),
  };
}
