// A person's approvals as the policy in force lets them count: for `link` (each refused approval
// named with the file and rule) and for the mount's approved view (a wrapper that hides what the
// policy refuses, logging each refusal once). Under a policy, a server the configuration does not
// name is one the policy cannot allow.
import type { ApprovalsSource } from '../approvals/approval-ledger.js';
import type { Approval } from '../approvals/approval-store.js';
import { uriToSegments } from '../catalog/uri-path.js';
import type { LabelledServer } from '../config/config.js';
import { escapeForLog } from '../format/escape.js';
import type { Log } from '../log.js';
import type { Policy, PolicyRefusal } from './policy.js';

/** What a policy says of one approval for `link` ('link') or the approved view ('view'); a sentence when it refuses. */
export function approvalRefusal(approval: Approval, servers: readonly LabelledServer[] | { problem: string }, policy: Policy, use: 'link' | 'view'): string | undefined {
  if (!policy.inForce) return undefined;
  const server = 'problem' in servers ? undefined : servers.find((candidate) => candidate.label === approval.label);
  if (server === undefined) return `a policy is in force and no configured server is labelled ${approval.label}`;
  const skill = { path: skillDirectoryOf(approval.skillUri), resourcesDigest: approval.resourcesDigest, skillDigest: approval.resources.find((resource) => resource.uri === approval.skillUri)?.digest };
  const refusal: PolicyRefusal | undefined =
    use === 'view' ? policy.checkApprovedView(server, skill) : policy.checkSkill(server, skill, 'link') ?? policy.checkGrants(server, { allowedTools: approval.allowedToolsApproved, exec: approval.execApproved });
  return refusal?.message;
}

/** The approvals `link` may link, and a sentence for each other one. */
export function permittedApprovals(approvals: readonly Approval[], servers: readonly LabelledServer[] | { problem: string }, policy: Policy): { approvals: Approval[]; problems: string[] } {
  const problems: string[] = [];
  const permitted = approvals.filter((approval) => {
    const refusal = approvalRefusal(approval, servers, policy, 'link');
    if (refusal !== undefined) problems.push(`${approval.label}/${escapeForLog(approval.name)} is not linked: ${refusal}`);
    return refusal === undefined;
  });
  return { approvals: permitted, problems };
}

/** The approvals source the approved view reads, less what the policy refuses to show there. */
export class PolicedApprovals implements ApprovalsSource {
  private readonly logged = new Set<string>();

  constructor(
    private readonly inner: ApprovalsSource,
    private readonly servers: readonly LabelledServer[],
    private readonly policy: Policy,
    private readonly log: Log,
  ) {}

  get file(): string {
    return this.inner.file;
  }
  get problem(): string | undefined {
    return this.inner.problem;
  }
  get version(): number {
    return this.inner.version;
  }
  get watched(): boolean {
    return this.inner.watched;
  }
  get keepsVersions(): boolean {
    return this.inner.keepsVersions;
  }
  onChange(listener: () => void): void {
    this.inner.onChange(listener);
  }
  refresh(force?: boolean): Promise<void> {
    return this.inner.refresh(force);
  }
  approval(label: string, skillUri: string): Approval | undefined {
    const approval = this.inner.approval(label, skillUri);
    return approval !== undefined && this.allowed(approval) ? approval : undefined;
  }
  approvalsOf(label: string): Iterable<Approval> {
    return [...this.inner.approvalsOf(label)].filter((approval) => this.allowed(approval));
  }
  all(): Approval[] {
    return this.inner.all().filter((approval) => this.allowed(approval));
  }
  revoke(approval: Approval, revokedAt: string): void {
    this.inner.revoke(approval, revokedAt);
  }

  private allowed(approval: Approval): boolean {
    const refusal = approvalRefusal(approval, this.servers, this.policy, 'view');
    if (refusal === undefined) return true;
    const key = `${approval.label}\0${approval.skillUri}\0${approval.resourcesDigest}`;
    if (!this.logged.has(key)) {
      this.logged.add(key);
      this.log(`approved view: ${approval.label}/${escapeForLog(approval.name)} not shown: ${refusal}`);
    }
    return false;
  }
}

function skillDirectoryOf(skillUri: string): string {
  const segments = uriToSegments(skillUri);
  return 'problem' in segments ? skillUri : segments.slice(0, -1).join('/');
}
