// Persisted, content-bound skill approvals (SEP-2640 "Content-bound approval"), keyed by
// (server label, skill URI), in one JSON file in the user's config directory. Knows nothing of
// MCP, the catalog's state or the mount: it stores what a person approved and nothing else.
//
// Layout: <dir>/approvals.json (0600) in <dir> (0700), beside it <dir>/approvals.json.lock while a
// write is under way and .approvals.json.tmp-<pid>-<random> for the instant before a rename.
// Every change is a read-modify-write under the lock file, so two CLI invocations never lose each
// other's approvals; a file that cannot be read is an error, never an empty store (that would
// silently revoke every approval, and the next write would make it permanent).
import path from 'node:path';
import { ConfigError, SkillsMountError } from '../errors.js';
import { resourcesDigest } from '../catalog/resources-digest.js';
import { isValidLabel } from '../labels.js';
import { LockHeldError } from '../lock-file.js';
import { errorMessage } from '../private-files.js';
import { changePrivateFile, readPrivateFile, type PrivateFileTerms } from '../private-json-file.js';
import { appDir, platformPath } from '../user-dirs.js';

type Env = Readonly<Record<string, string | undefined>>;

/** One file of an approved resources set, as the entry advertised it at approval time. */
export interface ApprovedResource {
  uri: string;
  /** `sha256:<64 hex>`. */
  digest: string;
  sizeBytes: number;
}

/** What a person approved for one skill of one server. */
export interface Approval {
  /** Host-assigned server label: half of the skill's identity (a URI alone names no skill). */
  label: string;
  /** URI of the skill's SKILL.md: the other half. */
  skillUri: string;
  /** The skill's name as shown at approval time. */
  name: string;
  /** Every file of the entry's resources set, sorted by URI. */
  resources: readonly ApprovedResource[];
  /** resourcesDigest(resources): the same value skills.json reports for the set held now. */
  resourcesDigest: string;
  /** ISO time of the approval. */
  approvedAt: string;
  /** True when the person also granted the skill's `allowed-tools`. */
  allowedToolsApproved: boolean;
  /** The `allowed-tools` value as it was shown at approval time, or null when the skill had none. */
  allowedTools: string | null;
  /**
   * True when the person also let the skill's scripts run: in a linked entry (`skills-mount link`)
   * its files that start with `#!` are executable. False in files written before this grant existed.
   */
  execApproved: boolean;
  /**
   * When a later entry with another resources set revoked it (ISO time), or null. A revoked
   * approval holds no more, even once the server serves the approved set again; approving anew
   * replaces it. Written by the daemon that saw the entry.
   */
  revokedAt: string | null;
}

/** What approve() takes: resourcesDigest is computed here, approvedAt defaults to now; a new approval is never revoked. */
export type ApprovalInput = Omit<Approval, 'resourcesDigest' | 'approvedAt' | 'revokedAt' | 'execApproved'> & { approvedAt?: string | undefined; execApproved?: boolean | undefined };

export interface ApprovalStoreOptions {
  /** Clock for approvedAt; default the system clock. */
  now?: (() => Date) | undefined;
  /** How long a change waits for another writer's lock before ApprovalsLockedError; default 10 s. */
  lockTimeoutMs?: number | undefined;
}

/** The approvals file (or its directory) cannot be used: unreadable, corrupt, hostile or not ours. */
export class ApprovalStoreError extends SkillsMountError {
  override name = 'ApprovalStoreError';
  readonly code = 'APPROVAL_STORE';

  constructor(
    message: string,
    /** The file or directory at fault. */
    readonly file: string,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? {} : { cause });
  }
}

/** Another writer held the approvals lock for longer than lockTimeoutMs. */
export class ApprovalsLockedError extends LockHeldError {
  override name = 'ApprovalsLockedError';
  readonly code = 'APPROVALS_LOCKED';
}

