// Brings every linked skills root to what the approvals say: one entry per approved skill (a
// symbolic link named for the skill, pointing to a read-only copy in the store), none for a skill
// whose approval is gone or revoked, the current version for one approved anew. What is ours in
// a root is a symbolic link into this store's objects, and only that is ever touched: a user's
// skills, Codex's .system, anything else there stays as it is, and takes precedence (the linked
// skill gets a qualified name). Each entry changes by one rename, so a harness sees the old entry
// or the new, never a mix; a crash leaves every entry whole, and the next sync repairs the rest.
import { randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { constants } from 'node:fs';
import { access, link, lstat, mkdir, readdir, readlink, realpath, rename, rmdir, stat, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Approval } from '../approvals/approval-store.js';
import { mapLimited } from '../concurrency.js';
import { PRIVATE_DIRECTORY_MODE } from '../file-modes.js';
import { escapeForLog } from '../format/escape.js';
import type { Log } from '../log.js';
import { currentUid, describeControlFinding, pathControl, type PathControlFinding } from '../path-control.js';
import { errorCode, errorMessage } from '../private-files.js';
import { chooseNames, type NameRequest } from './entry-names.js';
import { foldName, namesInRoot } from './root-names.js';
import { entryFiles, entrySpec, ensureObject, objectOfTarget, objectTarget, readEntryRecord, removeUnreferenced, type EntryFile, type EntrySpec } from './entry-objects.js';
import { projectFolders, type Scope } from './harness-roots.js';
import { judgesLock } from './judged-roots.js';
import { changeLinkState, storeFilesystem, type LinkedEntry, type LinkedRoot, type LinkState } from './link-state.js';

/** Where the approved bytes come from: a running mount, this process's own servers. */
export interface ContentSource {
  /** Whether this source speaks for `label` now; a daemon for its own servers only. */
  serves(label: string): boolean;
  /** An approved file's bytes, or undefined when they cannot be had now. Re-hashed by the sync. */
  read(approval: Approval, file: EntryFile): Promise<Buffer | undefined>;
  /** Why a label it does not serve cannot be linked now (for the person). */
  missing(label: string): string;
}

/** What a sync did in one root. */
export interface RootReport {
  root: string;
  harnesses: string[];
  added: string[];
  replaced: string[];
  removed: string[];
  /** Entries in the root after the sync. */
  entries: number;
  /** Sentences: collisions (qualified names), skills waiting for content, a refusal of the root. */
  problems: string[];
  /** The project lockfile whose skills this root holds, when one governs it. */
  lockfile?: string | undefined;
}

export interface RootRequest {
  root: string;
  harness: string;
  scope: Scope;
  /** A project's lockfile: the root holds exactly its skills (none: the person's approvals). */
  lockfile?: string | undefined;
  /** With a lockfile: the configuration this run judges it with (judged-roots.ts), recorded with the root. */
  configuration?: string | undefined;
}

/** A lockfile's skills as a sync reads them: undefined approvals when it cannot be used (the root stays as it is). */
export interface LockedReading {
  approvals: readonly Approval[] | undefined;
  /** Sentences for the root's report: skills refused, or why the lockfile cannot be used. */
  problems: string[];
}

export interface SyncOptions {
  store: string;
  /** Every approval (revoked ones included: they are removed). */
  approvals: readonly Approval[];
  /**
   * The skills of a root's lockfile, read once per sync and file, judged with `configuration`: only
   * the roots linked with that configuration are synced from their lock (judged-roots.ts). Without
   * it, a sync leaves the roots a lockfile governs as they are (a sync that does not read locks never empties them).
   */
  lockedApprovals?: { configuration: string; read: (lockfile: string) => Promise<LockedReading> } | undefined;
  content: ContentSource;
  log: Log;
  now?: () => Date;
  /** Roots to add first (`link`); each is made when missing. */
  link?: readonly RootRequest[];
  /** Roots to take away first (`unlink`): exactly our entries go, and the folder if link made it and it is empty. */
  unlink?: readonly RootRequest[];
}

/** How long a replaced version stays in the store, for a harness reading it as it was replaced. */
export const RETAIN_REPLACED_MS = 10 * 60 * 1000;
const TEMP_LINKS_DIR = 'tmp';
/** Versions built at once: what the snapshot writer keeps in flight too. */
const BUILD_CONCURRENCY = 8;
/** The name of a temporary link beside an entry (where the store is on another filesystem). */
const TEMP_NAME = /^\..+\.skills-mount-[0-9a-f]{12}$/;
/** The folder an entry is set aside in where the store is on another filesystem than the root. */
const ASIDE_PREFIX = '.skills-mount-aside-';
const ASIDE_NAME = /^\.skills-mount-aside-[0-9a-f]{12}$/;
/** What a person's entry is renamed to, beside its name, when it was set aside and its name was taken again meanwhile. */
const KEPT_INFIX = '.skills-mount-kept-';
/** Names tried beside it (`-1`, `-2`, … after the first) before giving up. */
const MAX_KEPT_NAMES = 100;

/** One sync of every linked root, under the links lock; the reports of the roots it kept. */
export async function syncLinks(options: SyncOptions): Promise<RootReport[]> {
  const now = options.now ?? (() => new Date());
  const reports: RootReport[] = [];
  await changeLinkState(options.store, async (state) => {
    for (const request of options.unlink ?? []) await unlinkRoot(options.store, state, request, options.log);
    for (const request of options.link ?? []) await linkRoot(state, request, now());
    const holds = holdsOf(options.approvals);
    const readings = new Map<string, Promise<LockedReading>>();
    for (const root of state.roots) {
      if (root.lockfile === undefined) {
        reports.push(await syncRoot(options.store, root, holds, options.content, options.log, now()));
        continue;
      }
      const locks = options.lockedApprovals;
      // Another project's root, linked with another configuration: its lock cannot be judged here, so it stays as it is.
      if (locks === undefined || !judgesLock(root, locks.configuration)) continue;
      let reading = readings.get(root.lockfile);
      if (reading === undefined) readings.set(root.lockfile, (reading = locks.read(root.lockfile)));
      const { approvals, problems } = await reading;
      const report = approvals === undefined ? keptAsIs(root, problems) : await syncRoot(options.store, root, holdsOf(approvals), options.content, options.log, now(), problems);
      reports.push({ ...report, lockfile: root.lockfile });
    }
    const referenced = new Set(state.roots.flatMap((root) => Object.values(root.entries).map((entry) => entry.object)));
    await removeUnreferenced(options.store, referenced, state.retired, now(), RETAIN_REPLACED_MS);
  });
  return reports;
}

/** The approvals that hold (not revoked), by skill. */
function holdsOf(approvals: readonly Approval[]): Map<string, Approval> {
  return new Map(approvals.filter((approval) => approval.revokedAt === null).map((approval) => [keyOf(approval.label, approval.skillUri), approval]));
}

/** A root whose lockfile cannot be used: its entries stay as the last good lock left them, and the report says why. */
function keptAsIs(root: LinkedRoot, problems: readonly string[]): RootReport {
  root.problems = [...problems];
  return { root: root.root, harnesses: [...root.harnesses], added: [], replaced: [], removed: [], entries: Object.keys(root.entries).length, problems: [...problems] };
}

function keyOf(label: string, skillUri: string): string {
  return `${label}\0${skillUri}`;
}

async function linkRoot(state: LinkState, request: RootRequest, now: Date): Promise<void> {
  const existing = state.roots.find((root) => root.root === request.root);
  if (existing) {
    if (!existing.harnesses.includes(request.harness)) existing.harnesses.push(request.harness);
    // Linked again: with the project's lockfile where it now has one, with the person's approvals where it no longer does;
    // judged from now on with the configuration of this link.
    existing.lockfile = request.lockfile;
    existing.configuration = request.lockfile === undefined ? undefined : request.configuration;
    return;
  }
  // Made by the sync that follows (after its checks), so unlink may remove them again: a left-over
  // .opencode/ is a config folder to OpenCode, a .claude/ one to Claude Code.
  const created: string[] = [];
  for (let folder = request.root; (await lstat(folder).catch(() => undefined)) === undefined && path.dirname(folder) !== folder; folder = path.dirname(folder)) created.push(folder);
  state.roots.push({ root: request.root, harnesses: [request.harness], scope: request.scope, linkedAt: now.toISOString(), created, entries: {}, problems: [], changedAt: null, ...(request.lockfile === undefined ? {} : { lockfile: request.lockfile, configuration: request.configuration }) });
}

async function unlinkRoot(store: string, state: LinkState, request: RootRequest, log: Log): Promise<void> {
  const index = state.roots.findIndex((root) => root.root === request.root);
  const root = state.roots[index];
  if (root === undefined) return;
  root.harnesses = root.harnesses.filter((name) => name !== request.harness);
  // Another harness still reads this root (agents and a project's codex share one): it stays.
  if (root.harnesses.length > 0) return;
  // A project folder that now leads out of the project (a pulled `.claude` link): forgotten, nothing touched where it leads.
  const outside = await outsideProject({ ...root, harnesses: [request.harness] });
  if (outside !== undefined) {
    log(`unlink: ${outside}`);
    state.roots.splice(index, 1);
    return;
  }
  for (const [name, key] of await ourEntries(store, root.root)) {
    const kept = await removeOurs(store, root.root, name, key);
    if (kept !== undefined) log(`unlink: ${root.root}: ${escapeForLog(kept)}`);
  }
  state.roots.splice(index, 1);
  // The folders link made, deepest first, each only while empty: what anyone put there since keeps it.
  for (const folder of root.created) {
    const removed = await rmdir(folder).then(
      () => true,
      (error: unknown) => {
        if (errorCode(error) === 'ENOENT') return true;
        if (errorCode(error) !== 'ENOTEMPTY' && errorCode(error) !== 'EEXIST') log(`unlink: ${folder} stays: ${errorMessage(error)}`);
        return false;
      },
    );
    if (!removed) break;
  }
}

async function syncRoot(store: string, root: LinkedRoot, holds: ReadonlyMap<string, Approval>, content: ContentSource, log: Log, now: Date, notes: readonly string[] = []): Promise<RootReport> {
  const report: RootReport = { root: root.root, harnesses: [...root.harnesses], added: [], replaced: [], removed: [], entries: 0, problems: [...notes] };
  // Where a person's entry had to be kept beside its name (it changed while link set it aside).
  const noteKept = (sentence: string | undefined): void => {
    if (sentence !== undefined) report.problems.push(escapeForLog(sentence));
  };
  const refusal = await rootRefusal(root);
  if (refusal !== undefined) {
    report.problems.push(refusal);
    root.problems = report.problems;
    report.entries = Object.keys(root.entries).length;
    return report;
  }
  // The root is listed once per sync: what is ours, a crash's leftovers, and the names others take all come from it.
  const listing = await listRoot(root.root);
  const ours = await ourEntries(store, root.root, listing);
  // A temporary link a crash left beside an entry: ours, and never an entry.
  for (const [name, key] of ours) {
    if (!TEMP_NAME.test(name)) continue;
    noteKept(await removeOurs(store, root.root, name, key));
    ours.delete(name);
  }
  // A folder a crash left while an entry was set aside on another filesystem: removed while empty
  // (what it holds then is something put back that could not be: left for the person).
  for (const { name } of listing) {
    if (ASIDE_NAME.test(name)) await rmdir(path.join(root.root, name)).catch(() => {});
  }
  // What each entry of ours is: from the state when it names the same object, else the object's
  // own record. Names the state records come first: they win over a crash's second link.
  const linked = new Map<string, { name: string; key: string; label: string; skillUri: string }>();
  const recordedFirst = [...ours].sort(([a], [b]) => Number(root.entries[b] !== undefined) - Number(root.entries[a] !== undefined));
  for (const [name, key] of recordedFirst) {
    const known = root.entries[name];
    const record = known?.object === key ? known : await readEntryRecord(store, key);
    if (record === undefined || linked.has(keyOf(record.label, record.skillUri))) {
      // A link to an object that is gone, or a second link to one skill (a crash's leftover): ours, and not wanted.
      noteKept(await removeOurs(store, root.root, name, key));
      continue;
    }
    linked.set(keyOf(record.label, record.skillUri), { name, key, label: record.label, skillUri: record.skillUri });
  }
  const entries: Record<string, LinkedEntry> = {};
  // Gone or revoked: the entry goes, whoever can serve its server.
  for (const [skill, entry] of linked) {
    if (holds.has(skill)) continue;
    noteKept(await removeOurs(store, root.root, entry.name, entry.key));
    report.removed.push(entry.name);
    linked.delete(skill);
  }
  // Names: the ones given stay; new skills get theirs, or a qualified one where theirs is taken.
  const wanted: NameRequest[] = [];
  for (const [skill, approval] of [...holds].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!linked.has(skill) && !content.serves(approval.label)) {
      report.problems.push(`${approval.label}/${escapeForLog(approval.name)} is not linked yet: ${content.missing(approval.label)}`);
      continue;
    }
    wanted.push({ key: skill, label: approval.label, name: approval.name });
  }
  // Every name someone else's skill or folder takes here, case-folded. Ours keep their names,
  // unless a skill of someone else's has come to declare one since: then ours is qualified anew.
  const takenBy = await namesInRoot(root.root, new Set(ours.keys()), listing);
  const kept = new Map([...linked].filter(([, entry]) => !takenBy.has(foldName(entry.name))).map(([skill, entry]) => [skill, entry.name]));
  const names = chooseNames(wanted, kept, (name) => takenBy.has(foldName(name)));
  const plans: Array<{ approval: Approval; qualified: boolean; current: { name: string; key: string } | undefined; spec: EntrySpec }> = [];
  for (const request of wanted) {
    const approval = holds.get(request.key)!;
    const choice = names.get(request.key)!;
    const current = linked.get(request.key);
    const files = entryFiles(approval);
    if ('problem' in files) {
      report.problems.push(`${approval.label}/${escapeForLog(approval.name)} cannot be linked: ${escapeForLog(files.problem)}`);
      if (current) noteKept(await removeOurs(store, root.root, current.name, current.key));
      continue;
    }
    const spec = entrySpec(approval, choice.name, files);
    if (current?.key === spec.key) entries[current.name] = { label: approval.label, skillUri: approval.skillUri, object: spec.key, qualified: choice.qualified };
    else plans.push({ approval, qualified: choice.qualified, current, spec });
  }
  // The versions the store lacks, several at once (their server round trips overlap); then each
  // entry placed, one rename or symlink each, in order.
  const built = await mapLimited(plans, BUILD_CONCURRENCY, (plan) => ensureObject(store, plan.spec, (file) => content.read(plan.approval, file)).catch((error: unknown) => errorMessage(error)));
  let noexec: boolean | undefined;
  for (const [index, { approval, qualified, current, spec }] of plans.entries()) {
    const made = built[index] ?? (await linkEntry(store, root.root, spec, current, noteKept));
    if (made !== undefined) {
      // An entry that cannot be brought to the approved version goes.
      if (current) noteKept(await removeOurs(store, root.root, current.name, current.key));
      report.problems.push(`${approval.label}/${escapeForLog(approval.name)} is not linked: ${escapeForLog(made)}`);
      if (current) report.removed.push(current.name);
      continue;
    }
    (current ? report.replaced : report.added).push(spec.entryName);
    if (spec.grants.exec && (noexec ??= (await storeFilesystem(store))?.noexec === true)) {
      report.problems.push(`${approval.label}/${escapeForLog(approval.name)}: its scripts may run (approved with --grant-exec), but ${store} is on a filesystem mounted noexec, so they cannot; set XDG_DATA_HOME to a folder on one that is not`);
    }
    if (qualified && current?.name !== spec.entryName) {
      const by = takenBy.get(foldName(approval.name));
      report.problems.push(`${approval.label}/${escapeForLog(approval.name)} is linked as ${spec.entryName}: the name ${escapeForLog(approval.name)} is taken in this root${by === undefined ? '' : ` by ${escapeForLog(by)}`}`);
    }
    entries[spec.entryName] = { label: approval.label, skillUri: approval.skillUri, object: spec.key, qualified };
  }
  // Skills of servers this source does not speak for keep their entries as they are.
  const wantedKeys = new Set(wanted.map((request) => request.key));
  for (const [skill, entry] of linked) {
    if (!wantedKeys.has(skill)) entries[entry.name] = root.entries[entry.name] ?? { label: entry.label, skillUri: entry.skillUri, object: entry.key, qualified: false };
  }
  // Written only when something changed: a sync that finds nothing to do leaves links.json as it is.
  if (JSON.stringify(root.entries) !== JSON.stringify(entries) || JSON.stringify(root.problems) !== JSON.stringify(report.problems)) root.changedAt = now.toISOString();
  root.entries = entries;
  root.problems = report.problems;
  report.entries = Object.keys(entries).length;
  if (report.added.length + report.replaced.length + report.removed.length > 0) {
    log(`linked ${root.root}: ${[counted(report.added, 'added'), counted(report.replaced, 'replaced'), counted(report.removed, 'removed')].filter(Boolean).join(', ')}`);
  }
  return report;
}

