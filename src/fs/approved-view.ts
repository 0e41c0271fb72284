// What the approvals imply for the mount: the approved view's tree (`_approved/<label>/...`:
// the files of each skill whose current resources set equals the approved one, and nothing
// else), its skills.json, each skill's approval state for skills.json and status.json, and the
// per-skill records `skills-mount approve` shows a person. A lock's version is shown only when this
// machine can serve it whole (locked-content.ts judges, as for `link`). No FUSE, no I/O but the
// ledger's and that judgment's (a copy held in the disk cache is read to be verified).
import { approvalState, NestedSkills, permissionFields, type ApprovalState, type FileDifference } from '../approvals/approval-check.js';
import type { ApprovalsSource } from '../approvals/approval-ledger.js';
import type { Approval } from '../approvals/approval-store.js';
import { resourcesDigest } from '../catalog/resources-digest.js';
import type { ServerCatalog } from '../catalog/server-catalog.js';
import { skillDirectory, type ManifestFile, type SkillRecord } from '../catalog/skill-record.js';
import { uriToSegments } from '../catalog/uri-path.js';
import { escapeForLog } from '../format/escape.js';
import type { Log } from '../log.js';
import { lockedVersionProblem } from '../team/locked-content.js';
import { APPROVED_DIR, directoryOfInspectName, inspectFileName } from './mount-layout.js';

/** A file of the approved view: served only while the catalog serves exactly these bytes. */
export interface ApprovedFile {
  uri: string;
  digest: string;
  sizeBytes: number;
}

export type ApprovedNode = { kind: 'directory'; children: string[] } | { kind: 'file'; file: ApprovedFile };

/** A skill of the approved view's skills.json. */
export interface ApprovedSkill {
  name: string;
  description: string;
  uri: string;
  /** Its directory relative to the mountpoint, inside the approved view. */
  path: string;
  resourcesDigest: string;
  approvedAt: string;
  /** The skill's `allowed-tools` as approved, or null when it has none. */
  allowedTools: string | null;
  /** Whether the person granted `allowed-tools` too; a harness honors the field only when true. */
  allowedToolsApproved: boolean;
}

/** A skill's approval state as skills.json shows it (only for skills that have an approval). */
export interface SkillApproval {
  state: 'approved' | 'changed-since-approval' | 'cannot-approve';
  approvedAt: string;
  allowedToolsApproved: boolean;
  /** With changed-since-approval: the files added, removed or changed since, by path under the label where known (none when the server went back to the approved set). */
  differing?: Array<FileDifference & { path?: string }>;
  /** With changed-since-approval: when a later entry with another set revoked the approval. */
  revokedAt?: string;
  /** With cannot-approve: why no approval can hold (its resources became "dynamic", it is declined or rejected). */
  reason?: string;
}

/** status.json's approvals figures for one server. */
export interface ServerApprovals {
  approved: number;
  changedSinceApproval: number;
  /** The skills changed since approval (at most MAX_CHANGED_SHOWN), with what differs. */
  changed: Array<{ name: string; path: string; differing: Array<FileDifference & { path?: string }> }>;
  /** A lock's skills left out of the approved view, because this machine cannot serve every file of the locked version. */
  notShown?: Array<{ name: string; path: string; reason: string }>;
}

const MAX_CHANGED_SHOWN = 20;

interface LabelTree {
  version: number;
  /** The count of lock judgments settled when the tree was built. */
  judged: number;
  /** What the tree was built from, per approval: the held entry and its rejection. Rebuilt when any differs. */
  basis: Array<SkillRecord | undefined>;
  rejections: Array<string | undefined>;
  nodes: Map<string, ApprovedNode>;
  /** The record is undefined for a kept version whose skill the server no longer lists. */
  skills: Array<{ record: SkillRecord | undefined; approval: Approval }>;
}

/** Whether this machine can serve a locked version whole, judged against one held entry (and its rejection). */
interface LockJudgment {
  record: SkillRecord | undefined;
  rejection: string | undefined;
  /** Why it cannot (undefined: it can), once settled. */
  problem: Promise<string | undefined>;
  settled?: { problem: string | undefined };
}