const FILE_VERSION = 1;
const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;
const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
// A real approvals file is a few KiB per skill; anything past this is not read into memory.
const MAX_FILE_BYTES = 64 * 1024 * 1024;
const TERMS: PrivateFileTerms = {
  what: 'approvals',
  distrust: 'its approvals cannot be trusted',
  refuse: (message, file, cause) => new ApprovalStoreError(message, file, cause),
  locked: (message, lockPath, holder) => new ApprovalsLockedError(message, lockPath, holder.pid),
  maxBytes: MAX_FILE_BYTES,
};

/** `<config>/skills-mount/approvals.json` (user-dirs.ts: `$XDG_CONFIG_HOME` when absolute, else `~/.config`; `%APPDATA%` on Windows). */
export function defaultApprovalsPath(env: Env, home: string, platform: NodeJS.Platform = process.platform): string {
  return platformPath(platform).join(appDir('config', 'skills-mount', { env, home, platform }), 'approvals.json');
}

/**
 * The approvals of one file. get() and list() answer from the state read by load(), reload() or
 * the last change; every change re-reads the file under its lock, applies itself to what it read
 * and is on disk (fsynced, renamed, directory fsynced) before its promise resolves.
 */
export class ApprovalStore {
  /** By key(label, uri). */
  private approvals: Map<string, Approval>;
  /** Changes of this instance, one after another (the lock file serializes processes and other instances). */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    /** The approvals file. */
    readonly file: string,
    approvals: Map<string, Approval>,
    private readonly now: () => Date,
    private readonly lockTimeoutMs: number,
  ) {
    this.approvals = approvals;
  }

  /** Reads the file: missing is empty; corrupt, a symlink, not ours or writable by others is ApprovalStoreError. Creates nothing. */
  static async load(file: string, options: ApprovalStoreOptions = {}): Promise<ApprovalStore> {
    const absolute = path.resolve(file);
    const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
    if (!Number.isFinite(lockTimeoutMs) || lockTimeoutMs < 0) throw new ConfigError(`approvals: lockTimeoutMs must be a number >= 0, got ${String(lockTimeoutMs)}`);
    return new ApprovalStore(absolute, await readApprovals(absolute), options.now ?? (() => new Date()), lockTimeoutMs);
  }

  /** The approval of (label, skill URI), if any. */
  get(label: string, skillUri: string): Approval | undefined {
    return this.approvals.get(keyOf(label, skillUri));
  }

  /** Every approval, sorted by label then skill URI. */
  list(): Approval[] {
    return sortApprovals([...this.approvals.values()]);
  }

  /** Reads the file again (another process may have changed it). */
  async reload(): Promise<void> {
    await this.serialized(async () => {
      this.approvals = await readApprovals(this.file);
    });
  }

  /** Records an approval, replacing any for the same (label, skill URI); resolves with what was stored, once it is on disk. */
  async approve(input: ApprovalInput): Promise<Approval> {
    const approval = checkedInput(input, this.now);
    await this.change((approvals) => {
      approvals.set(keyOf(approval.label, approval.skillUri), approval);
      return true;
    });
    return approval;
  }

  /**
   * Marks the approval of (label, skill URI) revoked at `revokedAt`, if it is still the one
   * approved at `approvedAt` (not approved anew since) and not revoked already; true when it
   * marked it. Resolves once the mark is on disk.
   */
  async markRevoked(label: string, skillUri: string, approvedAt: string, revokedAt: string): Promise<boolean> {
    if (Number.isNaN(Date.parse(revokedAt))) throw new ConfigError(`approvals: revokedAt ${JSON.stringify(revokedAt)} is not a time`);
    let marked = false;
    await this.change((approvals) => {
      const key = keyOf(label, skillUri);
      const approval = approvals.get(key);
      if (!approval || approval.approvedAt !== approvedAt || approval.revokedAt !== null) return false;
      approvals.set(key, freezeApproval(approval.resources, { ...approval, revokedAt }));
      marked = true;
      return true;
    });
    return marked;
  }

  /** Removes the approval of (label, skill URI); true when there was one. Resolves once the removal is on disk. */
  async revoke(label: string, skillUri: string): Promise<boolean> {
    let removed = false;
    await this.change((approvals) => {
      removed = approvals.delete(keyOf(label, skillUri));
      return removed;
    });
    return removed;
  }

  /** Read-modify-write under the lock file; `apply` returns false when it changed nothing (no write). */
  private change(apply: (approvals: Map<string, Approval>) => boolean): Promise<void> {
    return this.serialized(async () => {
      let approvals: Map<string, Approval> | undefined;
      await changePrivateFile(this.file, TERMS, this.lockTimeoutMs, (text) => {
        approvals = parseApprovals(this.file, text);
        return apply(approvals) ? serialize(approvals) : undefined;
      });
      // On disk now (or unchanged): what this instance answers from.
      this.approvals = approvals!;
    });
  }

  private serialized<T>(run: () => Promise<T>): Promise<T> {
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => {});
    return result;
  }
}

