// `skills-mount verify --links`: every entry link made, checked against what its approval allows.
// Each entry is a link into this store's objects; every file of it hashes to the approved digest
// (SKILL.md: to what the transform makes of the approved SKILL.md, which itself hashes to the
// approved digest) and has the mode the grants allow; nothing else is in it; its SKILL.md says
// what entry-transform.ts says it must, and only that, to every YAML reader harnesses use. An entry whose approval no longer holds is
// named too (the next sync removes it), and so is a link into the store that link did not record
// (an extra entry a harness would load). Reads; changes nothing.
import { lstat, readFile, readdir, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Approval } from '../approvals/approval-store.js';
import { sha256Digest } from '../format/digest.js';
import { frontmatterBlock, frontmatterDifference, parseFrontmatter } from '../format/frontmatter.js';
import { errorMessage } from '../private-files.js';
import { APPROVED_SKILL_MD, SKILL_DIR, objectDir, objectOfTarget, objectTarget, readEntryRecord, type EntryRecord } from './entry-objects.js';
import { bodyOf, expectedEntry, readingProblem } from './entry-transform.js';
import { readLinkState, type LinkedRoot } from './link-state.js';

export interface LinkProblem {
  root: string;
  /** The entry's name in the root ('' for the root itself). */
  entry: string;
  detail: string;
}

export interface LinksReport {
  roots: number;
  entries: number;
  files: number;
  problems: LinkProblem[];
}

export interface VerifyScope {
  /** The roots to check (default: every linked root). */
  roots?: (root: LinkedRoot) => boolean;
  /** What the approvals are, in the messages: a person's approvals, or a project's lock. */
  source?: 'approved' | 'locked';
  /** Every approval must have an entry in every root checked (a project's lock: nothing missing). */
  complete?: boolean;
}

/** Checks the linked roots of `store` against `approvals`. */
export async function verifyLinks(store: string, approvals: readonly Approval[], scope: VerifyScope = {}): Promise<LinksReport> {
  const state = await readLinkState(store);
  const roots = state.roots.filter(scope.roots ?? (() => true));
  const source = scope.source ?? 'approved';
  const report: LinksReport = { roots: roots.length, entries: 0, files: 0, problems: [] };
  const holds = new Map(approvals.filter((approval) => approval.revokedAt === null).map((approval) => [`${approval.label}\0${approval.skillUri}`, approval]));
  for (const root of roots) {
    const problem = (entry: string, detail: string) => report.problems.push({ root: root.root, entry, detail });
    const present = new Set<string>();
    for (const [name, recorded] of Object.entries(root.entries)) {
      report.entries += 1;
      present.add(`${recorded.label}\0${recorded.skillUri}`);
      const at = path.join(root.root, name);
      const target = await readlink(at).catch(() => undefined);
      if (target === undefined) {
        problem(name, 'is not there (or not a link): the next sync makes it again');
        continue;
      }
      if (objectOfTarget(store, target) !== recorded.object) {
        problem(name, `points to ${target}, not to its version in the store (${objectTarget(store, recorded.object)})`);
        continue;
      }
      const record = await readEntryRecord(store, recorded.object);
      if (record === undefined) {
        problem(name, `its version in the store (${recorded.object}) has no entry.json`);
        continue;
      }
      const approval = holds.get(`${record.label}\0${record.skillUri}`);
      if (approval === undefined) problem(name, `${record.label} ${record.skillUri} ${source === 'locked' ? 'is not in the lock' : 'is no longer approved'}: the next sync removes it`);
      else if (approval.resourcesDigest !== record.resourcesDigest) problem(name, `${record.label} ${record.skillUri} is ${source} with other files (${approval.resourcesDigest}; linked: ${record.resourcesDigest}): the next sync replaces it`);
      else if (approval.allowedToolsApproved !== record.grants.allowedTools || approval.execApproved !== record.grants.exec) problem(name, `${record.label} ${record.skillUri} is linked with other grants than it is ${source} with`);
      for (const detail of await entryProblems(store, recorded.object, name, record)) problem(name, detail);
      report.files += record.files.length;
    }
    if (scope.complete) {
      for (const [key, approval] of holds) if (!present.has(key)) problem('', `${approval.label} ${approval.skillUri} (${approval.name}) is ${source} and not linked here`);
    }
    for (const { name, target } of await extraEntries(store, root)) {
      const made = source === 'locked' ? 'not an entry of the lock' : 'not an entry link made';
      // Only a link in the form link makes is link's to remove; any other is left to the person.
      const fate = objectOfTarget(store, target) === undefined ? 'link leaves what it did not make: remove it' : 'the next sync removes it';
      problem(name, `extra: ${made} (it links into link's store: ${target}): ${fate}`);
    }
  }
  return report;
}