export class ApprovedView {
  private readonly trees = new Map<string, LabelTree>();
  /** Per locked approval, the latest judgment of whether its version can be served whole here. */
  private readonly judgments = new WeakMap<Approval, LockJudgment>();
  private judgedCount = 0;
  /** The reason last logged per locked skill (label NUL URI), so each change is logged once. */
  private readonly loggedProblems = new Map<string, string>();
  /** Per label: its skills as NestedSkills, at the catalog's skillRecordsVersion they were made at. */
  private readonly nestedByLabel = new Map<string, { version: number; nested: NestedSkills }>();

  constructor(
    private readonly catalogs: ReadonlyMap<string, ServerCatalog>,
    private readonly ledger: ApprovalsSource,
    private readonly log: Log = () => {},
  ) {}

  /** True while the ledger watches the approvals file, so every change is reported as it happens: the kernel may hold the view for long. */
  get changesReported(): boolean {
    return this.ledger.watched;
  }

  /** True when the approvals are a lock's: its versions stay served when a server moves on. */
  get keepsVersions(): boolean {
    return this.ledger.keepsVersions;
  }

  /** The approvals' source, for the bytes of a kept version it holds (a locked SKILL.md). */
  get source(): ApprovalsSource {
    return this.ledger;
  }

  /**
   * Re-reads the approvals file if it changed (at most every 100 ms), and judges each locked
   * version whose entry changed since; call before answering from the view.
   */
  async refresh(): Promise<void> {
    await this.ledger.refresh();
    if (this.ledger.keepsVersions) await this.judgeLocked();
  }

  /**
   * Judges the label's approvals against what its server serves now, and records each one a
   * later entry revoked: called when the catalog changes, so a revocation is recorded when the
   * daemon learns of the change (and what depends on it, the linked entries, follows), not when
   * a reader next looks at the view.
   */
  judge(label: string): void {
    // A lock's version: whether it can still be served whole is judged (and logged) now.
    if (this.ledger.keepsVersions) void this.judgeLocked().catch((error: unknown) => this.log(`lock: cannot judge the locked versions of ${label}: ${(error as Error).message}`));
    else this.treeOf(label);
  }

  /** The node at `path` under `_approved/<label>/` ("" is the label directory), or undefined. */
  node(label: string, path: string): ApprovedNode | undefined {
    return this.treeOf(label)?.nodes.get(path);
  }

  /** The skills shown in the approved view, by label in catalog order, each sorted by path. */
  skills(): Array<{ label: string; skills: ApprovedSkill[] }> {
    return [...this.catalogs.keys()].map((label) => ({
      label,
      skills: (this.treeOf(label)?.skills ?? []).map(({ record, approval }) => ({
        name: approval.name,
        description: record?.description ?? '',
        uri: approval.skillUri,
        path: `${APPROVED_DIR}/${label}/${record === undefined ? directoryOfUri(approval.skillUri) : skillDirectory(record)}`,
        resourcesDigest: approval.resourcesDigest,
        approvedAt: approval.approvedAt,
        allowedTools: approval.allowedTools,
        allowedToolsApproved: approval.allowedToolsApproved,
      })),
    }));
  }

  /** The approval state of a skill that has an approval; undefined (cheaply) for the rest. */
  approvalOf(label: string, skillUri: string): SkillApproval | undefined {
    const approval = this.ledger.approval(label, skillUri);
    const record = approval && this.catalogs.get(label)?.skillRecord(skillUri);
    if (!approval || !record) return undefined;
    const state = this.stateOf(label, record);
    const base = { approvedAt: approval.approvedAt, allowedToolsApproved: approval.allowedToolsApproved };
    switch (state.state) {
      case 'approved':
        return { state: 'approved', ...base };
      case 'changed-since-approval':
        return { state: 'changed-since-approval', ...base, differing: withPaths(state.differing), ...revokedAtOf(state) };
      case 'cannot-approve':
        return { state: 'cannot-approve', ...base, reason: state.reason };
      case 'not-approved':
        return undefined;
    }
  }

