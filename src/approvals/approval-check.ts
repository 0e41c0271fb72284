// Whether a persisted approval still covers the skill a server advertises now (SEP-2640
// "Content-bound approval"), why a skill cannot be approved at all, and what an approval prompt
// must call out. Pure: no I/O, no store; the caller looks the approval up by (label, skill URI).
import { ConfigError } from '../errors.js';
import type { FrontmatterReading } from '../format/frontmatter-readings.js';
import type { Approval, ApprovalInput, ApprovedResource } from './approval-store.js';

/** One advertised file, as a ManifestFile (src/catalog/skill-record.ts) carries it. */
export interface AdvertisedFile {
  uri: string;
  digest: string;
  sizeBytes: number;
}

/** The skill as advertised now: a SkillRecord fits. */
export interface ApprovalSubject {
  /** URI of the skill's SKILL.md; an approval of any other URI (an enclosing skill's) does not cover it. */
  uri: string;
  files: readonly AdvertisedFile[] | 'dynamic' | 'unlisted';
  /** Set when the mount declines the skill (over the limits, hidden by --no-dynamic). */
  declined?: string | undefined;
}

export interface FileDifference {
  uri: string;
  change: 'added' | 'removed' | 'changed';
}

export type ApprovalState =
  | { state: 'approved' }
  | { state: 'not-approved' }
  | { state: 'changed-since-approval'; differing: FileDifference[]; revokedAt?: string }
  | { state: 'cannot-approve'; reason: string };

/** A frontmatter field that asks for more than reading: shown at approval time, never honored unapproved. */
export interface PermissionField {
  field: string;
  /** What honoring the field would do on the host. */
  effect: 'tool-permission' | 'code-execution';
  /** The value for display: a string as written, a list joined by spaces, anything else as JSON. Server text: the sink escapes it. */
  value: string;
}

/**
 * The frontmatter fields SEP-2640's Security Considerations name: `allowed-tools` ("No implicit
 * permission grants", the Agent Skills field that widens tool permissions) and `hooks` ("No
 * implicit local execution": declarative fields the host parses that run code). Names are exact:
 * YAML keys are case-sensitive and a host honors only the spelling it knows.
 */
export const PERMISSION_FIELDS: ReadonlyArray<{ field: string; effect: PermissionField['effect'] }> = Object.freeze([
  { field: 'allowed-tools', effect: 'tool-permission' },
  { field: 'hooks', effect: 'code-execution' },
]);

/**
 * The file extensions that make a file look like a script to run (shell, Python, JavaScript and
 * TypeScript, Ruby, Perl, PHP, PowerShell). Only for the approval prompt: what an exec grant
 * makes executable is decided by the bytes (`#!`), never by the name.
 */
export const SCRIPT_EXTENSIONS: readonly string[] = Object.freeze(['.sh', '.bash', '.zsh', '.py', '.js', '.mjs', '.cjs', '.ts', '.rb', '.pl', '.php', '.ps1']);

/** Whether a file of a skill (its path relative to the skill directory) looks like a script: under a `scripts/` directory, or a script extension. */
export function looksLikeScript(relativePath: string): boolean {
  const segments = relativePath.split('/');
  const name = segments.at(-1)!.toLowerCase();
  const dot = name.lastIndexOf('.');
  return segments.slice(0, -1).includes('scripts') || (dot > 0 && SCRIPT_EXTENSIONS.includes(name.slice(dot)));
}

/** Whether `approval` (the one stored for this label and the subject's URI) covers the skill as advertised now. */
export function approvalState(approval: Approval | undefined, current: ApprovalSubject): ApprovalState {
  const problem = approvalProblem(current);
  // Checked before the approval: a persisted approval never covers whatever a dynamic skill serves now.
  if (problem !== undefined) return { state: 'cannot-approve', reason: problem };
  if (approval === undefined || approval.skillUri !== current.uri) return { state: 'not-approved' };
  const differing = differences(approval.resources, current.files as readonly AdvertisedFile[]);
  // Revoked by a later entry with another set: it stays revoked when the set comes back (SEP-2640).
  if (approval.revokedAt !== null) return { state: 'changed-since-approval', differing, revokedAt: approval.revokedAt };
  return differing.length === 0 ? { state: 'approved' } : { state: 'changed-since-approval', differing };
}

/** Why the skill cannot be approved (no content to bind an approval to, or not served), or undefined when it can. */
export function approvalProblem(entry: Pick<ApprovalSubject, 'files' | 'declined'>): string | undefined {
  if (entry.files === 'dynamic') {
    return 'its resources are "dynamic": the server publishes no digests, so an approval could not be bound to its content and would cover whatever it serves later';
  }
  if (entry.files === 'unlisted') {
    return 'it comes from skill://index.json (the index generation), which lists no resources set: an approval could not be bound to its files';
  }
  if (entry.declined !== undefined) return `it is declined: ${entry.declined}`;
  return undefined;
}

/**
 * The PERMISSION_FIELDS entry `key` may be read as: the same name but for case, `-` and `_`
 * (`Allowed_Tools`, `allowedtools`), since a harness that normalizes keys would honor it.
 */
export function permissionFieldOf(key: string): (typeof PERMISSION_FIELDS)[number] | undefined {
  const normalized = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  return PERMISSION_FIELDS.find(({ field }) => field.replace(/[^a-z0-9]/g, '') === normalized);
}