/** Links the version under its name: a new name by symlink(2), our own entry by one rename over it. Why not, when it could not. */
async function linkEntry(store: string, dir: string, spec: EntrySpec, current: { name: string; key: string } | undefined, noteKept: (sentence: string | undefined) => void): Promise<string | undefined> {
  const target = objectTarget(store, spec.key);
  const at = path.join(dir, spec.entryName);
  if (current !== undefined && current.name !== spec.entryName) {
    // Renamed (its name came to be someone else's): the new name made, then the old one taken away.
    const made = await linkEntry(store, dir, spec, undefined, noteKept);
    if (made === undefined) noteKept(await removeOurs(store, dir, current.name, current.key));
    return made;
  }
  if (current === undefined) {
    // A new name: symlink(2) makes it only where nothing is, so nothing of anyone's is replaced.
    try {
      await symlink(target, at);
      return undefined;
    } catch (error) {
      if (errorCode(error) === 'EEXIST') return `${spec.entryName} appeared in the root meanwhile; trying again at the next sync`;
      return errorMessage(error);
    }
  }
  // Our own entry under the same name. Set aside first, then checked where nobody else can change
  // it, then the new version linked in by link(2), which never replaces: whatever anyone put at the
  // name in between stays theirs. A harness listing the root in that instant misses the entry once.
  const temp = await temporaryLink(store, dir, spec.entryName, target);
  try {
    const aside = await setAside(store, dir, at, current.key);
    if (aside === 'gone') return `${spec.entryName} was removed by someone else meanwhile; linking it again at the next sync`;
    if (aside !== 'removed') return `${spec.entryName} was changed by someone else meanwhile; left as it is${keptSentence(aside.kept)}`;
    try {
      await link(temp, at);
    } catch (error) {
      if (errorCode(error) === 'EEXIST') return `${spec.entryName} appeared in the root meanwhile; left as it is`;
      throw error;
    }
    return undefined;
  } finally {
    await unlink(temp).catch(() => {});
  }
}