  /** The approvals figures of one server, or undefined when it has no approval. */
  serverApprovals(label: string): ServerApprovals | undefined {
    const catalog = this.catalogs.get(label);
    if (!catalog) return undefined;
    const approvals = [...this.ledger.approvalsOf(label)];
    if (approvals.length === 0) return undefined;
    let approved = 0;
    let changedSinceApproval = 0;
    const changed: ServerApprovals['changed'] = [];
    const notShown: NonNullable<ServerApprovals['notShown']> = [];
    for (const approval of approvals) {
      const problem = this.ledger.keepsVersions ? this.lockProblem(label, approval) : undefined;
      if (problem !== undefined) notShown.push({ name: approval.name, path: directoryOfUri(approval.skillUri), reason: problem });
      const record = catalog.skillRecord(approval.skillUri);
      if (!record) continue;
      const state = this.stateOf(label, record);
      if (state.state === 'approved') approved += 1;
      else if (state.state === 'changed-since-approval') {
        changedSinceApproval += 1;
        if (changed.length < MAX_CHANGED_SHOWN) changed.push({ name: record.name, path: skillDirectory(record), differing: withPaths(state.differing) });
      }
    }
    return { approved, changedSinceApproval, changed, ...(notShown.length > 0 ? { notShown } : {}) };
  }

  /** What `skills-mount approve` shows a person and stores: the skill at `directory` under `label` as held now. */
  inspect(label: string, directory: string): InspectRecord | undefined {
    const catalog = this.catalogs.get(label);
    const record = catalog?.skillAtDirectory(directory);
    if (!catalog || !record) return undefined;
    const state = this.stateOf(label, record);
    // approvalState puts why a skill cannot be approved (rejected, dynamic, unlisted, declined) first.
    const problem = state.state === 'cannot-approve' ? state.reason : undefined;
    const approval = this.ledger.approval(label, record.uri);
    return {
      label,
      path: directory,
      uri: record.uri,
      name: record.name,
      description: record.description,
      frontmatter: record.frontmatter,
      permissionFields: permissionFields(record.frontmatter),
      files: Array.isArray(record.files) ? record.files.map((file) => ({ path: file.path, uri: file.uri, digest: file.digest, sizeBytes: file.sizeBytes })) : record.files,
      resourcesDigest: Array.isArray(record.files) ? resourcesDigest(record.files) : null,
      nestedSkills: this.nestedSkillsIn(label).of(directory),
      cannotApprove: problem ?? null,
      approval:
        approval === undefined
          ? null
          : {
              state: state.state,
              approvedAt: approval.approvedAt,
              allowedToolsApproved: approval.allowedToolsApproved,
              ...(state.state === 'changed-since-approval' ? { differing: withPaths(state.differing), ...revokedAtOf(state) } : {}),
            },
    };
  }

  /** The record `.inspect/<label>/<name>` names (see inspectFileName), if that skill is held. */
  recordNamed(label: string, name: string): InspectRecord | undefined {
    const spelled = directoryOfInspectName(name);
    const directory = spelled === 'digest' ? this.skillDirectories(label).find((candidate) => inspectFileName(candidate) === name) : spelled;
    return directory === undefined ? undefined : this.inspect(label, directory);
  }

  /** The names of every held skill's record under `.inspect/<label>/`. */
  recordNames(label: string): string[] {
    return this.skillDirectories(label).map(inspectFileName);
  }

  /** The label's skills as NestedSkills, made again only when its entries changed. */
  private nestedSkillsIn(label: string): NestedSkills {
    const version = this.catalogs.get(label)?.skillRecordsVersion ?? -1;
    let held = this.nestedByLabel.get(label);
    if (held === undefined || held.version !== version) {
      held = { version, nested: new NestedSkills(this.skillDirectories(label)) };
      this.nestedByLabel.set(label, held);
    }
    return held.nested;
  }

  private skillDirectories(label: string): string[] {
    const catalog = this.catalogs.get(label);
    return catalog ? [...catalog.skillRecords()].map(skillDirectory) : [];
  }

