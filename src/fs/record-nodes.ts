// The skill records `skills-mount approve` reads: `.inspect`, `.inspect/<label>` and
// `.inspect/<label>/<record>`, one JSON document per held skill (approved-view.ts builds it),
// padded to a size the kernel may hold while the record grows. Knows nothing of other views.
import { NotFoundError } from '../errors.js';
import type { ServerCatalog } from '../catalog/server-catalog.js';
import { sha256Digest } from '../format/digest.js';
import type { ApprovedView } from './approved-view.js';
import type { KernelHold } from './reported-versions.js';
import { APPROVALS_CACHE_SECONDS, LIVE_CACHE_SECONDS, MOUNT_DIRECTORY, bufferSource, isADirectory, labelled, notADirectory, type NodeProvider, type NodeStat, type OpenedFile, type ViewPath } from './node-provider.js';
import { documentText } from './skills-json.js';

/** Room a skill record has to grow while the kernel holds its size: approval fields and differing files. */
const RECORD_HEADROOM_BYTES = 16 * 1024;

/** Where a path lies: `.inspect` itself (no catalog), a label's directory (no name), or a record. */
interface Found {
  catalog?: ServerCatalog;
  name?: string;
}

/** The records, rooted at `.inspect`. */
export class RecordNodes implements NodeProvider {
  constructor(
    private readonly catalogs: ReadonlyMap<string, ServerCatalog>,
    private readonly view: ApprovedView,
    private readonly hold: KernelHold,
  ) {}

  async stat(at: ViewPath): Promise<NodeStat> {
    const { catalog, name } = await this.find(at);
    if (catalog === undefined || name === undefined) return MOUNT_DIRECTORY;
    const bytes = this.sizedRecord(at, catalog, name);
    return { kind: 'file', sizeBytes: bytes.length, digest: sha256Digest(bytes) };
  }

  async list(at: ViewPath): Promise<string[]> {
    const { catalog, name } = await this.find(at);
    if (name !== undefined) throw notADirectory(at);
    return catalog ? this.view.recordNames(catalog.label) : [...this.catalogs.keys()];
  }

  async open(at: ViewPath): Promise<OpenedFile> {
    const { catalog, name } = await this.find(at);
    if (catalog === undefined || name === undefined) throw isADirectory(at);
    const bytes = this.sizedRecord(at, catalog, name);
    return { bytes: bufferSource(bytes), digest: sha256Digest(bytes) };
  }

  async xattrs(at: ViewPath): Promise<Record<string, string>> {
    await this.find(at);
    return {};
  }

  cacheSeconds(at: ViewPath): number {
    // A record is rendered from live state; the directories change only with the approvals or a listing.
    return at.relative.includes('/') ? LIVE_CACHE_SECONDS : APPROVALS_CACHE_SECONDS;
  }

  /** Where `at` lies, once the approvals file was re-read (every record shows the skill's approval). */
  private async find(at: ViewPath): Promise<Found> {
    await this.view.refresh();
    const under = labelled(this.catalogs, at);
    if (!under) return {};
    if (under.rest === '') return { catalog: under.catalog };
    if (under.rest.includes('/')) throw new NotFoundError(`${at.path}: no such skill record`);
    return { catalog: under.catalog, name: under.rest };
  }

  /**
   * The record `name` as JSON text padded with spaces (JSON whitespace) to the size the kernel
   * holds for the path, so that a record re-rendered since (an approval added, a file changed) is
   * read whole; a fresh size leaves RECORD_HEADROOM_BYTES to grow into.
   */
  private sizedRecord(at: ViewPath, catalog: ServerCatalog, name: string): Buffer {
    const inspected = this.view.recordNamed(catalog.label, name);
    if (!inspected) throw new NotFoundError(`${at.path}: no skill record of that name`);
    const rendered = Buffer.from(documentText(inspected), 'utf8');
    const held = this.hold.heldSize(this.hold.reported(at.path));
    if (held !== undefined && rendered.length > held.sizeBytes) this.hold.refuseStale(at.path, `the skill's record outgrew the size the kernel holds (${held.sizeBytes} bytes)`, held.forMs);
    const size = held?.sizeBytes ?? Math.ceil((rendered.length + RECORD_HEADROOM_BYTES) / RECORD_HEADROOM_BYTES) * RECORD_HEADROOM_BYTES;
    return Buffer.concat([rendered, Buffer.alloc(size - rendered.length, ' ')]);
  }
}