/**
 * The root's entries that lead into the store (by their text or once resolved) and that link did
 * not record: a harness loads them as it loads link's own. Folders and links elsewhere (the
 * person's own skills) are not link's, and not named.
 */
async function extraEntries(store: string, root: LinkedRoot): Promise<Array<{ name: string; target: string }>> {
  const stores = [path.resolve(store), await realpath(store).catch(() => path.resolve(store))];
  const intoStore = (where: string) => stores.some((dir) => where === dir || where.startsWith(`${dir}${path.sep}`));
  const extra: Array<{ name: string; target: string }> = [];
  for (const entry of await readdir(root.root, { withFileTypes: true }).catch(() => [])) {
    if (!entry.isSymbolicLink() || Object.hasOwn(root.entries, entry.name)) continue;
    const at = path.join(root.root, entry.name);
    const target = await readlink(at).catch(() => undefined);
    if (target === undefined) continue;
    const resolved = await realpath(at).catch(() => undefined);
    if (intoStore(path.resolve(root.root, target)) || (resolved !== undefined && intoStore(resolved))) extra.push({ name: entry.name, target });
  }
  return extra.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** What is wrong with one entry version against its entry.json. */
async function entryProblems(store: string, key: string, name: string, record: EntryRecord): Promise<string[]> {
  const problems: string[] = [];
  const object = objectDir(store, key);
  const skill = path.join(object, SKILL_DIR);
  if (record.entryName !== name) problems.push(`its entry.json names it ${record.entryName}`);
  const expected = new Set(record.files.map((file) => file.relative));
  for (const found of await filesUnder(skill)) if (!expected.has(found)) problems.push(`${found}: not a file of the approved skill`);
  for (const file of record.files) {
    const where = path.join(skill, ...file.relative.split('/'));
    let bytes: Buffer;
    try {
      const stats = await lstat(where);
      if (!stats.isFile()) {
        problems.push(`${file.relative}: not a regular file`);
        continue;
      }
      if ((stats.mode & 0o777) !== file.mode) problems.push(`${file.relative}: mode ${(stats.mode & 0o777).toString(8)}, expected ${file.mode.toString(8)}`);
      bytes = await readFile(where);
    } catch (error) {
      problems.push(`${file.relative}: ${errorMessage(error)}`);
      continue;
    }
    if (file.relative !== 'SKILL.md') {
      if (sha256Digest(bytes) !== file.digest) problems.push(`${file.relative}: hashes to ${sha256Digest(bytes)}, approved ${file.digest}`);
      continue;
    }
    if (sha256Digest(bytes) !== record.skillMd.digest) problems.push(`SKILL.md: hashes to ${sha256Digest(bytes)}, written as ${record.skillMd.digest}`);
    problems.push(...(await transformProblems(path.join(object, APPROVED_SKILL_MD), bytes.toString('utf8'), file.digest, record)));
  }
  return problems;
}

/** The entry's SKILL.md against the approved one: exactly the documented change, nothing else. */
async function transformProblems(approvedFile: string, served: string, approvedDigest: string, record: EntryRecord): Promise<string[]> {
  let approved: Buffer;
  try {
    approved = await readFile(approvedFile);
  } catch (error) {
    return [`the approved SKILL.md is missing from the store (${errorMessage(error)})`];
  }
  if (sha256Digest(approved) !== approvedDigest) return [`the approved SKILL.md in the store hashes to ${sha256Digest(approved)}, approved ${approvedDigest}`];
  try {
    const want = expectedEntry(approved.toString('utf8'), { entryName: record.entryName, label: record.label, skillUri: record.skillUri }, record.grants);
    const difference = frontmatterDifference(want.frontmatter, parseFrontmatter(served));
    const problems: string[] = [];
    if (difference !== undefined) problems.push(`SKILL.md: frontmatter field ${difference || '(root)'} is not what the approved one with its grants makes`);
    // Read as every harness's YAML reader would: what YAML 1.2 does not see is no less there for the others.
    const unsafe = readingProblem(frontmatterBlock(served), want.frontmatter, record.grants);
    if (unsafe !== undefined) problems.push(`SKILL.md: ${unsafe}`);
    if (bodyOf(served) !== want.body) problems.push('SKILL.md: its body is not the approved body');
    return problems;
  } catch (error) {
    return [`SKILL.md: ${errorMessage(error)}`];
  }
}

/** Every file below `dir`, as relative paths with '/'. */
async function filesUnder(dir: string, prefix = ''): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) found.push(...(await filesUnder(path.join(dir, entry.name), relative)));
    else found.push(relative);
  }
  return found;
}
