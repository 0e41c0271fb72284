// The review a person gives a skill before `approve`, `lock` or `update` takes it: the skill shown
// with everything that widens what an agent may do called out (hidden fields too), the questions
// asked (on a terminal; with --yes the flags answer), and the walk over the PATHs named. Knows
// nothing of where the answer is stored (approvals, the lockfile).
import { hiddenPermissionFields, looksLikeScript, type HiddenPermissionField } from '../approvals/approval-check.js';
import { ConfigError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import { FrontmatterError, frontmatterBlock } from '../format/frontmatter.js';
import { frontmatterReadings } from '../format/frontmatter-readings.js';
import type { InspectRecord } from '../fs/approved-view.js';
import { SkillPathError, type FoundSkill, type SkillLocation, type SkillRecords } from '../in-process/skill-records.js';
import { formatBytes, table } from './status.js';

/** Script-like files named in the list describeSkill shows; the rest are counted. */
const SCRIPTS_SHOWN = 5;
/** What an exec grant does, in the words of the prompt and the listing. */
const EXEC_EFFECT = 'files starting with #! become executable in linked entries; the mount itself stays noexec';

/** What a review needs of the command's I/O. */
export interface ReviewIo {
  out: (text: string) => void;
  /** Asks a yes/no question on the terminal; undefined when there is no terminal to ask on. */
  ask: ((question: string) => Promise<boolean>) | undefined;
}

/** Who answers a review's questions: the person at the terminal, or --yes with the grant flags. */
export type ReviewAnswers = { ask: (question: string) => Promise<boolean> } | { yes: true; grantAllowedTools: boolean; grantExec: boolean };

/**
 * Where `command`'s questions are answered. Throws ConfigError when it would have to ask and there
 * is no terminal (stdin from a file or a pipe: `echo y |` is nobody's word); `withYes` says what
 * --yes would do instead.
 */
export function reviewAnswers(command: string, options: { yes: boolean; grantAllowedTools?: boolean; grantExec?: boolean }, io: ReviewIo, withYes: string): ReviewAnswers {
  if (options.yes) return { yes: true, grantAllowedTools: options.grantAllowedTools ?? false, grantExec: options.grantExec ?? false };
  if (io.ask === undefined) throw new ConfigError(`${command} asks on a terminal, and there is none: pass --yes to ${withYes}`);
  return { ask: io.ask };
}

/** What a person said to a skill shown to them: the grants given, and what it asked for. */
export interface ApprovalAnswer {
  allowedTools: boolean;
  exec: boolean;
  /** The skill has an allowed-tools field. */
  asksTools: boolean;
  /** The skill has files that look like scripts. */
  hasScripts: boolean;
}

/**
 * Asks whether to `verb` the skill shown (undefined: declined), then each grant it could widen;
 * with --yes, the flags answer. Shared by approve, lock and update.
 */
export async function askToApprove(verb: string, location: SkillLocation, record: InspectRecord, answers: ReviewAnswers): Promise<ApprovalAnswer | undefined> {
  const allowedTools = record.permissionFields.find((field) => field.effect === 'tool-permission');
  const asked = { asksTools: allowedTools !== undefined, hasScripts: scriptFiles(location, record).length > 0 };
  // --yes --grant-exec is the person's word whatever the files are called (a #! file named bin/tool).
  if (!('ask' in answers)) return { allowedTools: allowedTools !== undefined && answers.grantAllowedTools, exec: answers.grantExec, ...asked };
  if (!(await answers.ask(`${verb} ${location.label}/${location.directory} as shown above?`))) return undefined;
  const grant = allowedTools !== undefined && (await answers.ask(`Also grant its allowed-tools (${escapeForLog(allowedTools.value)})?`));
  // On a terminal, asked where something looks like a script (a question about nothing would be noise).
  const exec = asked.hasScripts && (await answers.ask(`Also let its scripts run (${EXEC_EFFECT})?`));
  return { allowedTools: grant, exec, ...asked };
}

/** " with its allowed-tools (exec not granted for its scripts)": the grants given and withheld, for the summary line. */
export function describeGrants(answer: ApprovalAnswer): string {
  const granted = [...(answer.allowedTools ? ['its allowed-tools'] : []), ...(answer.exec ? ['exec for its scripts'] : [])];
  const withheld = [...(answer.asksTools && !answer.allowedTools ? ['allowed-tools not granted'] : []), ...(answer.hasScripts && !answer.exec ? ['exec not granted for its scripts'] : [])];
  return `${granted.length > 0 ? ` with ${granted.join(' and ')}` : ''}${withheld.length > 0 ? ` (${withheld.join('; ')})` : ''}`;
}

/**
 * Runs `handle` on the skill each PATH names, with its record as `records` finds it. A PATH
 * that fails is reported (followed by `gap`) and counted, and the others go on. Resolves the
 * exit code: 0 when `handle` said true for every PATH. Closes `records`.
 */
export async function forEachSkill(paths: readonly string[], records: SkillRecords, io: ReviewIo, gap: string, handle: (skill: FoundSkill & { given: string }) => Promise<boolean>): Promise<number> {
  let failed = 0;
  try {
    for (const given of paths) {
      try {
        if (!(await handle({ given, ...(await records.find(given)) }))) failed += 1;
      } catch (error) {
        if (!(error instanceof SkillPathError) && !(error instanceof ConfigError)) throw error;
        io.out(`skills-mount: ${error.message}\n${gap}`);
        failed += 1;
      }
    }
  } finally {
    await records.close();
  }
  return failed === 0 ? 0 : 1;
}

/** The skill's files that look like scripts (looksLikeScript), relative to its directory; none when its files are not listed. */
function scriptFiles(location: SkillLocation, record: InspectRecord): string[] {
  if (!Array.isArray(record.files)) return [];
  const prefix = `${location.directory}/`;
  return record.files.map((file) => (file.path.startsWith(prefix) ? file.path.slice(prefix.length) : file.path)).filter(looksLikeScript);
}

/** The permission fields YAML readers other than the verified one find in the SKILL.md, or why it could not be read. */
export async function otherReadings(skillMd: FoundSkill['skillMd']): Promise<HiddenPermissionField[] | string> {
  const read = await skillMd();
  if ('problem' in read) return read.problem;
  try {
    return hiddenPermissionFields(frontmatterReadings(frontmatterBlock(read.text)));
  } catch (error) {
    if (error instanceof FrontmatterError) return error.message;
    throw error;
  }
}

/**
 * The skill as a person needs to judge it; every string from the server escaped. `hidden`: the
 * permission fields only other YAML readers find in its SKILL.md (or why it could not be read).
 */
export function describeSkill(location: SkillLocation, record: InspectRecord, hidden: readonly HiddenPermissionField[] | string = []): string {
  const lines = [`${location.label}/${location.directory} ${location.where}`];
  const field = (name: string, value: string) => lines.push(`  ${name.padEnd(12)} ${value}`);
  field('name', escapeForLog(record.name));
  field('uri', escapeForLog(record.uri));
  field('description', escapeForLog(record.description));
  if (Array.isArray(record.files)) {
    const total = record.files.reduce((sum, file) => sum + file.sizeBytes, 0);
    field('files', `${record.files.length}, ${formatBytes(total)} (set ${record.resourcesDigest})`);
    const prefix = `${location.directory}/`;
    const rows = record.files.map((file) => [escapeForLog(file.path.startsWith(prefix) ? file.path.slice(prefix.length) : file.path), formatBytes(file.sizeBytes), file.digest]);
    lines.push(...table(rows, [1]).map((row) => `    ${row}`));
  } else {
    field('files', record.files === 'dynamic' ? '"dynamic": the server publishes no digests' : 'not listed (index generation)');
  }
  field('nested', record.nestedSkills.length === 0 ? 'none' : `${record.nestedSkills.map(escapeForLog).join(', ')} (each needs its own approval)`);
  for (const permission of record.permissionFields) {
    const effect =
      permission.effect === 'tool-permission'
        ? 'widens the tools an agent may use; granted only if you say so'
        : 'asks the host to run code; approving the skill never grants it';
    lines.push(`  ! ${permission.field}: ${escapeForLog(permission.value)}  (${effect})`);
  }
  // Never granted (no grant covers what the verified reading lacks) and never linked; shown because a harness would read it.
  if (typeof hidden === 'string') lines.push(`  ! frontmatter: not checked against other YAML readers (${escapeForLog(hidden)})`);
  else for (const field of hidden) {
    lines.push(`  ! ${escapeForLog(field.field)}: ${escapeForLog(field.value)}  (hidden: only ${field.readers.join('; ')} read it; never granted, held back from linked entries)`);
  }
  const scripts = scriptFiles(location, record);
  if (scripts.length > 0) {
    const named = scripts.slice(0, SCRIPTS_SHOWN).map(escapeForLog).join(', ') + (scripts.length > SCRIPTS_SHOWN ? `, and ${scripts.length - SCRIPTS_SHOWN} more` : '');
    lines.push(`  ! scripts: ${named}  (run only if you let them: ${EXEC_EFFECT})`);
  }
  const approval = record.approval;
  if (approval === null) field('approval', 'none');
  else if (approval.state === 'changed-since-approval') {
    const differing = (approval.differing ?? []).map((d) => `${escapeForLog(d.path ?? d.uri)} ${d.change}`).join(', ');
    field('approval', `changed since approval on ${approval.approvedAt}: ${differing || 'the server changed it and went back to the approved files; an approval does not outlive a change'}`);
  } else field('approval', `${approval.state} (${approval.approvedAt})`);
  return `${lines.join('\n')}\n`;
}
