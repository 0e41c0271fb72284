// A project lockfile read for linking or the approved view: each locked skill as an approval, where
// the configuration here names its server as the lock does and the policy in force allows it; each
// other one refused by name with the reason. A lockfile that cannot be used gives no approvals at
// all (the caller keeps what it has): never a partial set from a broken file.
import type { Approval } from '../approvals/approval-store.js';
import type { LabelledServer } from '../config/config.js';
import { escapeForLog } from '../format/escape.js';
import { errorMessage } from '../private-files.js';
import { approvalOfLocked } from './locked-skills.js';
import { describeIdentity, identityOf, LockfileError, lockedKey, readLockfile, sameIdentity, type Lockfile } from './lockfile.js';
import type { Policy } from './policy.js';

export interface LockedApprovals {
  /** The locked skills that hold here; undefined when the lockfile cannot be used. */
  approvals: Approval[] | undefined;
  /** Sentences: each skill refused and why, or why the lockfile cannot be used. */
  problems: string[];
}

/**
 * Reads `lockfile` (none: nothing is locked) and judges each entry against `servers` (the
 * configuration here, or why it could not be loaded) and `policy`, for `link` or the mount's approved
 * view. `read`: the lockfile as the caller read it already.
 */
export async function lockedApprovals(lockfile: string, servers: readonly LabelledServer[] | { problem: string }, policy: Policy, use: 'link' | 'view', read?: Lockfile): Promise<LockedApprovals> {
  let lock: Lockfile | undefined = read;
  try {
    lock ??= await readLockfile(lockfile);
  } catch (error) {
    if (!(error instanceof LockfileError)) throw error;
    return { approvals: undefined, problems: [`${error.message}: nothing changes here until it is fixed`] };
  }
  if (lock === undefined) return { approvals: [], problems: [] };
  if ('problem' in servers) return { approvals: undefined, problems: [`${lockfile}: the configuration here cannot be read to check the lock's servers (${escapeForLog(servers.problem)})`] };
  const approvals: Approval[] = [];
  const problems: string[] = [];
  for (const skill of lock.skills) {
    const refuse = (why: string) => problems.push(`${escapeForLog(lockedKey(skill))} is not linked: ${why}`);
    const identity = lock.servers[skill.server]!;
    const server = servers.find((candidate) => candidate.label === skill.server);
    if (server === undefined) {
      refuse(`the lock names server "${skill.server}" (${describeIdentity(identity)}) and the configuration here has no server "${skill.server}"`);
      continue;
    }
    if (!sameIdentity(identity, server.config)) {
      refuse(`the lock names server "${skill.server}" as ${describeIdentity(identity)}; the configuration here has another server by that label: ${describeIdentity(identityOf(server.config))}`);
      continue;
    }
    // The machine's policy wins over a project's lock: the skill and the grants the lock gives are judged as a person's would be.
    const judged = { path: skill.path, skillDigest: skill.skillDigest, resourcesDigest: skill.resourcesDigest };
    const refusal =
      (use === 'view' ? policy.checkApprovedView(server, judged) : policy.checkSkill(server, judged, 'link')) ??
      policy.checkGrants(server, { allowedTools: skill.grants.allowedTools !== null, exec: skill.grants.exec });
    if (refusal !== undefined) {
      refuse(refusal.message);
      continue;
    }
    approvals.push(approvalOfLocked(skill));
  }
  return { approvals, problems };
}

/** The configured servers, or why they could not be loaded (for lockedApprovals). */
export async function serversOrProblem(load: () => Promise<readonly LabelledServer[]>): Promise<readonly LabelledServer[] | { problem: string }> {
  try {
    return await load();
  } catch (error) {
    return { problem: errorMessage(error) };
  }
}
