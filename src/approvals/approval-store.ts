// Persisted, content-bound skill approvals (SEP-2640 "Content-bound approval"), keyed by
// (server label, skill URI), in one JSON file in the user's config directory. Knows nothing of
// MCP, the catalog's state or the mount: it stores what a person approved and nothing else.
//
// Layout: <dir>/approvals.json (0600) in <dir> (0700), beside it <dir>/approvals.json.lock while a
// write is under way and .approvals.json.tmp-<pid>-<random> for the instant before a rename.
// Every change is a read-modify-write under the lock file, so two CLI invocations never lose each
// other's approvals; a file that cannot be read is an error, never an empty store (that would
// silently revoke every approval, and the next write would make it permanent).
import { constants, type Stats } from 'node:fs';
import { chmod, lstat, mkdir, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, SkillsMountError } from '../errors.js';
import { resourcesDigest } from '../catalog/resources-digest.js';
import { isValidLabel } from '../labels.js';
import { LockHeldError, releaseLock, tryLock } from '../lock-file.js';
import { currentUid, modeText, othersCanWrite, ownerProblem } from '../path-control.js';
import { errorCode, errorMessage, kindOf, lstatOrUndefined, writeAtomically } from '../private-files.js';

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
   * When a later entry with another resources set revoked it (ISO time), or null. A revoked
   * approval holds no more, even once the server serves the approved set again; approving anew
   * replaces it. Written by the daemon that saw the entry.
   */
  revokedAt: string | null;
}

/** What approve() takes: resourcesDigest is computed here, approvedAt defaults to now; a new approval is never revoked. */
export type ApprovalInput = Omit<Approval, 'resourcesDigest' | 'approvedAt' | 'revokedAt'> & { approvedAt?: string | undefined };

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
const LOCK_POLL_MIN_MS = 5;
const LOCK_POLL_MAX_MS = 100;
// A real approvals file is a few KiB per skill; anything past this is not read into memory.
const MAX_FILE_BYTES = 64 * 1024 * 1024;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK; // O_NONBLOCK: a FIFO must not hang open()

/** `$XDG_CONFIG_HOME/skills-mount/approvals.json` when that is an absolute path (the XDG rule), else `<home>/.config/skills-mount/approvals.json`. */
export function defaultApprovalsPath(env: Env, home: string): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg !== undefined && xdg !== '' && path.isAbsolute(xdg) ? xdg : path.join(home, '.config');
  return path.join(base, 'skills-mount', 'approvals.json');
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
      const dir = path.dirname(this.file);
      await ensurePrivateDirectory(dir);
      const lockPath = `${this.file}.lock`;
      const token = await acquireLock(lockPath, this.lockTimeoutMs);
      try {
        await removeOwnTemps(dir, path.basename(this.file));
        const approvals = await readApprovals(this.file);
        if (apply(approvals)) await writeAtomically(dir, path.basename(this.file), serialize(approvals), tempPrefix(path.basename(this.file)));
        this.approvals = approvals;
      } finally {
        await releaseLock(lockPath, token);
      }
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
    revokedAt: fields.revokedAt,
  });
}