/** A symbolic link to `target` in the store's tmp folder (same filesystem as the root), else beside the entry. */
async function temporaryLink(store: string, dir: string, name: string, target: string): Promise<string> {
  const random = randomBytes(6).toString('hex');
  const inStore = path.join(store, TEMP_LINKS_DIR, `${name}-${random}`);
  await mkdir(path.dirname(inStore), { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  await symlink(target, inStore);
  const [storeDevice, rootDevice] = await Promise.all([stat(path.dirname(inStore)), stat(dir)]);
  if (storeDevice.dev === rootDevice.dev) return inStore;
  await unlink(inStore);
  // Another filesystem: a dot name beside it, ours by its target (a crash's leftover is removed at the next sync).
  const beside = path.join(dir, `.${name}.skills-mount-${random}`);
  await symlink(target, beside);
  return beside;
}

/** A root's entries; none when it is missing or not a folder. */
async function listRoot(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return [];
    throw error;
  }
}

/** Our entries in a root: symbolic links into this store's objects, by name (a crash's temporary ones included). `listing`: the root's entries, when listed already. */
async function ourEntries(store: string, dir: string, listing?: readonly Dirent[]): Promise<Map<string, string>> {
  const ours = new Map<string, string>();
  for (const entry of listing ?? (await listRoot(dir))) {
    if (!entry.isSymbolicLink()) continue;
    const key = objectOfTarget(store, await readlink(path.join(dir, entry.name)).catch(() => ''));
    if (key !== undefined) ours.set(entry.name, key);
  }
  return ours;
}

async function isOurs(store: string, at: string, key: string): Promise<boolean> {
  const target = await readlink(at).catch(() => undefined);
  return target !== undefined && objectOfTarget(store, target) === key;
}

/**
 * Removes the link at `name` if it is still ours (pointing to `key`); anything else there stays,
 * whatever happens meanwhile. A sentence for the report when it had to stay beside its name.
 */
async function removeOurs(store: string, dir: string, name: string, key: string): Promise<string | undefined> {
  const aside = await setAside(store, dir, path.join(dir, name), key);
  return typeof aside === 'object' && aside.kept !== undefined ? `${name} was changed by someone else meanwhile${keptSentence(aside.kept)}` : undefined;
}

/** Where a person's entry set aside went when its name was taken again meanwhile (for the report). */
function keptSentence(kept: string | undefined): string {
  return kept === undefined ? '' : `; what was there first was replaced again while link checked it, and is kept beside it as ${path.basename(kept)}`;
}

/**
 * Takes our link at `at` (pointing to `key`) out of the root: renamed into a folder of ours on the
 * same filesystem first, and judged there, where nobody can swap it between the check and the act.
 * 'removed' when it was ours (it is gone); 'not ours' when something else was there (it is put
 * back, never over anything made at `at` since: then beside it, `kept` saying where); 'gone' when
 * nothing was there.
 */
async function setAside(store: string, dir: string, at: string, key: string): Promise<'removed' | 'gone' | { notOurs: true; kept?: string }> {
  // The common case costs one readlink, and nothing of anyone's is moved for it.
  if (!(await isOurs(store, at, key))) return (await lstat(at).catch(() => undefined)) === undefined ? 'gone' : { notOurs: true };
  const spot = await privateSpot(store, dir);
  const aside = path.join(spot.dir, `aside-${randomBytes(6).toString('hex')}`);
  try {
    try {
      await rename(at, aside);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return 'gone';
      throw error;
    }
    if (await isOurs(store, aside, key)) {
      await unlink(aside);
      return 'removed';
    }
    return { notOurs: true, kept: await putBack(aside, at) };
  } finally {
    await spot.done();
  }
}

/**
 * Returns what was set aside to `at` without replacing anything there now: link(2) for a link or
 * file, rename for a folder only while `at` is free. Where `at` was taken again meanwhile, it goes
 * beside it in the root instead, under a name nobody had (`NAME.skills-mount-kept-<time>`), never
 * into the store where nobody would look: that path is returned. Nothing of anyone's is lost.
 */
async function putBack(aside: string, at: string): Promise<string | undefined> {
  const isFolder = (await lstat(aside)).isDirectory();
  if (await placeAnew(aside, at, isFolder)) return undefined;
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  for (let attempt = 0; attempt < MAX_KEPT_NAMES; attempt++) {
    const kept = `${at}${KEPT_INFIX}${stamp}${attempt === 0 ? '' : `-${attempt}`}`;
    if (await placeAnew(aside, kept, isFolder)) return kept;
  }
  throw new Error(`${at} was replaced again while link checked it, and no name beside it was free; what was there first is kept in ${aside}`);
}

/** Moves `from` to `to` only where nothing is at `to`: true when it did, false when `to` is taken. */
async function placeAnew(from: string, to: string, isFolder: boolean): Promise<boolean> {
  if (!isFolder) {
    try {
      await link(from, to);
    } catch (error) {
      if (errorCode(error) === 'EEXIST') return false;
      throw error;
    }
    await unlink(from);
    return true;
  }
  // A folder cannot be hard linked: renamed while the name is free (rename(2) would still replace
  // an empty folder made in that instant, or refuse a full one or a file: then taken).
  if ((await lstat(to).catch(() => undefined)) !== undefined) return false;
  try {
    await rename(from, to);
  } catch (error) {
    if (['EEXIST', 'ENOTEMPTY', 'ENOTDIR', 'EISDIR'].includes(errorCode(error) ?? '')) return false;
    throw error;
  }
  return true;
}

/** A folder of ours on the root's filesystem: the store's tmp when it is on it, else a fresh dot folder in the root, removed by done(). */
async function privateSpot(store: string, dir: string): Promise<{ dir: string; done: () => Promise<void> }> {
  const inStore = path.join(store, TEMP_LINKS_DIR);
  await mkdir(inStore, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  const [storeDevice, rootDevice] = await Promise.all([stat(inStore), stat(dir)]);
  if (storeDevice.dev === rootDevice.dev) return { dir: inStore, done: async () => undefined };
  // mkdir(2) makes it or fails: a folder of that name cannot be anyone else's.
  const beside = path.join(dir, `${ASIDE_PREFIX}${randomBytes(6).toString('hex')}`);
  await mkdir(beside, { mode: PRIVATE_DIRECTORY_MODE });
  return { dir: beside, done: () => rmdir(beside).catch(() => {}) };
}

/**
 * Why the root may not be written, or undefined: it must be a folder that only this user (or root)
 * controls, on a path nobody else can swap; a user's root may be a symbolic link to one, a
 * project's lies inside the project. Made when missing.
 */
async function rootRefusal(root: LinkedRoot): Promise<string | undefined> {
  const dir = root.root;
  const refuse = (findings: PathControlFinding[]) =>
    `${dir}: ${findings.map(describeControlFinding).join('; ')}; refusing to write there (another user could put their own skills in your harness's list)`;
  // Checked before anything is made (the walks stop where the path is missing), and again after.
  const outside = await outsideProject(root);
  if (outside !== undefined) return outside;
  const before = await pathControl(dir, { uid: currentUid(), strictTarget: true });
  if (before.length > 0) return refuse(before);
  let resolved: string;
  try {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
    resolved = await realpath(dir);
    if (!(await stat(resolved)).isDirectory()) return `${dir} is not a folder; nothing linked there`;
  } catch (error) {
    return errorCode(error) === 'EEXIST' ? `${dir} is not a folder; nothing linked there` : `${dir} cannot be used: ${errorMessage(error)}`;
  }
  const after = await pathControl(dir, { uid: currentUid(), strictTarget: true });
  if (after.length > 0) return refuse(after);
  const outsideAfter = await outsideProject(root);
  if (outsideAfter !== undefined) return outsideAfter;
  try {
    await access(resolved, constants.W_OK);
  } catch (error) {
    return `${dir} is not writable by you (${errorCode(error) ?? errorMessage(error)}); nothing linked there`;
  }
  return undefined;
}

/**
 * Why a project's root does not lie inside the project, or undefined: a folder on the way from the
 * project to it is a symbolic link (a repository commits `.claude -> ~/.claude` to have link write
 * into the user's own folder, or anywhere). Where the walk finds a folder missing, the rest is made
 * by the caller's mkdir, which then asks again.
 */
async function outsideProject(root: LinkedRoot): Promise<string | undefined> {
  if (root.scope !== 'project') return undefined;
  const folders = projectFolders(root.root, root.harnesses);
  if (folders === undefined) return `${root.harnesses.join(', ')}: ${root.root} is not where that harness's folder is in a project; nothing linked there`;
  for (const folder of folders) {
    const stats = await lstat(folder).catch(() => undefined);
    if (stats === undefined) return undefined;
    if (stats.isSymbolicLink()) return `${root.harnesses.join(', ')}: ${folder} is a symbolic link; link --project writes only inside the project, so nothing is linked there (remove the link, or link that harness without --project)`;
  }
  return undefined;
}

function counted(names: string[], what: string): string {
  return names.length === 0 ? '' : `${names.length} ${what} (${names.slice(0, 5).map(escapeForLog).join(', ')}${names.length > 5 ? ', ...' : ''})`;
}
