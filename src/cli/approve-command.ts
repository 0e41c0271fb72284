// `skills-mount approve PATH...`, `revoke PATH...` and `approvals`: a person approves a skill
// as the mount holds it (SEP-2640 "Content-bound approval"). The skill is read from its
// `.inspect/<label>/` record (a running mount's file, or with --config/--server the same record
// from servers started here: skill-records.ts), shown with everything that widens what an agent
// may do called out, and stored bound to its whole resources set; on a mount the daemon re-reads
// the approvals file, and the command waits until the approved view shows the change.
import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { approvalInputFor, hiddenPermissionFields, looksLikeScript, type HiddenPermissionField } from '../approvals/approval-check.js';
import { ApprovalStore, defaultApprovalsPath, type Approval } from '../approvals/approval-store.js';
import { ConfigError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import { FrontmatterError, frontmatterBlock } from '../format/frontmatter.js';
import { frontmatterReadings } from '../format/frontmatter-readings.js';
import type { InspectRecord } from '../fs/approved-view.js';
import { APPROVED_DIR, INSPECT_DIR, SKILLS_JSON, inspectFileName } from '../fs/mount-layout.js';
import { skillsMounts } from '../fuse/index.js';
import type { ServerSelection } from '../config/server-selection.js';
import { mountListingState, readMountFile } from '../fuse/mount-read.js';
import { startServerRecords } from '../in-process/server-records.js';
import { SkillPathError, type FoundSkill, type SkillLocation, type SkillRecords } from '../in-process/skill-records.js';
import { formatBytes, table } from './status.js';
import { loadMountConfig, type LabelledServer } from '../config/config.js';
import { loadPolicy, type Policy } from '../team/policy.js';

const READ_TIMEOUT_MS = 5_000;
/** The daemon re-reads the approvals file within 100 ms of a change. */
const VIEW_WAIT_MS = 5_000;
const VIEW_POLL_MS = 100;
/** Script-like files named in the list describeSkill shows; the rest are counted. */
const SCRIPTS_SHOWN = 5;
/** What an exec grant does, in the words of the prompt and the listing. */
const EXEC_EFFECT = 'files starting with #! become executable in linked entries; the mount itself stays noexec';

/** A skill directory on a running mount, as a PATH argument names it. */
export interface MountLocation extends SkillLocation {
  mountpoint: string;
}

export interface ApproveOptions {
  paths: string[];
  /** Approve without asking (scripts). */
  yes: boolean;
  /** With --yes: grant the skills' `allowed-tools` too. */
  grantAllowedTools: boolean;
  /** With --yes: let the scripts of skills that have script-like files run (execApproved). */
  grantExec: boolean;
  /** --config/--server/--only: PATHs are LABEL/SKILLDIR of servers started here; undefined: PATHs on a mount. */
  servers: ServerSelection | undefined;
}

export interface RevokeOptions {
  paths: string[];
  /** --label with --uri: the approval to remove by its key, with no PATH. */
  label: string | undefined;
  uri: string | undefined;
  servers: ServerSelection | undefined;
}

export interface CommandIo {
  out: (text: string) => void;
  /** Asks a yes/no question on the terminal; undefined when there is no terminal to ask on. */
  ask: ((question: string) => Promise<boolean>) | undefined;
  env: NodeJS.ProcessEnv;
  /** Diagnostics (the servers started with --config or --server): one line each, on stderr. */
  log: (line: string) => void;
}

export function terminalIo(): CommandIo {
  const tty = process.stdin.isTTY === true && process.stdout.isTTY === true;
  return {
    out: (text) => process.stdout.write(text),
    ask: tty
      ? async (question) => {
          const prompt = createInterface({ input: process.stdin, output: process.stdout });
          try {
            return /^y(es)?$/i.test((await prompt.question(`${question} [y/N] `)).trim());
          } finally {
            prompt.close();
          }
        }
      : undefined,
    env: process.env,
    // Whatever a server put into a line, no control character reaches the terminal.
    log: (line) => process.stderr.write(`skills-mount: ${escapeForLog(line)}\n`),
  };
}

/** Where the PATHs' skills are read: their mount, or the servers --config/--server name, started here (and stopped by close()). */
function recordsFor(request: { paths: readonly string[]; servers: ServerSelection | undefined }, approvalsFile: string, io: CommandIo): Promise<SkillRecords> {
  return request.servers ? startServerRecords(request.servers, request.paths, approvalsFile, io.log) : Promise.resolve(mountRecords(approvalsFile));
}

/**
 * Exit code 0 when every PATH was approved, 1 when any failed or was declined. `records` finds
 * the skills (default: as `options` says, on a mount or from servers started here).
 */
export async function runApprove(options: ApproveOptions, io: CommandIo, records?: SkillRecords): Promise<number> {
  if (!options.yes && io.ask === undefined) throw new ConfigError('approve asks on a terminal, and there is none: pass --yes to approve what is shown without asking');
  const store = await ApprovalStore.load(approvalsFile(io.env));
  const policy = await loadPolicy({ env: io.env, home: homedir() });
  const policyServer = policyServers(policy);
  return forEachSkill(options.paths, records ?? (await recordsFor(options, store.file, io)), io, '\n', async ({ location, record, given, whenApproved, skillMd }) => {
    io.out(describeSkill(location, record, await otherReadings(skillMd)));
    if (record.cannotApprove !== null) throw new SkillPathError(`${given}: cannot be approved: ${record.cannotApprove}`);
    const server = await policyServer(location.label, options.servers);
    const skillMdDigest = Array.isArray(record.files) ? record.files.find((file) => file.uri === record.uri)?.digest : undefined;
    const refusal = policy.inForce && server === undefined ? `a policy is in force and no configured server is labelled ${location.label}` : server && policy.checkSkill(server, { path: location.directory, skillDigest: skillMdDigest, resourcesDigest: record.resourcesDigest }, 'approve')?.message;
    if (refusal) throw new SkillPathError(`${given}: not approved: ${refusal}`);
    const answer = await askToApprove('Approve', location, record, options, io);
    if (answer === undefined) {
      io.out('not approved\n\n');
      return false;
    }
    const grantRefusal = server && policy.checkGrants(server, { allowedTools: answer.allowedTools, exec: answer.exec });
    if (grantRefusal) throw new SkillPathError(`${given}: not approved: ${grantRefusal.message}`);
    const approval = await store.approve(
      approvalInputFor(
        location.label,
        { uri: record.uri, name: record.name, frontmatter: record.frontmatter, files: record.files as Exclude<InspectRecord['files'], string> },
        { allowedToolsApproved: answer.allowedTools, execApproved: answer.exec },
      ),
    );
    io.out(`approved ${location.label}/${location.directory}${describeGrants(answer)}: ${await whenApproved(approval)}\n\n`);
    return true;
  });
}

/**
 * The configured server of a label, as the policy judges it (only loaded when a policy is in force):
 * the servers --config/--server name, or the default configuration a mount reads.
 */
function policyServers(policy: Policy): (label: string, selection: ServerSelection | undefined) => Promise<LabelledServer | undefined> {
  const loaded = new Map<string, Promise<readonly LabelledServer[]>>();
  return async (label, selection) => {
    if (!policy.inForce) return undefined;
    const key = JSON.stringify(selection ?? null);
    let servers = loaded.get(key);
    if (servers === undefined) loaded.set(key, (servers = loadMountConfig({ configPath: selection?.configPath, serverFlags: selection?.serverFlags ?? [], only: selection?.only ?? [] }).then((config) => config.servers, () => [])));
    return (await servers).find((server) => server.label === label);
  };
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
export async function askToApprove(verb: string, location: SkillLocation, record: InspectRecord, options: { yes: boolean; grantAllowedTools: boolean; grantExec: boolean }, io: CommandIo): Promise<ApprovalAnswer | undefined> {
  const allowedTools = record.permissionFields.find((field) => field.effect === 'tool-permission');
  const approved = options.yes || (await io.ask!(`${verb} ${location.label}/${location.directory} as shown above?`));
  if (!approved) return undefined;
  let grant = false;
  if (allowedTools) {
    grant = options.yes ? options.grantAllowedTools : await io.ask!(`Also grant its allowed-tools (${escapeForLog(allowedTools.value)})?`);
  }
  // On a terminal, asked where something looks like a script (a question about nothing would be noise);
  // --yes --grant-exec is the person's word whatever the files are called (a #! file named bin/tool).
  const hasScripts = scriptFiles(location, record).length > 0;
  let exec = false;
  if (options.yes) exec = options.grantExec;
  else if (hasScripts) exec = await io.ask!(`Also let its scripts run (${EXEC_EFFECT})?`);
  return { allowedTools: grant, exec, asksTools: allowedTools !== undefined, hasScripts };
}

/** " with its allowed-tools (exec not granted for its scripts)": the grants given and withheld, for the summary line. */
export function describeGrants(answer: ApprovalAnswer): string {
  const granted = [...(answer.allowedTools ? ['its allowed-tools'] : []), ...(answer.exec ? ['exec for its scripts'] : [])];
  const withheld = [...(answer.asksTools && !answer.allowedTools ? ['allowed-tools not granted'] : []), ...(answer.hasScripts && !answer.exec ? ['exec not granted for its scripts'] : [])];
  return `${granted.length > 0 ? ` with ${granted.join(' and ')}` : ''}${withheld.length > 0 ? ` (${withheld.join('; ')})` : ''}`;
}

/** `revoke PATH...`, or `revoke --label L --uri U` for a skill no mount shows any more. `records` as for runApprove. */
export async function runRevoke(request: RevokeOptions, io: CommandIo, records?: SkillRecords): Promise<number> {
  const store = await ApprovalStore.load(approvalsFile(io.env));
  if (request.label !== undefined && request.uri !== undefined) {
    const removed = await store.revoke(request.label, request.uri);
    io.out(removed ? `revoked ${request.label} ${escapeForLog(request.uri)}\n` : `no approval of ${escapeForLog(request.uri)} on ${request.label}\n`);
    return removed ? 0 : 1;
  }
  return forEachSkill(request.paths, records ?? (await recordsFor(request, store.file, io)), io, '', async ({ location, record, given, whenRevoked }) => {
    if (!(await store.revoke(location.label, record.uri))) throw new SkillPathError(`${given}: ${location.label}/${location.directory} has no approval`);
    io.out(`revoked ${location.label}/${location.directory}: ${await whenRevoked()}\n`);
    return true;
  });
}

/**
 * Runs `handle` on the skill each PATH names, with its record as `records` finds it. A PATH
 * that fails is reported (followed by `gap`) and counted, and the others go on. Resolves the
 * exit code: 0 when `handle` said true for every PATH. Closes `records`.
 */
export async function forEachSkill(paths: readonly string[], records: SkillRecords, io: CommandIo, gap: string, handle: (skill: FoundSkill & { given: string }) => Promise<boolean>): Promise<number> {
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

/** `approvals [--json]`: what is stored, for every mount (the state on a mount is in its skills.json and `status`). */
export async function runApprovals(json: boolean, io: CommandIo): Promise<number> {
  const store = await ApprovalStore.load(approvalsFile(io.env));
  const approvals = store.list();
  if (json) {
    io.out(`${JSON.stringify({ file: store.file, approvals }, null, 2)}\n`);
    return 0;
  }
  if (approvals.length === 0) {
    io.out(`no approvals (${store.file})\n`);
    return 0;
  }
  const rows = [['LABEL', 'SKILL', 'FILES', 'APPROVED', 'ALLOWED-TOOLS', 'EXEC', 'URI'], ...approvals.map(approvalRow)];
  io.out(`${approvals.length} approval${approvals.length === 1 ? '' : 's'} in ${store.file}\n${table(rows, [2]).map((row) => `  ${row}`).join('\n')}\n`);
  return 0;
}

function approvalRow(approval: Approval): string[] {
  const tools = approval.allowedTools === null ? '-' : approval.allowedToolsApproved ? `granted: ${escapeForLog(approval.allowedTools)}` : 'not granted';
  return [approval.label, escapeForLog(approval.name), String(approval.resources.length), approval.approvedAt, tools, approval.execApproved ? 'granted' : 'no', escapeForLog(approval.skillUri)];
}

function approvalsFile(env: NodeJS.ProcessEnv): string {
  return defaultApprovalsPath(env, homedir());
}

/**
 * Skills on running mounts: each PATH's record read from its mount's `.inspect/` through a child
 * `cat` with a deadline, once the mount's daemon is known to read `approvalsFile`; after a change,
 * waits until the approved view shows it.
 */
export function mountRecords(approvalsFile: string): SkillRecords {
  const checkedMounts = new Set<string>();
  return {
    async find(given) {
      const location = await locateSkill(given);
      if (!checkedMounts.has(location.mountpoint)) {
        await requireSameApprovalsFile(location, approvalsFile, given);
        checkedMounts.add(location.mountpoint);
      }
      return {
        location,
        record: await readRecord(location, given),
        async skillMd() {
          const outcome = await readMountFile(path.join(location.mountpoint, location.label, location.directory, 'SKILL.md'), READ_TIMEOUT_MS);
          if (outcome.kind === 'ok') return { text: outcome.text };
          return { problem: outcome.kind === 'timeout' ? `the mount did not answer within ${READ_TIMEOUT_MS / 1000} s` : outcome.message };
        },
        async whenApproved(approval) {
          const shown = await waitForView(location, given, (now) => now?.state === 'approved' && now.approvedAt === approval.approvedAt, 'present');
          return shown
            ? `now in ${path.join(location.mountpoint, APPROVED_DIR, location.label, location.directory)}`
            : `recorded in ${approvalsFile}; the mount has not shown it yet (is the daemon running?)`;
        },
        async whenRevoked() {
          await waitForView(location, given, (now) => now === null, 'absent');
          return `no longer in ${path.join(location.mountpoint, APPROVED_DIR, location.label)}`;
        },
      };
    },
    close: async () => undefined,
  };
}

/** Which mount, server label and skill directory PATH names (in the full view or the approved one). */
export async function locateSkill(given: string): Promise<MountLocation> {
  const mounts = (await skillsMounts()).map((entry) => entry.mountpoint);
  let absolute = path.resolve(given).replace(/\/+$/, '');
  let mountpoint = innermost(mounts, absolute);
  if (mountpoint === undefined) {
    // Reached through a symlink: the real path names the mount. The lookup goes to the daemon, from this process only.
    absolute = await realpath(absolute).catch(() => absolute);
    mountpoint = innermost(mounts, absolute);
  }
  if (mountpoint === undefined) throw new SkillPathError(`${given}: not on a skills-mount mount (mounted: ${mounts.join(', ') || 'none'})`);
  let segments = absolute.slice(mountpoint.length).split('/').filter(Boolean);
  if (segments[0] === APPROVED_DIR) segments = segments.slice(1);
  if (segments.at(-1) === 'SKILL.md') segments = segments.slice(0, -1);
  const [label, ...rest] = segments;
  if (label === undefined || rest.length === 0) throw new SkillPathError(`${given}: name a skill directory, ${path.join(mountpoint, '<label>', '<skill>')}`);
  return { mountpoint, label, directory: rest.join('/'), where: `on ${mountpoint} (server "${label}")` };
}

function innermost(mounts: readonly string[], absolute: string): string | undefined {
  return mounts.filter((mount) => absolute === mount || absolute.startsWith(`${mount}/`)).sort((a, b) => b.length - a.length)[0];
}

/** The daemon of the mount must read the file this command writes (the same XDG_CONFIG_HOME), or an approval would change nothing. */
async function requireSameApprovalsFile(location: MountLocation, file: string, given: string): Promise<void> {
  const outcome = await readMountFile(path.join(location.mountpoint, APPROVED_DIR, SKILLS_JSON), READ_TIMEOUT_MS);
  if (outcome.kind === 'timeout') throw new SkillPathError(`${given}: the mount did not answer within ${READ_TIMEOUT_MS / 1000} s`);
  if (outcome.kind === 'error') throw new SkillPathError(`${given}: cannot read the mount's approved view: ${outcome.message}`);
  const daemonFile = (JSON.parse(outcome.text) as { approvals?: { file?: string } }).approvals?.file;
  if (daemonFile !== undefined && daemonFile !== file) {
    throw new SkillPathError(`${given}: the daemon of ${location.mountpoint} reads approvals from ${daemonFile}, and this command writes ${file}: run it with the daemon's XDG_CONFIG_HOME`);
  }
}

async function readRecord(location: MountLocation, given: string): Promise<InspectRecord> {
  const file = path.join(location.mountpoint, INSPECT_DIR, location.label, inspectFileName(location.directory));
  const outcome = await readMountFile(file, READ_TIMEOUT_MS);
  if (outcome.kind === 'timeout') throw new SkillPathError(`${given}: the mount did not answer within ${READ_TIMEOUT_MS / 1000} s`);
  if (outcome.kind === 'error') {
    if (/no such file/i.test(outcome.message)) throw new SkillPathError(`${given}: ${location.label} holds no skill at ${location.directory} (see ${path.join(location.mountpoint, SKILLS_JSON)})`);
    throw new SkillPathError(`${given}: cannot read the skill's record: ${outcome.message}`);
  }
  return JSON.parse(outcome.text) as InspectRecord;
}

/**
 * Polls the skill's record until `done` holds for its approval (the record is computed as the
 * approved view is, and padded so that its growth is read whole), and then until the skill's
 * directory in the approved view lists its SKILL.md or not, as `expected`: the daemon tells the
 * kernel of the change just after, and the command's "now in" / "no longer in" must hold for
 * the next `ls`. False after VIEW_WAIT_MS.
 */
async function waitForView(location: MountLocation, given: string, done: (approval: InspectRecord['approval']) => boolean, expected: 'present' | 'absent'): Promise<boolean> {
  const deadline = Date.now() + VIEW_WAIT_MS;
  const approvedSkillDir = path.join(location.mountpoint, APPROVED_DIR, location.label, location.directory);
  for (;;) {
    const record = await readRecord(location, given).catch(() => undefined);
    if (record && done(record.approval) && (await mountListingState(approvedSkillDir, 'SKILL.md', READ_TIMEOUT_MS)) === expected) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, VIEW_POLL_MS));
  }
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

