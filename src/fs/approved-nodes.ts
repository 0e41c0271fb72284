// The approved view, `_approved` and `_approved/<label>/<path>`: the files of each skill whose
// current resources set a person approved (approved-view.ts decides which), served only while the
// server serves exactly the approved bytes (a lock's version: or while a verified copy is held
// here). Its index, `_approved/skills.json`, is a document's.
import { IntegrityError, NotFoundError } from '../errors.js';
import type { ServerCatalog } from '../catalog/server-catalog.js';
import { lockedFileContent } from '../team/locked-content.js';
import type { ApprovedNode, ApprovedView } from './approved-view.js';
import type { KernelHold } from './reported-versions.js';
import { APPROVED_DIR, SKILLS_JSON } from './mount-layout.js';
import { APPROVALS_CACHE_SECONDS, MOUNT_DIRECTORY, XATTR, bufferSource, isADirectory, labelled, notADirectory, type NodeProvider, type NodeStat, type OpenedFile, type ViewPath } from './node-provider.js';

/** A node of one label's approved tree, with its server and its path under the label. */
interface Found {
  catalog: ServerCatalog;
  path: string;
  node: ApprovedNode;
}

/** The approved view, rooted at `_approved`. */
export class ApprovedNodes implements NodeProvider {
  constructor(
    private readonly catalogs: ReadonlyMap<string, ServerCatalog>,
    private readonly view: ApprovedView,
    private readonly hold: KernelHold,
  ) {}

  async stat(at: ViewPath): Promise<NodeStat> {
    const found = await this.find(at);
    if (found?.node.kind !== 'file') return MOUNT_DIRECTORY;
    return { kind: 'file', sizeBytes: found.node.file.sizeBytes, digest: found.node.file.digest };
  }

  async list(at: ViewPath): Promise<string[]> {
    const found = await this.find(at);
    if (!found) return [...this.catalogs.keys(), SKILLS_JSON];
    if (found.node.kind === 'file') throw notADirectory(at);
    return [...found.node.children];
  }

  async open(at: ViewPath): Promise<OpenedFile> {
    const found = await this.find(at);
    if (found?.node.kind !== 'file') throw isADirectory(at);
    const { catalog, node } = found;
    const file = node.file;
    const reported = this.hold.reported(at.path);
    // A locked file: the server's bytes while they are the locked version, else a copy held here (locked-content.ts).
    const content = this.view.keepsVersions ? await lockedFileContent(catalog, file, this.view.source) : await catalog.read(found.path, file.digest);
    this.hold.refuseClipped(at.path, reported, content);
    // The catalog verified the bytes against the entry held now; the view serves only the approved ones.
    if (content.digest !== file.digest) {
      throw new IntegrityError(`${catalog.label}: ${file.uri}: the server serves ${content.digest} now, approved was ${file.digest}; not served in ${APPROVED_DIR}`, {
        server: catalog.label,
        uri: file.uri,
      });
    }
    return { bytes: bufferSource(content.bytes), digest: content.digest };
  }

  async xattrs(at: ViewPath): Promise<Record<string, string>> {
    const found = await this.find(at);
    if (!found) return {};
    const values: Record<string, string> = { [XATTR.server]: found.catalog.label };
    const node = found.node;
    if (node.kind === 'file') Object.assign(values, { [XATTR.uri]: node.file.uri, [XATTR.digest]: node.file.digest, [XATTR.verified]: 'true' });
    return values;
  }

  cacheSeconds(): number | undefined {
    // Unwatched, a change of the approvals file is seen only on access: the kernel must ask again soon.
    return this.view.changesReported ? undefined : APPROVALS_CACHE_SECONDS;
  }

  /** The node at `at` once the approvals file was re-read (another process writes it); undefined for `_approved` itself. */
  private async find(at: ViewPath): Promise<Found | undefined> {
    await this.view.refresh();
    const under = labelled(this.catalogs, at);
    if (!under) return undefined;
    const node = this.view.node(under.catalog.label, under.rest);
    if (!node) throw new NotFoundError(`${at.path}: not in the approved view (not approved, or changed since approval)`);
    return { catalog: under.catalog, path: under.rest, node };
  }
}
