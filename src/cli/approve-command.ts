// `skills-mount approve PATH...`, `revoke PATH...` and `approvals`: a person approves a skill
// as the mount holds it (SEP-2640 "Content-bound approval"). The skill is read from its
// `.inspect/<label>/` record (a running mount's file, or with --config/--server the same record
// from servers started here: skill-records.ts), shown and asked about as skill-review.ts does for
// approve, lock and update, and stored bound to its whole resources set; on a mount the daemon re-reads
// the approvals file, and the command waits until the approved view shows the change.
import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import { approvalInputFor } from '../approvals/approval-check.js';
import { ApprovalStore, defaultApprovalsPath, type Approval } from '../approvals/approval-store.js';
import { escapeForLog } from '../format/escape.js';
import type { InspectRecord } from '../fs/approved-view.js';
import { APPROVED_DIR, INSPECT_DIR, SKILLS_JSON, inspectFileName } from '../fs/mount-layout.js';
import { skillsMounts } from '../fuse/index.js';
import type { ServerSelection } from '../config/server-selection.js';
import { mountListingState, readMountFile } from '../fuse/mount-read.js';
import { startServerRecords } from '../in-process/server-records.js';
import { SkillPathError, type SkillLocation, type SkillRecords } from '../in-process/skill-records.js';
import { askToApprove, describeGrants, describeSkill, forEachSkill, otherReadings, reviewAnswers, type ReviewIo } from './skill-review.js';
import { table } from './status.js';
import { loadMountConfig, type LabelledServer } from '../config/config.js';
import { loadPolicy, type Policy } from '../team/policy.js';

const READ_TIMEOUT_MS = 5_000;
/** The daemon re-reads the approvals file within 100 ms of a change. */
const VIEW_WAIT_MS = 5_000;
const VIEW_POLL_MS = 100;

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

export interface CommandIo extends ReviewIo {
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
  const answers = reviewAnswers('approve', options, io, 'approve what is shown without asking');
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
    const answer = await askToApprove('Approve', location, record, answers);
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