/** Why `value` is not an approval, or undefined. With `withDigest` it must also carry a resourcesDigest matching its resources. */
function approvalProblem(value: unknown, withDigest: boolean): string | undefined {
  if (!isObject(value)) return 'not an object';
  const { label, skillUri, name, resources, approvedAt, allowedToolsApproved, allowedTools, revokedAt } = value;
  if (typeof label !== 'string' || !isValidLabel(label)) return `label ${JSON.stringify(label)} is not a server label`;
  if (typeof skillUri !== 'string' || skillUri === '' || skillUri.includes('\0')) return 'skillUri is not a URI';
  if (typeof name !== 'string' || name === '') return 'name is not a string';
  if (typeof approvedAt !== 'string' || Number.isNaN(Date.parse(approvedAt))) return 'approvedAt is not a time';
  if (typeof allowedToolsApproved !== 'boolean') return 'allowedToolsApproved is not a boolean';
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
  const refuse = (detail: string, cause?: unknown) => new ApprovalStoreError(`approvals file ${file}: ${detail}`, file, cause);
  await checkDirectory(path.dirname(file));
  let handle: FileHandle;
  try {
    handle = await open(file, READ_FLAGS);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return new Map();
    // O_NOFOLLOW refuses a symlink with ELOOP (EMLINK on FreeBSD).
    if (code === 'ELOOP' || code === 'EMLINK') throw refuse('is a symbolic link; refusing it (approvals decide what agents are shown: keep the real file here)');
    throw refuse(`cannot be opened (${errorMessage(error)})`, error);
  }
  let text: string;
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw refuse(`is ${kindOf(stats)}, not a regular file`);
    const foreign = ownerProblem(stats, currentUid());
    if (foreign !== undefined) throw refuse(`${foreign}; refusing approvals someone else wrote`);
    if (othersCanWrite(stats)) {
      throw refuse(`has mode ${modeText(stats.mode)}: other users can write it, so its approvals cannot be trusted; check its contents, then chmod 600 it`);
    }
    if (stats.size > MAX_FILE_BYTES) throw refuse(`is ${stats.size} bytes, more than an approvals file can be`);
    text = (await handle.readFile()).toString('utf8');
  } finally {
    await handle.close().catch(() => {});
  }
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

// ---- the lock ----

/** Takes the approvals lock, waiting (with backoff, up to timeoutMs) while a live process holds it. */
async function acquireLock(lockPath: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let pollMs = LOCK_POLL_MIN_MS;
  for (;;) {
    let taken;
    try {
      taken = await tryLock(lockPath);
    } catch (error) {
      throw new ApprovalStoreError(`approvals lock ${lockPath}: cannot be taken (${errorMessage(error)})`, lockPath, error);
    }
    if ('token' in taken) return taken.token;
    if (Date.now() >= deadline) {
      throw new ApprovalsLockedError(
        `approvals ${path.dirname(lockPath)}: ${taken.heldBy} has held the lock file ${lockPath} for over ${timeoutMs} ms (if no skills-mount is changing approvals, remove it)`,
        lockPath,
        taken.holder.pid,
      );
    }
    await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())));
    pollMs = Math.min(pollMs * 2, LOCK_POLL_MAX_MS);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---- files and directories ----

/**
 * An existing approvals directory must be a real directory of ours that others cannot write
 * (they could swap the file); a missing one is fine (nothing approved yet). Symlinked ancestors
 * are fine: only the store's own directory must be what it claims.
 */
async function checkDirectory(dir: string): Promise<Stats | undefined> {
  const stats = await lstatOrUndefined(dir);
  if (stats === undefined) return undefined;
  if (stats.isSymbolicLink()) throw new ApprovalStoreError(`approvals directory ${dir} is a symbolic link; refusing it (configure the real directory instead)`, dir);
  if (!stats.isDirectory()) throw new ApprovalStoreError(`approvals directory ${dir} exists and is not a directory`, dir);
  const foreign = ownerProblem(stats, currentUid());
  if (foreign !== undefined) throw new ApprovalStoreError(`approvals directory ${dir} ${foreign}`, dir);
  if (othersCanWrite(stats)) {
    throw new ApprovalStoreError(`approvals directory ${dir} has mode ${modeText(stats.mode)}: other users can replace its files; check approvals.json, then chmod 700 it`, dir);
  }
  return stats;
}

/** Makes `dir` (and missing parents) 0700, or checks the existing one and takes read and search from others. */
async function ensurePrivateDirectory(dir: string): Promise<void> {
  let stats = await checkDirectory(dir);
  if (stats === undefined) {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    stats = await checkDirectory(dir);
  }
  if (stats !== undefined && (stats.mode & 0o777) !== 0o700) await chmod(dir, 0o700);
}

function tempPrefix(name: string): string {
  return `.${name}.tmp-`;
}

/** Temp files left by a writer that crashed; called under the lock, so no live writer owns one. */
async function removeOwnTemps(dir: string, name: string): Promise<void> {
  const prefix = tempPrefix(name);
  for (const entry of await readdir(dir)) {
    if (entry.startsWith(prefix)) await rm(path.join(dir, entry), { recursive: true, force: true });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}


