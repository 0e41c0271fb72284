// `skills-mount outdated --project DIR` and `update LABEL/SKILLDIR... | --all --project DIR`: each
// locked skill against what its server serves now (the configured servers, started here): the
// files added, removed and changed, the permission fields the new version adds, and a unified diff
// of SKILL.md, bounded in text (a server's change can be any size) and whole in --json or --full.
// `update` shows that, asks, and rewrites the lock entry; it never widens a grant. Until then the
// locked version is the one `link` and the mount keep serving.
import { homedir } from 'node:os';
import { createTwoFilesPatch } from 'diff';
import { defaultApprovalsPath } from '../approvals/approval-store.js';
import type { ServerSelection } from '../config/server-selection.js';
import { labelledSkillPath } from '../config/server-selection.js';
import { escapeForLog, escapeWithin } from '../format/escape.js';
import type { InspectRecord } from '../fs/approved-view.js';
import { startServerRecords } from '../in-process/server-records.js';
import { SkillPathError, type SkillRecords } from '../in-process/skill-records.js';
import { ConfigError } from '../errors.js';
import { changeLockfile } from '../team/lockfile-store.js';
import { describeIdentity, identityOf, lockedKey, lockfilePath, readLockfile, sameIdentity, type LockedSkill, type Lockfile } from '../team/lockfile.js';
import { driftOf, updatedSkill, type Drift } from '../team/locked-skills.js';
import { loadPolicy } from '../team/policy.js';
import { defaultSkillTexts, keepSkillText, keptSkillText } from '../team/skill-texts.js';
import type { CommandIo } from './approve-command.js';
import { reviewAnswers } from './skill-review.js';
import { givenServers, parseArguments, projectOption, SERVER_SELECTION_OPTIONS } from './arguments.js';
import { formatBytes } from './status.js';
import { type OutdatedOptions, type UpdateOptions } from './command-options.js';

export type { OutdatedOptions, UpdateOptions } from './command-options.js';

type ServerRecords = Awaited<ReturnType<typeof startServerRecords>>;

/** Lines of one file's diff a text report shows (--full: all). */
const DIFF_LINES_SHOWN = 200;
/** File and diff lines the whole text report shows (--full: all); new permission fields are always shown. */
const REPORT_LINES_SHOWN = 2_000;
/** Characters of one file name or diff line a text report shows (--full: escapeForLog's cap). */
const LINE_CHARS_SHOWN = 1_000;

/** One locked skill against its server now. */
export type SkillComparison =
  | { skill: LockedSkill; state: 'current' }
  | { skill: LockedSkill; state: 'changed'; drift: Drift; record: InspectRecord; diff: string }
  | { skill: LockedSkill; state: 'gone'; reason: string }
  | { skill: LockedSkill; state: 'unavailable'; reason: string };

/** Exit 0 when every locked skill is current, 1 when any differs (or is gone), 2 when a server could not be asked. */
export async function runOutdated(options: OutdatedOptions, io: CommandIo): Promise<number> {
  const { file, comparisons } = await compareProject(options.projectDir, options.servers, io);
  if (options.json) io.out(`${JSON.stringify({ lockfile: file, skills: comparisons.map(comparisonJson) }, null, 2)}\n`);
  else {
    const shown = new ShownLines(options.full);
    const text = comparisons.map((comparison) => describeComparison(comparison, shown)).join('');
    const leftOut = shown.leftOut === 0 ? '' : `${counted(shown.leftOut, 'line')} left out: --full prints them all, --json has everything\n`;
    io.out(text + leftOut + summary(comparisons));
  }
  return exitCodeOf(comparisons);
}

