// `skills-mount lock LABEL/SKILLDIR... --project DIR` and `unlock`: a person approves a skill for a
// whole team, into the project's committed lockfile. The skill is read from the configured servers
// started here and shown as `approve` shows it (permission fields called out, hidden ones too); the
// lock entry binds every file's digest and the grants given. The policy in force has the last word.
import { homedir } from 'node:os';
import type { ServerSelection } from '../config/server-selection.js';
import { labelledSkillPath } from '../config/server-selection.js';
import { escapeForLog } from '../format/escape.js';
import { startServerRecords } from '../in-process/server-records.js';
import { SkillPathError } from '../in-process/skill-records.js';
import { changeLockfile, requireOwnFolder } from '../team/lockfile-store.js';
import { describeIdentity, identityOf, lockedKey, lockfilePath, readLockfile, sameIdentity, type LockedSkill, type Lockfile } from '../team/lockfile.js';
import type { ServerConfig } from '../config/server-config.js';
import { lockedSkillOf } from '../team/locked-skills.js';
import { loadPolicy } from '../team/policy.js';
import { defaultSkillTexts, keepSkillText } from '../team/skill-texts.js';
import type { CommandIo } from './approve-command.js';
import { askToApprove, describeGrants, describeSkill, forEachSkill, otherReadings, reviewAnswers } from './skill-review.js';
import { defaultApprovalsPath } from '../approvals/approval-store.js';
import { ConfigError } from '../errors.js';
import { givenGrants, givenServers, GRANT_OPTIONS, parseArguments, projectOption, SERVER_SELECTION_OPTIONS } from './arguments.js';
import { type LockOptions } from './command-options.js';

export type { LockOptions } from './command-options.js';

/** Exit 0 when every PATH was locked, 1 when any failed, was refused or declined. */
export async function runLock(options: LockOptions, io: CommandIo): Promise<number> {
  const answers = reviewAnswers('lock', options, io, 'lock what is shown without asking');
  const file = lockfilePath(options.projectDir);
  await requireOwnFolder(options.projectDir);
  // A lockfile that cannot be read is fixed first: nothing is added to a file this command would have to rewrite blind.
  await readLockfile(file);
  const policy = await loadPolicy({ env: io.env, home: homedir() });
  const texts = defaultSkillTexts(io.env, homedir());
  const records = await startServerRecords(options.servers, options.paths, defaultApprovalsPath(io.env, homedir()), io.log);
  // With --yes, every entry goes into the lockfile in one write at the end (a thousand skills are one
  // rewrite, not a thousand); on a terminal, each as soon as it is answered, so no answer is lost.
  const deferred: Array<{ given: string; entry: LockEntry; done: string }> = [];
  const shown = await forEachSkill(options.paths, records, io, '\n', async ({ location, record, given, skillMd }) => {
    const server = records.server(location.label);
    if (server === undefined) throw new SkillPathError(`${given}: no configured server is labelled ${location.label}`);
    const skillText = await skillMd();
    io.out(describeSkill(location, record, await otherReadings(async () => skillText)));
    if (record.cannotApprove !== null) throw new SkillPathError(`${given}: cannot be locked: ${record.cannotApprove}`);
    const serverRefusal = policy.checkServer(server, 'lock');
    if (serverRefusal !== undefined) throw new SkillPathError(`${given}: ${serverRefusal.message}`);
    const draft = lockedSkillOf(location.label, location.directory, record, { allowedTools: false, exec: false });
    const skillRefusal = policy.checkSkill(server, { path: draft.path, skillDigest: draft.skillDigest, resourcesDigest: draft.resourcesDigest }, 'lock');
    if (skillRefusal !== undefined) throw new SkillPathError(`${given}: ${skillRefusal.message}`);
    const answer = await askToApprove('Lock', location, record, answers);
    if (answer === undefined) {
      io.out('not locked\n\n');
      return false;
    }
    const grantRefusal = policy.checkGrants(server, { allowedTools: answer.allowedTools, exec: answer.exec });
    if (grantRefusal !== undefined) throw new SkillPathError(`${given}: ${grantRefusal.message}`);
    const locked = lockedSkillOf(location.label, location.directory, record, answer);
    if ('text' in skillText) await keepSkillText(texts, locked.skillDigest, Buffer.from(skillText.text, 'utf8'));
    const entry = { locked, label: location.label, server: server.config, given };
    const done = `locked ${location.label}/${location.directory}${describeGrants(answer)}: ${locked.files.length} file${locked.files.length === 1 ? '' : 's'}, set ${locked.resourcesDigest}, in ${file}\n\n`;
    if (options.yes) {
      deferred.push({ given, entry, done });
      return true;
    }
    await changeLockfile(file, (lock) => withLocked(lock, entry));
    io.out(done);
    return true;
  });
  if (deferred.length === 0) return shown;
  const refused = new Map<string, string>();
  await changeLockfile(file, (lock) =>
    deferred.reduce((next, { given, entry }) => {
      try {
        return withLocked(next, entry);
      } catch (error) {
        if (!(error instanceof SkillPathError)) throw error;
        refused.set(given, error.message);
        return next;
      }
    }, lock),
  );
  for (const { given, done } of deferred) io.out(refused.has(given) ? `skills-mount: ${refused.get(given)}\n\n` : done);
  return refused.size === 0 ? shown : 1;
}

