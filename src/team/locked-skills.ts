// Between a project lock and the skills as servers hold them: the locked entry a person's choice
// makes of a skill's record (as `approve` shows it), the approval a locked entry is to `link` and the
// approved view, and what differs between a locked version and the one a server serves now. Pure.
import { approvalInputFor, permissionFields, type AdvertisedFile } from '../approvals/approval-check.js';
import type { Approval } from '../approvals/approval-store.js';
import { ConfigError } from '../errors.js';
import type { LockedFile, LockedSkill } from './lockfile.js';

/** A skill as the person was shown it (the approved view's InspectRecord is one): what a lock entry is made of. */
export interface ShownSkill {
  uri: string;
  name: string;
  frontmatter: Record<string, unknown>;
  files: ReadonlyArray<{ path: string; uri: string; digest: string; sizeBytes: number }> | 'dynamic' | 'unlisted';
  resourcesDigest: string | null;
  /** Why it cannot be approved (so not locked), or null. */
  cannotApprove: string | null;
}

/** When a locked skill's approval was "given": a lock binds content, not a moment, so no time goes in the file. */
const LOCKED_AT = '1970-01-01T00:00:00.000Z';

/** One file that differs between the locked version and the one served now. */
export interface FileChange {
  /** Relative to the skill's directory. */
  path: string;
  change: 'added' | 'removed' | 'changed';
  lockedBytes?: number | undefined;
  servedBytes?: number | undefined;
}

/** What the server serves now, against the lock; `files` empty when it is the locked version. */
export interface Drift {
  files: FileChange[];
  /** Permission fields (allowed-tools, hooks) the served version has that the locked one did not grant: never granted by an update. */
  newPermissionFields: Array<{ field: string; value: string }>;
  /** The served version's SKILL.md digest and set digest. */
  served: { skillDigest: string; resourcesDigest: string; files: LockedFile[] };
}

/**
 * The lock entry for `record` (a skill of `label` as the server holds it now), with the grants
 * the person gave. Throws ConfigError when it cannot be bound to content (dynamic, unlisted, declined)
 * or a grant names what the skill lacks.
 */
export function lockedSkillOf(label: string, directory: string, record: ShownSkill, grants: { allowedTools: boolean; exec: boolean }): LockedSkill {
  if (record.cannotApprove !== null) throw new ConfigError(`${label}/${directory}: cannot be locked: ${record.cannotApprove}`);
  const input = approvalInputFor(label, { uri: record.uri, name: record.name, frontmatter: record.frontmatter, files: record.files }, { allowedToolsApproved: grants.allowedTools, execApproved: grants.exec });
  const files = relativeFiles(directory, record.files as readonly RecordFile[]);
  const skillMd = files.find((file) => file.uri === record.uri);
  if (skillMd === undefined) throw new ConfigError(`${label}/${directory}: its files do not include its SKILL.md`);
  return {
    server: label,
    path: directory,
    uri: record.uri,
    name: record.name,
    skillDigest: skillMd.digest,
    resourcesDigest: record.resourcesDigest ?? '',
    files,
    grants: { allowedTools: grants.allowedTools ? input.allowedTools : null, exec: grants.exec },
  };
}

/** The locked entry as an approval: what `link` links and the approved view shows. */
export function approvalOfLocked(skill: LockedSkill): Approval {
  return {
    label: skill.server,
    skillUri: skill.uri,
    name: skill.name,
    resources: [...skill.files].map((file) => ({ uri: file.uri, digest: file.digest, sizeBytes: file.sizeBytes })).sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0)),
    resourcesDigest: skill.resourcesDigest,
    approvedAt: LOCKED_AT,
    allowedToolsApproved: skill.grants.allowedTools !== null,
    allowedTools: skill.grants.allowedTools,
    execApproved: skill.grants.exec,
    revokedAt: null,
  };
}

/** Whether `approval` is a locked entry's (approvalOfLocked): its version is the lock's, had from a copy held here when the server moved on (locked-content.ts). */
export function isLockedApproval(approval: Approval): boolean {
  return approval.approvedAt === LOCKED_AT;
}

/** What `record` (served now) changes against the locked `skill`. */
export function driftOf(skill: LockedSkill, record: ShownSkill): Drift | { problem: string } {
  if (record.cannotApprove !== null) return { problem: `the server's version cannot be locked: ${record.cannotApprove}` };
  if (record.uri !== skill.uri) return { problem: `the server now names its SKILL.md ${record.uri}` };
  const servedFiles = relativeFiles(skill.path, record.files as readonly RecordFile[]);
  const locked = new Map(skill.files.map((file) => [file.path, file]));
  const files: FileChange[] = [];
  for (const file of servedFiles) {
    const was = locked.get(file.path);
    if (was === undefined) files.push({ path: file.path, change: 'added', servedBytes: file.sizeBytes });
    else if (was.digest !== file.digest || was.sizeBytes !== file.sizeBytes || was.uri !== file.uri) files.push({ path: file.path, change: 'changed', lockedBytes: was.sizeBytes, servedBytes: file.sizeBytes });
    locked.delete(file.path);
  }
  for (const file of locked.values()) files.push({ path: file.path, change: 'removed', lockedBytes: file.sizeBytes });
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // A field is new when the locked version did not grant it, and the served one asks for it with another value (or at all).
  const newPermissionFields = permissionFields(record.frontmatter)
    .filter((field) => !(field.effect === 'tool-permission' && skill.grants.allowedTools === field.value))
    .map(({ field, value }) => ({ field, value }));
  const skillMd = servedFiles.find((file) => file.uri === record.uri);
  return {
    files,
    newPermissionFields: files.length === 0 ? [] : newPermissionFields,
    served: { skillDigest: skillMd?.digest ?? '', resourcesDigest: record.resourcesDigest ?? '', files: servedFiles },
  };
}

/**
 * The lock entry an update makes: the served version. Grants are never widened by an update: the
 * allowed-tools grant stays only where the value is the one granted, and exec only where no file
 * but SKILL.md changed (any other new or changed file could be a script nobody let run).
 */
export function updatedSkill(skill: LockedSkill, record: ShownSkill, drift: Drift): { skill: LockedSkill; dropped: string[] } {
  const allowedTools = permissionFields(record.frontmatter).find((field) => field.effect === 'tool-permission')?.value ?? null;
  const keepTools = skill.grants.allowedTools !== null && skill.grants.allowedTools === allowedTools;
  const keepExec = skill.grants.exec && drift.files.every((file) => file.path === 'SKILL.md' || file.change === 'removed');
  const dropped = [...(skill.grants.allowedTools !== null && !keepTools ? ['allowed-tools'] : []), ...(skill.grants.exec && !keepExec ? ['exec'] : [])];
  return { skill: lockedSkillOf(skill.server, skill.path, record, { allowedTools: keepTools, exec: keepExec }), dropped };
}

type RecordFile = AdvertisedFile & { path: string };

/** The record's files (paths under the label) relative to the skill's directory, sorted. */
function relativeFiles(directory: string, files: readonly RecordFile[]): LockedFile[] {
  const prefix = `${directory}/`;
  return files
    .map((file) => ({ path: file.path.startsWith(prefix) ? file.path.slice(prefix.length) : file.path, uri: file.uri, sizeBytes: file.sizeBytes, digest: file.digest }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