/** Exit 0 when every named skill is current or was updated; 1 when any was declined, gone or refused; 2 when a server could not be asked. */
export async function runUpdate(options: UpdateOptions, io: CommandIo): Promise<number> {
  const answers = reviewAnswers('update', options, io, 'take what is shown');
  const { lock, file } = await projectLock(options.projectDir);
  const selected = options.all ? lock.skills : selectSkills(lock, options.paths);
  const policy = await loadPolicy({ env: io.env, home: homedir() });
  const texts = defaultSkillTexts(io.env, homedir());
  let failed = 0;
  let unavailable = 0;
  await withComparisons(lock, selected, options.servers, io, async (comparisons, records) => {
    for (const comparison of comparisons) {
      const key = escapeForLog(lockedKey(comparison.skill));
      if (comparison.state === 'current') {
        io.out(`${key}: current\n`);
        continue;
      }
      // Each skill is judged on its own: a bound of its own.
      const shown = new ShownLines(options.full);
      io.out(describeComparison(comparison, shown));
      if (shown.leftOut > 0) io.out(`(${counted(shown.leftOut, 'line')} of ${key}'s changes left out: --full prints them all)\n`);
      if (comparison.state !== 'changed') {
        if (comparison.state === 'unavailable') unavailable += 1;
        else failed += 1;
        continue;
      }
      const server = records.server(comparison.skill.server)!;
      const next = updatedSkill(comparison.skill, comparison.record, comparison.drift);
      const refusal = policy.checkSkill(server, { path: next.skill.path, skillDigest: next.skill.skillDigest, resourcesDigest: next.skill.resourcesDigest }, 'lock') ?? policy.checkGrants(server, { allowedTools: next.skill.grants.allowedTools !== null, exec: next.skill.grants.exec });
      if (refusal !== undefined) {
        io.out(`skills-mount: ${key}: not updated: ${refusal.message}\n\n`);
        failed += 1;
        continue;
      }
      if ('ask' in answers && !(await answers.ask(`Update ${key} in the lock to the version shown?`))) {
        io.out('not updated: the locked version stays\n\n');
        failed += 1;
        continue;
      }
      const found = await records.find(lockedKey(comparison.skill)).catch(() => undefined);
      const text = await found?.skillMd();
      if (text !== undefined && 'text' in text) await keepSkillText(texts, next.skill.skillDigest, Buffer.from(text.text, 'utf8'));
      let raced = false;
      await changeLockfile(file, (now) => {
        // Another update or lock since this one read the file: its entry is not the one compared.
        const entry = now.skills.find((skill) => lockedKey(skill) === lockedKey(comparison.skill));
        if (entry?.resourcesDigest !== comparison.skill.resourcesDigest) {
          raced = true;
          return now;
        }
        return { servers: now.servers, skills: now.skills.map((skill) => (skill === entry ? next.skill : skill)) };
      });
      if (raced) {
        io.out(`skills-mount: ${key}: its lock entry changed while this ran; not updated: run update again\n\n`);
        failed += 1;
        continue;
      }
      const dropped = next.dropped.length === 0 ? '' : ` (${next.dropped.join(' and ')} not kept: grant ${next.dropped.length === 1 ? 'it' : 'them'} anew with lock)`;
      io.out(`updated ${key}: set ${next.skill.resourcesDigest}${dropped}\n\n`);
    }
    return comparisons;
  });
  return unavailable > 0 ? 2 : failed > 0 ? 1 : 0;
}

/** Every locked skill of the project against its server now. */
export async function compareProject(projectDir: string, servers: ServerSelection, io: CommandIo): Promise<{ file: string; comparisons: SkillComparison[] }> {
  const { lock, file } = await projectLock(projectDir);
  return { file, comparisons: await withComparisons(lock, lock.skills, servers, io, async (compared) => compared) };
}

/** One line on what differs, for verify --project --against-server. */
export function comparisonProblem(comparison: SkillComparison): string | undefined {
  if (comparison.state === 'current') return undefined;
  if (comparison.state === 'changed') return `the server serves another version: ${comparison.drift.files.map((file) => `${escapeForLog(file.path)} ${file.change}`).join(', ')}`;
  return comparison.state === 'gone' ? `not served as locked: ${comparison.reason}` : `the server could not be asked: ${comparison.reason}`;
}

