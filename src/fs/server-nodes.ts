// The full view of one server: `/<label>` and `/<label>/<path>`, the resource `skill://<path>` of
// that server, answered by its catalog (lookup, list, verified read). A label served only in the
// approved view is refused here. Knows nothing of approvals or of other servers.
import { NotFoundError } from '../errors.js';
import type { ServerCatalog } from '../catalog/server-catalog.js';
import type { KernelHold } from './reported-versions.js';
import { APPROVED_DIR } from './mount-layout.js';
import { MOUNT_DIRECTORY, XATTR, bufferSource, isADirectory, type HeldChildren, type NodeProvider, type NodeStat, type OpenedFile, type ViewPath } from './node-provider.js';

/** One server's full view, rooted at its label directory. */
export class ServerNodes implements NodeProvider {
  constructor(
    private readonly catalog: ServerCatalog,
    /** Labels whose skills are served only in the approved view (read at each call). */
    private readonly approvedOnly: ReadonlySet<string> | undefined,
    private readonly hold: KernelHold,
  ) {}

  async stat(at: ViewPath): Promise<NodeStat> {
    const catalog = this.served(at);
    return at.relative === '' ? MOUNT_DIRECTORY : catalog.lookup(at.relative);
  }

  async list(at: ViewPath): Promise<string[]> {
    return this.served(at).list(at.relative);
  }

  heldChildren(at: ViewPath, maxChildren: number): HeldChildren | undefined {
    return this.served(at).heldChildren(at.relative, maxChildren);
  }

  async open(at: ViewPath): Promise<OpenedFile> {
    const catalog = this.served(at);
    if (at.relative === '') throw isADirectory(at);
    const reported = this.hold.reported(at.path);
    // The version the kernel was told of, while the catalog still has it: its size and bytes stay one version.
    const content = await catalog.read(at.relative, reported?.digest);
    this.hold.refuseClipped(at.path, reported, content);
    return { bytes: bufferSource(content.bytes), digest: content.digest };
  }

  async xattrs(at: ViewPath): Promise<Record<string, string>> {
    const catalog = this.served(at);
    const values: Record<string, string> = { [XATTR.server]: catalog.label };
    if (at.relative === '') {
      const offline = catalog.offline();
      if (offline) values[XATTR.offline] = offline.since;
      return values;
    }
    const node = await catalog.lookup(at.relative);
    values[XATTR.uri] = node.uri;
    if (node.kind === 'file') {
      if (node.digest !== undefined) values[XATTR.digest] = node.digest;
      values[XATTR.verified] = node.verified ? 'true' : 'false';
    }
    return values;
  }

  cacheSeconds(): undefined {
    return undefined;
  }

  /** The catalog, unless this label is served only in the approved view. */
  private served(at: ViewPath): ServerCatalog {
    const label = this.catalog.label;
    if (this.approvedOnly?.has(label)) throw new NotFoundError(`${at.path}: the skills of ${label} are served only under ${APPROVED_DIR}/${label}`);
    return this.catalog;
  }
}
