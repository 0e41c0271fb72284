// Approvals by server label and skill URI, as a ledger holds them for the approved view: a
// person's approvals file, or a project's lock. Immutable: a ledger replaces its index whole.
import type { Approval } from './approval-store.js';

export class ApprovalIndex {
  static readonly EMPTY = new ApprovalIndex([]);
  private readonly byLabel = new Map<string, Map<string, Approval>>();

  constructor(approvals: Iterable<Approval>) {
    for (const approval of approvals) {
      let ofLabel = this.byLabel.get(approval.label);
      if (!ofLabel) this.byLabel.set(approval.label, (ofLabel = new Map()));
      ofLabel.set(approval.skillUri, approval);
    }
  }

  get size(): number {
    return this.byLabel.size;
  }

  approval(label: string, skillUri: string): Approval | undefined {
    return this.byLabel.get(label)?.get(skillUri);
  }

  /** The approvals of one server label. */
  approvalsOf(label: string): Iterable<Approval> {
    return this.byLabel.get(label)?.values() ?? [];
  }

  /** Every approval, of every label. */
  all(): Approval[] {
    return [...this.byLabel.values()].flatMap((approvals) => [...approvals.values()]);
  }
}