async function projectLock(projectDir: string): Promise<{ lock: Lockfile; file: string }> {
  const file = lockfilePath(projectDir);
  const lock = await readLockfile(file);
  if (lock === undefined) throw new ConfigError(`${file}: no lockfile (lock a skill first: skills-mount lock LABEL/SKILLDIR --project ${projectDir})`);
  return { lock, file };
}

function selectSkills(lock: Lockfile, paths: readonly string[]): LockedSkill[] {
  if (paths.length === 0) throw new ConfigError('update takes LABEL/SKILLDIR... of locked skills, or --all');
  return paths.map((given) => {
    const named = labelledSkillPath(given);
    if (typeof named === 'string') throw new ConfigError(`${given}: ${named}; name LABEL/SKILLDIR`);
    const skill = lock.skills.find((candidate) => candidate.server === named.label && candidate.path === named.directory);
    if (skill === undefined) throw new ConfigError(`${given}: not in the lockfile`);
    return skill;
  });
}

/**
 * Compares each of `skills` with what its server serves now, with the servers started here for as
 * long as `use` runs. A server the configuration lacks, or configures as another one, is not asked.
 */
async function withComparisons<T>(
  lock: Lockfile,
  skills: readonly LockedSkill[],
  selection: ServerSelection,
  io: CommandIo,
  use: (comparisons: SkillComparison[], records: ServerRecords) => Promise<T>,
): Promise<T> {
  const texts = defaultSkillTexts(io.env, homedir());
  const records = await startServerRecords(selection, skills.map(lockedKey), defaultApprovalsPath(io.env, homedir()), io.log);
  try {
    const comparisons: SkillComparison[] = [];
    for (const skill of skills) {
      const server = records.server(skill.server);
      const identity = lock.servers[skill.server]!;
      if (server === undefined) {
        comparisons.push({ skill, state: 'unavailable', reason: `the configuration has no server "${skill.server}" (the lock names ${describeIdentity(identity)})` });
        continue;
      }
      if (!sameIdentity(identity, server.config)) {
        comparisons.push({ skill, state: 'unavailable', reason: `the lock names server "${skill.server}" as ${describeIdentity(identity)}; the configuration here has another server by that label: ${describeIdentity(identityOf(server.config))}` });
        continue;
      }
      comparisons.push(await compareOne(skill, records, texts));
    }
    return await use(comparisons, records);
  } finally {
    await records.close();
  }
}

async function compareOne(skill: LockedSkill, records: SkillRecords, texts: string): Promise<SkillComparison> {
  let found;
  try {
    found = await records.find(lockedKey(skill));
  } catch (error) {
    if (!(error instanceof SkillPathError)) throw error;
    return error.reason === 'unreachable' ? { skill, state: 'unavailable', reason: error.message } : { skill, state: 'gone', reason: error.message };
  }
  const drift = driftOf(skill, found.record);
  if ('problem' in drift) return { skill, state: 'gone', reason: escapeForLog(drift.problem) };
  if (drift.files.length === 0) return { skill, state: 'current' };
  let diff = '';
  if (drift.files.some((file) => file.path === 'SKILL.md')) {
    const served = await found.skillMd();
    const locked = await keptSkillText(texts, skill.skillDigest);
    const where = `${skill.server}/${skill.path}/SKILL.md`;
    if (locked === undefined) diff = `(the locked SKILL.md, ${skill.skillDigest}, was never read on this machine: no diff to show)\n`;
    else if ('problem' in served) diff = `(the served SKILL.md cannot be read: ${served.problem})\n`;
    else diff = createTwoFilesPatch(`a/${where}`, `b/${where}`, locked.toString('utf8'), served.text).split('\n').slice(1).join('\n');
  }
  return { skill, state: 'changed', drift, record: found.record, diff };
}

/** How much of the changes a text report still shows, and how many lines it has left out. */
class ShownLines {
  leftOut = 0;
  private reportLinesLeft: number;