/** One skill to put in the lock, and the server it was read from. */
interface LockEntry {
  locked: LockedSkill;
  label: string;
  server: ServerConfig;
  given: string;
}

/**
 * The lock with `entry` in it (replacing its skill's earlier entry). Throws SkillPathError when the
 * label's other entries were locked from another server: re-pointing the label would say they came from this one.
 */
function withLocked(lock: Lockfile, entry: LockEntry): Lockfile {
  const { locked, label, server, given } = entry;
  const others = lock.skills.filter((skill) => skill.server === label && lockedKey(skill) !== lockedKey(locked));
  const named = Object.hasOwn(lock.servers, label) ? lock.servers[label] : undefined;
  if (named !== undefined && others.length > 0 && !sameIdentity(named, server)) {
    throw new SkillPathError(
      `${given}: the lock names server "${label}" as ${describeIdentity(named)}, and ${others.map((skill) => escapeForLog(lockedKey(skill))).join(', ')} were locked from it; the configuration here has another server by that label: ${describeIdentity(identityOf(server))} (configure "${label}" as the lock names it, or unlock those first)`,
    );
  }
  return { servers: { ...lock.servers, [label]: identityOf(server) }, skills: [...lock.skills.filter((skill) => lockedKey(skill) !== lockedKey(locked)), locked] };
}

/** `unlock LABEL/SKILLDIR... --project DIR`: the entries go from the lockfile; exit 1 when any PATH named none. */
export async function runUnlock(options: { paths: string[]; projectDir: string }, io: CommandIo): Promise<number> {
  const file = lockfilePath(options.projectDir);
  const keys: string[] = [];
  let failed = 0;
  for (const given of options.paths) {
    const skill = labelledSkillPath(given);
    if (typeof skill === 'string') {
      io.out(`skills-mount: ${given}: ${skill}; name LABEL/SKILLDIR\n`);
      failed += 1;
    } else keys.push(`${skill.label}/${skill.directory}`);
  }
  let removed: LockedSkill[] = [];
  await changeLockfile(file, (lock) => {
    removed = lock.skills.filter((skill) => keys.includes(lockedKey(skill)));
    return { servers: lock.servers, skills: lock.skills.filter((skill) => !keys.includes(lockedKey(skill))) };
  });
  for (const key of keys) {
    if (removed.some((skill) => lockedKey(skill) === key)) io.out(`unlocked ${escapeForLog(key)} (${file})\n`);
    else {
      io.out(`skills-mount: ${escapeForLog(key)} is not in ${file}\n`);
      failed += 1;
    }
  }
  return failed === 0 ? 0 : 1;
}
