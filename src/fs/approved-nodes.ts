// The approved view, `_approved` and `_approved/<label>/<path>`: the files of each skill whose
// current resources set a person approved (approved-view.ts decides which), served only while the
// server serves exactly the approved bytes. Its index, `_approved/skills.json`, is a document's.
import { IntegrityError, NotFoundError, SkillsMountError } from '../errors.js';
import { verifyContent, type VerifiedContent } from '../catalog/verified-content.js';
import type { ServerCatalog } from '../catalog/server-catalog.js';
import type { ApprovedFile, ApprovedNode, ApprovedView } from './approved-view.js';
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
    const content = this.view.keepsVersions ? await this.keptOrServed(catalog, found.path, file) : await catalog.read(found.path, file.digest);
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

  /**
   * A locked file: as the server serves it while that is the locked version; else the version this
   * machine verified before (memory, the disk cache, a kept SKILL.md), checked against the lock's
   * digest and size. Never the server's other bytes.
   */
  private async keptOrServed(catalog: ServerCatalog, path: string, file: ApprovedFile): Promise<VerifiedContent> {
    const served = await catalog.read(path, file.digest).catch((error: unknown) => {
      if (error instanceof SkillsMountError) return error;
      throw error;
    });
    if (!(served instanceof SkillsMountError) && served.digest === file.digest) {
      if (isSkillMd(file.uri)) await this.view.source.keepSkillText?.(file.digest, served.bytes);
      return served;
    }
    const kept = (await catalog.keptVersion(file.uri, file.digest, file.sizeBytes)) ?? (await this.keptSkillMd(catalog, file));
    if (kept !== undefined) return kept;
    const now = served instanceof SkillsMountError ? served.message : `the server serves ${served.digest} now`;
    throw new IntegrityError(`${catalog.label}: ${file.uri}: locked as ${file.digest}, which this machine has not kept, and ${now}; not served in ${APPROVED_DIR}`, { server: catalog.label, uri: file.uri });
  }

  private async keptSkillMd(catalog: ServerCatalog, file: ApprovedFile): Promise<VerifiedContent | undefined> {
    if (!isSkillMd(file.uri)) return undefined;
    const bytes = await this.view.source.keptSkillText?.(file.digest);
    return bytes === undefined ? undefined : verifyContent(catalog.label, { uri: file.uri, bytes, mimeType: undefined }, { digest: file.digest, sizeBytes: file.sizeBytes });
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

function isSkillMd(uri: string): boolean {
  return uri.endsWith('/SKILL.md');
}