  constructor(private readonly full: boolean) {
    this.reportLinesLeft = full ? Infinity : REPORT_LINES_SHOWN;
  }

  /** The first of `lines` the report still has room for (at most `bound`), and how many it leaves out. */
  take<T>(lines: readonly T[], bound = Infinity): { shown: readonly T[]; cut: number } {
    const shown = lines.slice(0, Math.min(this.full ? Infinity : bound, this.reportLinesLeft));
    this.reportLinesLeft -= shown.length;
    this.leftOut += lines.length - shown.length;
    return { shown, cut: lines.length - shown.length };
  }

  /** A server's string as one line of the report shows it. */
  escaped(text: string): string {
    return this.full ? escapeForLog(text) : escapeWithin(text, LINE_CHARS_SHOWN);
  }
}

function describeComparison(comparison: SkillComparison, shown: ShownLines): string {
  const key = escapeForLog(lockedKey(comparison.skill));
  if (comparison.state === 'current') return `${key}: current\n`;
  if (comparison.state === 'gone') return `${key}: not served as locked: ${comparison.reason}\n`;
  if (comparison.state === 'unavailable') return `${key}: could not be asked: ${comparison.reason}\n`;
  const { drift } = comparison;
  const lines = [`${key}: the server serves another version (locked set ${comparison.skill.resourcesDigest}, served ${drift.served.resourcesDigest})`];
  const files = shown.take(drift.files);
  for (const file of files.shown) {
    const sizes = file.change === 'changed' ? `${formatBytes(file.lockedBytes!)} -> ${formatBytes(file.servedBytes!)}` : formatBytes((file.change === 'added' ? file.servedBytes : file.lockedBytes)!);
    lines.push(`  ${file.change.padEnd(8)} ${shown.escaped(file.path)}  ${sizes}`);
  }
  if (files.cut > 0) lines.push(`  ... ${counted(files.cut, 'more file')} left out`);
  for (const field of drift.newPermissionFields) lines.push(`  ! ${escapeForLog(field.field)}: ${escapeForLog(field.value)}  (new in this version: an update never grants it)`);
  // Server text, line by line: its line structure kept, no control character reaching the terminal.
  const diff = shown.take(comparison.diff.split('\n').filter((line, index, all) => line !== '' || index < all.length - 1), DIFF_LINES_SHOWN);
  for (const line of diff.shown) lines.push(`  ${shown.escaped(line)}`);
  if (diff.cut > 0) lines.push(`  ... ${counted(diff.cut, 'more line')} of this diff left out`);
  return `${lines.join('\n')}\n`;
}

function summary(comparisons: readonly SkillComparison[]): string {
  const count = (state: SkillComparison['state']) => comparisons.filter((comparison) => comparison.state === state).length;
  const parts = [`${count('current')} current`, `${count('changed')} changed`, ...(count('gone') ? [`${count('gone')} not served as locked`] : []), ...(count('unavailable') ? [`${count('unavailable')} not asked`] : [])];
  return `${counted(comparisons.length, 'locked skill')}: ${parts.join(', ')}\n`;
}

/** "1 line", "3 lines". */
function counted(count: number, what: string): string {
  return `${count} ${what}${count === 1 ? '' : 's'}`;
}

function comparisonJson(comparison: SkillComparison): Record<string, unknown> {
  const base = { server: comparison.skill.server, path: comparison.skill.path, state: comparison.state, lockedResourcesDigest: comparison.skill.resourcesDigest };
  if (comparison.state === 'current') return base;
  if (comparison.state !== 'changed') return { ...base, reason: comparison.reason };
  return { ...base, servedResourcesDigest: comparison.drift.served.resourcesDigest, files: comparison.drift.files, newPermissionFields: comparison.drift.newPermissionFields, skillMdDiff: comparison.diff };
}

function exitCodeOf(comparisons: readonly SkillComparison[]): number {
  if (comparisons.some((comparison) => comparison.state === 'unavailable')) return 2;
  return comparisons.every((comparison) => comparison.state === 'current') ? 0 : 1;
}