/** The permission-widening fields present in a skill's frontmatter, in PERMISSION_FIELDS order, each key as written. Only this skill's own frontmatter: a nested SKILL.md's fields are not its. */
export function permissionFields(frontmatter: Readonly<Record<string, unknown>>): PermissionField[] {
  const found: PermissionField[] = [];
  for (const { field, effect } of PERMISSION_FIELDS) {
    // A key that is present asks for something even when its value looks empty: show it.
    for (const key of Object.keys(frontmatter)) {
      if (permissionFieldOf(key)?.field !== field) continue;
      found.push({ field: key, effect, value: displayValue(frontmatter[key]) });
    }
  }
  return found;
}

/** A permission field some YAML reader finds in a SKILL.md's frontmatter where the YAML 1.2 reading (the one verified) has none. */
export interface HiddenPermissionField extends PermissionField {
  /** The readers that find it. */
  readers: string[];
}

/**
 * The permission fields that readers other than YAML 1.2 would find in a SKILL.md's frontmatter
 * and the 1.2 reading has not (a plain `<<` merge key, a field after a NEL in a comment...).
 * `readings` are frontmatterReadings() of the SKILL.md's block, the YAML 1.2 one first.
 */
export function hiddenPermissionFields(readings: readonly FrontmatterReading[]): HiddenPermissionField[] {
  const [verified, ...others] = readings;
  const shown = new Set(permissionFields(verified?.data ?? {}).map(({ field, value }) => `${field}\0${value}`));
  const hidden = new Map<string, HiddenPermissionField>();
  for (const reading of others) {
    for (const field of permissionFields(reading.data ?? {})) {
      const key = `${field.field}\0${field.value}`;
      if (shown.has(key)) continue;
      const known = hidden.get(key);
      if (known) known.readers.push(reading.reader);
      else hidden.set(key, { ...field, readers: [reading.reader] });
    }
  }
  return [...hidden.values()];
}

/**
 * The skills nested in `skillPath` at any depth, from `allSkillPaths`, sorted; never the skill
 * itself. Paths are under the label, either SKILL.md paths ("a/b/SKILL.md", as SkillRecord.path)
 * or skill directories ("a/b"); results keep the spelling they were given in. An approval of
 * `skillPath` covers none of them.
 */
export function nestedSkillsOf(skillPath: string, allSkillPaths: Iterable<string>): string[] {
  return new NestedSkills(allSkillPaths).of(skillPath);
}

/**
 * nestedSkillsOf for many skills of one set: their directories sorted once, and the skills under
 * one found by binary search (the directories under a prefix are contiguous in that order), so
 * asking it of every skill of n is n log n, not n².
 */
export class NestedSkills {
  private readonly sorted: Array<{ directory: string; path: string }>;

  constructor(allSkillPaths: Iterable<string>) {
    this.sorted = [...allSkillPaths].map((path) => ({ directory: skillDirectoryOf(path), path })).sort((a, b) => (a.directory < b.directory ? -1 : a.directory > b.directory ? 1 : 0));
  }

  of(skillPath: string): string[] {
    const prefix = `${skillDirectoryOf(skillPath)}/`;
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.sorted[middle]!.directory < prefix) low = middle + 1;
      else high = middle;
    }
    const nested: string[] = [];
    for (let index = low; index < this.sorted.length && this.sorted[index]!.directory.startsWith(prefix); index++) nested.push(this.sorted[index]!.path);
    return nested.sort();
  }
}

/**
 * What to store when a person approves `record` on `label`, as shown to them now. Throws when
 * approvalProblem() has a reason (ConfigError), or when an allowed-tools grant is asked for a skill with none.
 */
export function approvalInputFor(
  label: string,
  record: ApprovalSubject & { name: string; frontmatter: Readonly<Record<string, unknown>> },
  options: { allowedToolsApproved: boolean; execApproved?: boolean },
): ApprovalInput {
  const problem = approvalProblem(record);
  if (problem !== undefined) throw new ConfigError(`${label}: ${record.uri} cannot be approved: ${problem}`);
  const allowedTools = permissionFields(record.frontmatter).find((field) => field.effect === 'tool-permission')?.value ?? null;
  if (options.allowedToolsApproved && allowedTools === null) throw new ConfigError(`${label}: ${record.uri} has no allowed-tools to approve`);
  return {
    label,
    skillUri: record.uri,
    name: record.name,
    resources: (record.files as readonly AdvertisedFile[]).map((file) => ({ uri: file.uri, digest: file.digest, sizeBytes: file.sizeBytes })),
    allowedToolsApproved: options.allowedToolsApproved,
    allowedTools,
    execApproved: options.execApproved ?? false,
  };
}

/** Files added, removed or changed (digest or size) since approval, sorted by URI. */
function differences(approved: readonly ApprovedResource[], current: readonly AdvertisedFile[]): FileDifference[] {
  const before = new Map(approved.map((file) => [file.uri, file]));
  const differing: FileDifference[] = [];
  const seen = new Set<string>();
  for (const file of current) {
    seen.add(file.uri);
    const was = before.get(file.uri);
    if (was === undefined) differing.push({ uri: file.uri, change: 'added' });
    // Size is not part of the spec's binding, but an entry whose size moved under an unchanged digest is not the set approved either.
    else if (was.digest !== file.digest || was.sizeBytes !== file.sizeBytes) differing.push({ uri: file.uri, change: 'changed' });
  }
  for (const file of approved) if (!seen.has(file.uri)) differing.push({ uri: file.uri, change: 'removed' });
  return differing.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
}

function displayValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.join(' ');
  return JSON.stringify(value) ?? String(value);
}

function skillDirectoryOf(skillPath: string): string {
  // 'SKILL.md' is never a skill's directory name (names are lowercase), so stripping it is unambiguous.
  const trimmed = skillPath.replace(/\/+$/, '');
  return trimmed === 'SKILL.md' ? '' : trimmed.endsWith('/SKILL.md') ? trimmed.slice(0, -'/SKILL.md'.length) : trimmed;
}