  /**
   * Whether the skill's approval holds for the entry held now. Any later entry with another set
   * revokes it (SEP-2640): seen here either as a set that differs now, or as an entry that
   * changed after the approval even if it is back to the approved set. The revocation is
   * written to the approvals file, so it outlives this daemon.
   */
  private stateOf(label: string, record: SkillRecord): ApprovalState {
    const catalog = this.catalogs.get(label);
    const rejected = catalog?.rejection(record.uri);
    if (rejected !== undefined) return { state: 'cannot-approve', reason: `its SKILL.md failed verification: ${rejected}` };
    const approval = this.ledger.approval(label, record.uri);
    const state = approvalState(approval, record);
    // A lock's version is its own: what the server serves now shows as a change, but revokes nothing.
    if (this.ledger.keepsVersions) return state;
    if (!approval || approval.revokedAt !== null || (state.state !== 'approved' && state.state !== 'changed-since-approval')) return state;
    const changedAtMs = catalog?.entryChangedAt(record.uri);
    const changedAfter = changedAtMs !== undefined && changedAtMs > Date.parse(approval.approvedAt);
    if (state.state === 'approved' && !changedAfter) return state;
    const revokedAt = new Date(changedAfter ? changedAtMs : Date.now()).toISOString();
    this.ledger.revoke(approval, revokedAt);
    return { state: 'changed-since-approval', differing: state.state === 'changed-since-approval' ? state.differing : [], revokedAt };
  }

  /**
   * Why the locked `approval` is left out of the view: its judgment against the entry held now,
   * or, until that has settled, that it is still being judged (refresh awaits every judgment).
   */
  private lockProblem(label: string, approval: Approval): string | undefined {
    const judgment = this.judgments.get(approval);
    const catalog = this.catalogs.get(label);
    const current = judgment !== undefined && judgment.record === catalog?.skillRecord(approval.skillUri) && judgment.rejection === catalog?.rejection(approval.skillUri);
    if (!current || judgment.settled === undefined) return 'not yet judged';
    return judgment.settled.problem;
  }

  /** Judges every locked version whose held entry changed since its last judgment (locked-content.ts decides), and waits for all under way. */
  private async judgeLocked(): Promise<void> {
    const pending: Array<Promise<unknown>> = [];
    for (const [label, catalog] of this.catalogs) {
      for (const approval of this.ledger.approvalsOf(label)) {
        const record = catalog.skillRecord(approval.skillUri);
        const rejection = catalog.rejection(approval.skillUri);
        let judgment = this.judgments.get(approval);
        if (judgment === undefined || judgment.record !== record || judgment.rejection !== rejection) {
          // A judgment that fails leaves the skill out, saying why.
          const problem = lockedVersionProblem(catalog, approval, this.ledger).catch((error: unknown) => `${label}: cannot tell whether it can be served: ${(error as Error).message}`);
          const made: LockJudgment = (judgment = { record, rejection, problem });
          this.judgments.set(approval, made);
          void problem.then((settled) => {
            made.settled = { problem: settled };
            if (this.judgments.get(approval) === made) this.judged(label, approval, settled);
          });
        }
        if (judgment.settled === undefined) pending.push(judgment.problem);
      }
    }
    await Promise.all(pending);
  }

  /** A settled judgment: the trees are built anew, and a locked skill left out (or shown again) is logged, with link's reason. */
  private judged(label: string, approval: Approval, problem: string | undefined): void {
    this.judgedCount += 1;
    const key = `${label}\0${approval.skillUri}`;
    const logged = this.loggedProblems.get(key);
    if (problem === logged) return;
    const skill = `${label}/${escapeForLog(approval.name)}`;
    if (problem === undefined) {
      this.loggedProblems.delete(key);
      this.log(`lock: ${skill} is shown in ${APPROVED_DIR} again: every file of its locked version can be served`);
    } else {
      this.loggedProblems.set(key, problem);
      this.log(`lock: ${skill} is not shown in ${APPROVED_DIR}: ${escapeForLog(problem)}`);
    }
  }

