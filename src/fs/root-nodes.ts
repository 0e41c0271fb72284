// The mount's root directory: a directory per server label the full view shows, the generated
// documents, and `_approved` when there are approvals. What lies below each name is another view's.
import { APPROVED_DIR, SKILLS_JSON, STATUS_JSON } from './mount-layout.js';
import { MOUNT_DIRECTORY, isADirectory, type NodeProvider, type NodeStat, type OpenedFile, type ViewPath } from './node-provider.js';

export interface RootNodesOptions {
  /** Labels whose skills are served only in the approved view: not listed here. */
  approvedOnly?: ReadonlySet<string> | undefined;
  /** Whether the mount has approvals, and so `_approved`. */
  approvals: boolean;
}

/** The root directory "/": only ever asked about itself. */
export class RootNodes implements NodeProvider {
  constructor(
    private readonly labels: readonly string[],
    private readonly options: RootNodesOptions,
  ) {}

  async stat(): Promise<NodeStat> {
    return MOUNT_DIRECTORY;
  }

  async list(): Promise<string[]> {
    const hidden = this.options.approvedOnly;
    const labels = hidden ? this.labels.filter((label) => !hidden.has(label)) : [...this.labels];
    return [...labels, SKILLS_JSON, STATUS_JSON, ...(this.options.approvals ? [APPROVED_DIR] : [])];
  }

  async open(at: ViewPath): Promise<OpenedFile> {
    throw isADirectory(at);
  }

  async xattrs(): Promise<Record<string, string>> {
    return {};
  }

  cacheSeconds(): undefined {
    return undefined;
  }
}
