// Where `approve` and `revoke` get the skill a PATH names: the `.inspect/<label>/` record as a
// running mount serves it, or as the same filesystem core serves it in this process. The
// commands show, ask and store the same way whichever it is; only this seam differs.
import { SkillsMountError } from '../errors.js';
import type { Approval } from '../approvals/approval-store.js';
import type { InspectRecord } from '../fs/approved-view.js';

/** The skill a PATH argument names. */
export interface SkillLocation {
  label: string;
  /** The skill directory under the label. */
  directory: string;
  /** Where it was read, for the person: `on MOUNTPOINT (server "docs")`, or the servers this command started. */
  where: string;
}

/** A skill found, with its record as held now, and what to say once the approvals file changed. */
export interface FoundSkill {
  location: SkillLocation;
  record: InspectRecord;
  /** The skill's SKILL.md as served (verified), or why it cannot be read now: approve reads its frontmatter as other YAML readers would. */
  skillMd(): Promise<{ text: string } | { problem: string }>;
  /** Once `approval` is stored: where it now shows (waiting for a mount's approved view, at most a few seconds), for the summary line. */
  whenApproved(approval: Approval): Promise<string>;
  /** Once the approval is removed: the same for its absence. */
  whenRevoked(): Promise<string>;
}

/** Finds the skills PATH arguments name. */
export interface SkillRecords {
  /** The skill `given` names; SkillPathError says why there is none. */
  find(given: string): Promise<FoundSkill>;
  /** Stops what finding needed (servers started in this process). */
  close(): Promise<void>;
}

/** The failure of one PATH: the others are still handled, and the command exits 1. */
export class SkillPathError extends SkillsMountError {
  override name = 'SkillPathError';
  readonly code = 'APPROVE_PATH';

  constructor(
    message: string,
    /** 'unreachable' when the skill's server could not be asked, or is not configured: not the skill's fault. */
    readonly reason: 'unreachable' | 'other' = 'other',
  ) {
    super(message);
  }
}