  /** The label's approved tree, rebuilt only when the approvals or one of their skills' entries changed. */
  private treeOf(label: string): LabelTree | undefined {
    const catalog = this.catalogs.get(label);
    if (!catalog) return undefined;
    const approvals = [...this.ledger.approvalsOf(label)];
    const basis = approvals.map((approval) => catalog.skillRecord(approval.skillUri));
    const rejections = approvals.map((approval) => catalog.rejection(approval.skillUri));
    const known = this.trees.get(label);
    if (known && known.version === this.ledger.version && known.judged === this.judgedCount && sameItems(known.basis, basis) && sameItems(known.rejections, rejections)) return known;
    const nodes = new Map<string, ApprovedNode>([['', { kind: 'directory', children: [] }]]);
    const skills: LabelTree['skills'] = [];
    for (const [index, approval] of approvals.entries()) {
      const record = basis[index];
      if (this.ledger.keepsVersions) {
        // The locked files, whatever the server lists now: shown only when every one can be served, from what this machine verified before when it moved on.
        if (this.lockProblem(label, approval) !== undefined) continue;
        skills.push({ record, approval });
        for (const file of lockedFiles(approval)) addFile(nodes, file);
        continue;
      }
      if (!record || this.stateOf(label, record).state !== 'approved') continue;
      skills.push({ record, approval });
      for (const file of record.files as ManifestFile[]) addFile(nodes, file);
    }
    skills.sort((a, b) => (a.approval.skillUri < b.approval.skillUri ? -1 : a.approval.skillUri > b.approval.skillUri ? 1 : 0));
    const tree = { version: this.ledger.version, judged: this.judgedCount, basis, rejections, nodes, skills };
    this.trees.set(label, tree);
    return tree;
  }
}

/** A skill as `skills-mount approve` reads it from `.inspect/<label>/<name>`. */
export interface InspectRecord {
  label: string;
  /** The skill directory under the label. */
  path: string;
  uri: string;
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  permissionFields: ReturnType<typeof permissionFields>;
  files: Array<{ path: string; uri: string; digest: string; sizeBytes: number }> | 'dynamic' | 'unlisted';
  resourcesDigest: string | null;
  /** Skill directories nested in this one: an approval of this skill covers none of them. */
  nestedSkills: string[];
  /** Why it cannot be approved, or null. */
  cannotApprove: string | null;
  approval: { state: ApprovalState['state']; approvedAt: string; allowedToolsApproved: boolean; differing?: Array<FileDifference & { path?: string }>; revokedAt?: string } | null;
}

/** A locked approval's files with their paths under the label (from their URIs). */
function lockedFiles(approval: Approval): Array<Pick<ManifestFile, 'path' | 'uri' | 'digest' | 'sizeBytes'>> {
  return approval.resources.flatMap((resource) => {
    const segments = uriToSegments(resource.uri);
    return 'problem' in segments ? [] : [{ path: segments.join('/'), uri: resource.uri, digest: resource.digest, sizeBytes: resource.sizeBytes }];
  });
}

/** The skill directory of a SKILL.md URI, under the label. */
function directoryOfUri(skillUri: string): string {
  const segments = uriToSegments(skillUri);
  return 'problem' in segments ? '' : segments.slice(0, -1).join('/');
}

function addFile(nodes: Map<string, ApprovedNode>, file: Pick<ManifestFile, 'path' | 'uri' | 'digest' | 'sizeBytes'>): void {
  if (nodes.has(file.path)) return;
  nodes.set(file.path, { kind: 'file', file: { uri: file.uri, digest: file.digest, sizeBytes: file.sizeBytes } });
  let child = file.path;
  for (;;) {
    const slash = child.lastIndexOf('/');
    const parent = slash === -1 ? '' : child.slice(0, slash);
    const name = slash === -1 ? child : child.slice(slash + 1);
    let directory = nodes.get(parent);
    const existed = directory !== undefined;
    if (!directory) nodes.set(parent, (directory = { kind: 'directory', children: [] }));
    // The namespace already refused a file where a directory must be: a directory wins here.
    if (directory.kind === 'directory' && !directory.children.includes(name)) directory.children.push(name);
    if (existed || parent === '') return;
    child = parent;
  }
}

function revokedAtOf(state: ApprovalState): { revokedAt?: string } {
  return 'revokedAt' in state && state.revokedAt !== undefined ? { revokedAt: state.revokedAt } : {};
}

/** Each difference with its path under the label: a removed file's too, from its URI. */
function withPaths(differing: readonly FileDifference[]): Array<FileDifference & { path?: string }> {
  return differing.map((difference) => {
    const segments = uriToSegments(difference.uri);
    return 'problem' in segments ? { ...difference } : { ...difference, path: segments.join('/') };
  });
}

function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}
