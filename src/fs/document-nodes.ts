// The generated documents: skills.json and status.json at the root, and `_approved/skills.json`
// with approvals; rendered from live state (catalogs, daemon, approvals as they are now) and sized
// by generated-document.ts. Knows the documents' contents, not where else in the mount they lie.
import type { ApprovalsSource } from '../approvals/approval-ledger.js';
import type { ServerCatalog } from '../catalog/server-catalog.js';
import { NotFoundError } from '../errors.js';
import type { ApprovedView } from './approved-view.js';
import { GeneratedDocument } from './generated-document.js';
import { APPROVED_DIR, SKILLS_JSON, STATUS_JSON } from './mount-layout.js';
import { LIVE_CACHE_SECONDS, notADirectory, type NodeProvider, type NodeStat, type OpenedFile, type ViewPath } from './node-provider.js';
import { jsonText, skillsJsonParts, type MountStatus } from './skills-json.js';
import { renderStatusJson } from './status-json.js';

const SKILLS_JSON_SIZE_STEP_BYTES = 16 * 1024;
const STATUS_JSON_SIZE_STEP_BYTES = 4 * 1024;
/** The approved view's index, by its path from the mount's root. */
const APPROVED_SKILLS_JSON = `${APPROVED_DIR}/${SKILLS_JSON}`;

export interface DocumentNodesOptions {
  /** The approvals and what they imply: each skill's approval state, and `_approved/skills.json`. */
  approved?: { view: ApprovedView; ledger: ApprovalsSource } | undefined;
  /** The daemon's own state, shown at the top of skills.json and status.json. */
  mountStatus: () => MountStatus | undefined;
  /** How long one rendering is reused by stat and open. */
  ttlMs: number;
  /** Settles once the kernel has been told of every change so far: a rendering waits for it. */
  published?: () => Promise<void>;
  /** The kernel's attribute timeout: how long it may clamp reads to a size it was told. */
  kernelHoldMs: number;
  now: () => number;
}

/** The documents by their path from the mount's root ("skills.json", "_approved/skills.json"). */
export class DocumentNodes implements NodeProvider {
  private readonly documents = new Map<string, GeneratedDocument>();
  private readonly approved: ApprovedView | undefined;

  constructor(catalogs: ReadonlyMap<string, ServerCatalog>, options: DocumentNodesOptions) {
    const { view, ledger } = options.approved ?? {};
    this.approved = view;
    const timing = { ttlMs: options.ttlMs, kernelHoldMs: options.kernelHoldMs, now: options.now, published: options.published };
    this.documents.set(
      SKILLS_JSON,
      new GeneratedDocument(
        () =>
          skillsJsonParts(
            [...catalogs.values()].map((catalog) => catalog.summary()),
            options.mountStatus(),
            view && ((label, uri) => view.approvalOf(label, uri)),
          ),
        { stepBytes: SKILLS_JSON_SIZE_STEP_BYTES, ...timing },
      ),
    );
    // status.json: the cheap health answer, small and independent of the catalogs' sizes.
    this.documents.set(
      STATUS_JSON,
      new GeneratedDocument(
        () => [
          renderStatusJson(
            [...catalogs.values()].map((catalog) => catalog.health()),
            options.mountStatus(),
            view && ((label) => view.serverApprovals(label)),
          ).slice(0, -1),
        ],
        { stepBytes: STATUS_JSON_SIZE_STEP_BYTES, ...timing },
      ),
    );
    if (view && ledger) {
      this.documents.set(
        APPROVED_SKILLS_JSON,
        new GeneratedDocument(() => [jsonText({ view: 'approved', approvals: { file: ledger.file, problem: ledger.problem ?? null }, servers: view.skills() })], {
          // Small, but grows by an entry per approval: the larger step lets most approvals show at once.
          stepBytes: SKILLS_JSON_SIZE_STEP_BYTES,
          ...timing,
        }),
      );
    }
  }

  /** Whether `relative` (from the mount's root) names one of the documents. */
  serves(relative: string): boolean {
    return this.documents.has(relative);
  }

  async stat(at: ViewPath): Promise<NodeStat> {
    const reported = await (await this.documentAt(at)).reported();
    return { kind: 'file', sizeBytes: reported.length, digest: reported.digest };
  }

  async list(at: ViewPath): Promise<string[]> {
    await this.documentAt(at);
    throw notADirectory(at);
  }

  async open(at: ViewPath): Promise<OpenedFile> {
    const rendering = await (await this.documentAt(at)).opened();
    return { bytes: rendering, digest: rendering.digest };
  }

  async xattrs(at: ViewPath): Promise<Record<string, string>> {
    await this.documentAt(at);
    return {};
  }

  cacheSeconds(): number {
    return LIVE_CACHE_SECONDS;
  }

  /** The document, once the approvals file was re-read: every document shows each skill's approval state as it is now. */
  private async documentAt(at: ViewPath): Promise<GeneratedDocument> {
    await this.approved?.refresh();
    const document = this.documents.get(at.relative);
    if (!document) throw new NotFoundError(`${at.path}: no such document`);
    return document;
  }
}