// ---- the file's contents ----

function keyOf(label: string, skillUri: string): string {
  // NUL appears in neither a label nor a URI we accept, so the pair cannot be spelled two ways.
  return `${label}\0${skillUri}`;
}

function sortApprovals(approvals: Approval[]): Approval[] {
  return approvals.sort((a, b) => compare(a.label, b.label) || compare(a.skillUri, b.skillUri));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function serialize(approvals: Map<string, Approval>): string {
  return `${JSON.stringify({ version: FILE_VERSION, approvals: sortApprovals([...approvals.values()]) }, null, 2)}\n`;
}

/** The approval an input describes, checked; ConfigError says what is wrong with it. */
function checkedInput(input: ApprovalInput, now: () => Date): Approval {
  const problem = (detail: string) => new ConfigError(`approval of ${JSON.stringify(input.skillUri)} on ${JSON.stringify(input.label)}: ${detail}`);
  const approvedAt = input.approvedAt ?? now().toISOString();
  const candidate = {
    label: input.label,
    skillUri: input.skillUri,
    name: input.name,
    resources: input.resources,
    approvedAt,
    allowedToolsApproved: input.allowedToolsApproved,
    allowedTools: input.allowedTools,
    execApproved: input.execApproved ?? false,
    revokedAt: null,
  };
  const shapeProblem = approvalProblem(candidate, false);
  if (shapeProblem !== undefined) throw problem(shapeProblem);
  return freezeApproval(candidate.resources, candidate);
}

/** A frozen approval with its resources sorted and copied, and its resourcesDigest computed. */
function freezeApproval(resources: readonly ApprovedResource[], fields: Omit<Approval, 'resources' | 'resourcesDigest'>): Approval {
  const sorted = resources.map((resource) => Object.freeze({ uri: resource.uri, digest: resource.digest, sizeBytes: resource.sizeBytes })).sort((a, b) => compare(a.uri, b.uri));
  return Object.freeze({
    label: fields.label,
    skillUri: fields.skillUri,
    name: fields.name,
    resources: Object.freeze(sorted),
    resourcesDigest: resourcesDigest(sorted),
    approvedAt: fields.approvedAt,
    allowedToolsApproved: fields.allowedToolsApproved,
    allowedTools: fields.allowedTools,
    execApproved: fields.execApproved ?? false,
    revokedAt: fields.revokedAt,
  });
}

/** Why `value` is not an approval, or undefined. With `withDigest` it must also carry a resourcesDigest matching its resources. */
function approvalProblem(value: unknown, withDigest: boolean): string | undefined {
  if (!isObject(value)) return 'not an object';
  const { label, skillUri, name, resources, approvedAt, allowedToolsApproved, allowedTools, execApproved, revokedAt } = value;
  if (typeof label !== 'string' || !isValidLabel(label)) return `label ${JSON.stringify(label)} is not a server label`;
  if (typeof skillUri !== 'string' || skillUri === '' || skillUri.includes('\0')) return 'skillUri is not a URI';
  if (typeof name !== 'string' || name === '') return 'name is not a string';
  if (typeof approvedAt !== 'string' || Number.isNaN(Date.parse(approvedAt))) return 'approvedAt is not a time';
  if (typeof allowedToolsApproved !== 'boolean') return 'allowedToolsApproved is not a boolean';
  // Absent in files written before the grant existed: not granted.
  if (execApproved !== undefined && typeof execApproved !== 'boolean') return 'execApproved is not a boolean';
  // Absent in files written before revocation was recorded: not revoked.
  if (revokedAt !== undefined && revokedAt !== null && (typeof revokedAt !== 'string' || Number.isNaN(Date.parse(revokedAt)))) return 'revokedAt is neither a time nor null';
  if (allowedTools !== null && typeof allowedTools !== 'string') return 'allowedTools is neither a string nor null';
  // A grant of nothing is a record that says more than the person saw.
  if (allowedToolsApproved && allowedTools === null) return 'allowedToolsApproved is true but there was no allowed-tools value to approve';
  if (!Array.isArray(resources) || resources.length === 0) return 'resources is not a non-empty list';
  const seen = new Set<string>();
  for (const resource of resources as unknown[]) {
    if (!isObject(resource)) return 'a resource is not an object';
    const { uri, digest, sizeBytes } = resource;
    if (typeof uri !== 'string' || uri === '') return 'a resource has no uri';
    if (seen.has(uri)) return `resources list ${JSON.stringify(uri)} twice`;
    seen.add(uri);
    if (typeof digest !== 'string' || !DIGEST_PATTERN.test(digest)) return `resource ${JSON.stringify(uri)}: digest is not sha256:<64 hex>`;
    if (typeof sizeBytes !== 'number' || !Number.isSafeInteger(sizeBytes) || sizeBytes < 0) return `resource ${JSON.stringify(uri)}: sizeBytes is not a byte count`;
  }
  if (!seen.has(skillUri)) return "resources do not include the skill's own SKILL.md";
  if (withDigest) {
    const expected = resourcesDigest(resources as ApprovedResource[]);
    if (value.resourcesDigest !== expected) return `resourcesDigest ${JSON.stringify(value.resourcesDigest)} does not match its resources (${expected})`;
  }
  return undefined;
}

/** The approvals in `file`: empty when it does not exist, ApprovalStoreError when it cannot be trusted or parsed. */
async function readApprovals(file: string): Promise<Map<string, Approval>> {
  return parseApprovals(file, await readPrivateFile(file, TERMS));
}

/** The approvals a file's text holds (undefined: no file, none). */
function parseApprovals(file: string, text: string | undefined): Map<string, Approval> {
  const refuse = (detail: string, cause?: unknown) => new ApprovalStoreError(`approvals file ${file}: ${detail}`, file, cause);
  if (text === undefined) return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw refuse(`is not valid JSON (${errorMessage(error)}); fix or remove it (removing it revokes every approval)`, error);
  }
  const shape = (detail: string) => refuse(`is not an approvals file: ${detail}; fix or remove it (removing it revokes every approval)`);
  if (!isObject(parsed)) throw shape('not a JSON object');
  // A newer format is not ours to read, nor to overwrite with an older one.
  if (parsed.version !== FILE_VERSION) throw shape(`version ${JSON.stringify(parsed.version)}, expected ${FILE_VERSION}`);
  if (!Array.isArray(parsed.approvals)) throw shape('no approvals list');
  const approvals = new Map<string, Approval>();
  (parsed.approvals as unknown[]).forEach((value, index) => {
    const problem = approvalProblem(value, true);
    if (problem !== undefined) throw shape(`approvals[${index}]: ${problem}`);
    const approval = value as Approval;
    const key = keyOf(approval.label, approval.skillUri);
    if (approvals.has(key)) throw shape(`approvals[${index}]: a second approval of ${JSON.stringify(approval.skillUri)} on ${approval.label}`);
    approvals.set(key, freezeApproval(approval.resources, { ...approval, revokedAt: approval.revokedAt ?? null }));
  });
  return approvals;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}


