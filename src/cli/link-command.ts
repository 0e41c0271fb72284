// `skills-mount link HARNESS...` and `unlink HARNESS...`: puts every approved skill into each
// harness's own skills root (user scope, or a project's with --project), and takes them out. The
// approved bytes come from the running mounts; for servers no mount serves, from the configured
// servers started here (no FUSE needed). With --watch it keeps the roots current until a signal.
// The linking itself is src/link/'s; this wires and reports.
import { lstat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { ApprovalLedger } from '../approvals/approval-ledger.js';
import { ApprovalStore, defaultApprovalsPath } from '../approvals/approval-store.js';
import { ConfigError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import { skillsMounts } from '../fuse/index.js';
import { catalogContent } from '../link/catalog-content.js';
import { harnessNamed, harnessRoot, type Scope } from '../link/harness-roots.js';
import { LinkKeeper } from '../link/link-keeper.js';
import { verifyLinks } from '../link/link-verify.js';
import { defaultLinkStore, readLinkState, type LinkedRoot } from '../link/link-state.js';
import { configurationOf } from '../link/judged-roots.js';
import { syncLinks, type ContentSource, type RootReport, type RootRequest, type SyncOptions } from '../link/link-sync.js';
import type { EntryFile } from '../link/entry-objects.js';
import type { Approval } from '../approvals/approval-store.js';
import type { Log } from '../log.js';
import type { ServerSelection } from '../config/server-selection.js';
import { loadMountConfig, type LabelledServer } from '../config/config.js';
import { APPROVED_DIR, SKILLS_JSON } from '../fs/mount-layout.js';
import { readWhole } from '../snapshot/view-walk.js';
import { eitherContent, mountContent } from '../link/mount-content.js';
import { startServerCore, type ServerCore } from '../in-process/server-core.js';
import { lockedApprovals, serversOrProblem, type LockedApprovals } from '../team/locked-approvals.js';
import { approvalOfLocked } from '../team/locked-skills.js';
import { permittedApprovals } from '../team/policed-approvals.js';
import { lockedKey, lockfilePath, readLockfile } from '../team/lockfile.js';
import { loadPolicy, type Policy } from '../team/policy.js';
import { defaultSkillTexts, keepSkillText, keptSkillTextsIn } from '../team/skill-texts.js';
import { comparisonProblem, compareProject } from './outdated-command.js';

export interface LinkOptions {
  harnesses: string[];
  /** --project DIR: the project's roots instead of the user's. */
  projectDir: string | undefined;
  configPath: string | undefined;
  serverFlags: string[];
  only: string[];
  timeoutMs: number;
  watch: boolean;
  json: boolean;
}

export interface LinkIo {
  out: (text: string) => void;
  log: Log;
  env: NodeJS.ProcessEnv;
  home: string;
}

export function processIo(): LinkIo {
  return { out: (text) => process.stdout.write(text), log: (line) => process.stderr.write(`skills-mount: ${escapeForLog(line)}\n`), env: process.env, home: homedir() };
}

/**
 * Exit 0 when every approved (or, in a project with a lockfile, locked) skill is in every root; 1
 * when some wait or were refused (or a root was refused); 2 on a usage error (thrown).
 */
export async function runLink(options: LinkOptions, io: LinkIo): Promise<number> {
  const policy = await loadPolicy({ env: io.env, home: io.home });
  const lockfile = await projectLockfile(options.projectDir);
  const configuration = configurationOf(options, io);
  const requests = await rootRequests(options, io, lockfile === undefined ? undefined : { lockfile, configuration });
  const store = defaultLinkStore(io.env, io.home);
  const approvalsPath = defaultApprovalsPath(io.env, io.home);
  const config = await configuredServers(options);
  // Read once, before anything is linked: a lockfile with a bad entry stops the command here (exit 1).
  const lock = lockfile === undefined ? undefined : await readLockfile(lockfile);
  const locked = lockfile === undefined ? undefined : await lockedApprovals(lockfile, config, policy, 'link', lock);
  let approvals = (await ApprovalStore.load(approvalsPath)).list();
  // A locked version is read from the configured server even where a mount lists its label: a mount shows it only with that --lock.
  const { content: source, servers } = await linkContent(approvals, options, options.watch, io, locked?.approvals ?? []);
  const content = keepingSkillTexts(source, defaultSkillTexts(io.env, io.home));
  try {
    // No mount judges these servers' skills: judged here, against what each serves now, before anything is linked.
    if (servers !== undefined && (await servers.recheck())) approvals = (await ApprovalStore.load(approvalsPath)).list();
    const personal = permittedApprovals(approvals, config, policy);
    const readLock = lockReader(configuration, config, policy, lockfile, locked);
    const reports = await syncLinks({ store, approvals: personal.approvals, lockedApprovals: readLock, content, log: io.log, link: requests });
    const shown = reports.filter((report) => requests.some((request) => request.root === report.root));
    for (const report of shown) if (report.lockfile === undefined) report.problems.unshift(...personal.problems);
    io.out(options.json ? `${JSON.stringify({ roots: shown }, null, 2)}\n` : renderReports(shown));
    if (!options.watch) return shown.every((report) => report.problems.every(isNotice)) ? 0 : 1;
    await keepLinked(store, content, await servers!.started(), io, { configuration, config, policy });
    return 0;
  } finally {
    await servers?.close();
  }
}

/** `source`, keeping each SKILL.md it reads under its digest: `outdated` on this machine can then diff the version linked. */
function keepingSkillTexts(source: ContentSource, texts: string): ContentSource {
  return {
    serves: (label) => source.serves(label),
    missing: (label) => source.missing(label),
    async read(approval, file) {
      const bytes = await source.read(approval, file);
      if (bytes !== undefined && file.uri === approval.skillUri) await keepSkillText(texts, file.digest, bytes).catch(() => {});
      return bytes;
    },
  };
}

/** `DIR/skills-lock.json` when DIR (a --project) has one. */
async function projectLockfile(projectDir: string | undefined): Promise<string | undefined> {
  if (projectDir === undefined) return undefined;
  const file = lockfilePath(projectDir);
  return (await lstat(file).catch(() => undefined)) === undefined ? undefined : file;
}

/** The configured servers (--config, --server, --only, or the default file), or why they cannot be had. */
function configuredServers(selection: ServerSelection): Promise<readonly LabelledServer[] | { problem: string }> {
  return serversOrProblem(async () => (await loadMountConfig({ configPath: selection.configPath, serverFlags: selection.serverFlags, only: selection.only })).servers);
}

/**
 * What a sync reads for a locked root, judged with `configuration` (loaded as `config`): `first`
 * for this command's own lockfile (read once already), the file anew for any other.
 */
function lockReader(configuration: string, config: readonly LabelledServer[] | { problem: string }, policy: Policy, lockfile?: string, first?: LockedApprovals): NonNullable<SyncOptions['lockedApprovals']> {
  let unused = first;
  const read = async (file: string): Promise<LockedApprovals> => {
    if (file === lockfile && unused !== undefined) {
      const reading = unused;
      unused = undefined;
      return reading;
    }
    return lockedApprovals(file, config, policy, 'link');
  };
  return { configuration, read };
}

/**
 * Where the approved bytes come from: the running mounts, then, with a server selection (or
 * --watch), the configured servers no mount serves, started in this process at the first byte
 * needed. Without a selection (approve on a mount) only the mounts.
 */
async function linkContent(approvals: readonly Approval[], selection: (ServerSelection & { timeoutMs?: number }) | undefined, watch: boolean, io: LinkIo, locked: readonly Approval[] = []): Promise<{ content: ContentSource; servers: ServersOnDemand | undefined }> {
  const mounts = await mountContent();
  const missing = new Set([...approvals.filter((approval) => approval.revokedAt === null && !mounts.serves(approval.label)), ...locked].map((approval) => approval.label));
  if (selection === undefined || (!watch && missing.size === 0)) return { content: mounts, servers: undefined };
  const config = await loadMountConfig({ configPath: selection.configPath, serverFlags: selection.serverFlags, only: selection.only });
  for (const note of config.notes) io.log(note);
  // Without --watch, only the servers a skill to link needs; with it, every one (their changes matter later).
  const servers = new ServersOnDemand(
    config.servers.filter((server) => watch || missing.has(server.label)),
    config.origin,
    { timeoutMs: selection.timeoutMs ?? DEFAULT_TIMEOUT_MS, env: io.env, home: io.home, log: io.log },
  );
  return { content: eitherContent([mounts, servers]), servers };
}

/** The configured servers as a content source, started in this process at the first read. */
class ServersOnDemand implements ContentSource {
  private core: Promise<{ core: ServerCore; ledger: ApprovalLedger }> | undefined;
  private source: ContentSource | undefined;

  constructor(
    private readonly servers: LabelledServer[],
    private readonly origin: string,
    private readonly options: { timeoutMs: number; env: NodeJS.ProcessEnv; home: string; log: Log },
  ) {}

  serves(label: string): boolean {
    return this.servers.some((server) => server.label === label);
  }

  missing(label: string): string {
    return `no running mount serves ${label}, and no configured server is labelled ${label} (start skills-mount with it, or link with --config or --server)`;
  }

  async read(approval: Approval, file: EntryFile): Promise<Buffer | undefined> {
    if (this.source === undefined) {
      const { core } = await this.started();
      this.source = catalogContent(core.catalogs, keptSkillTextsIn(defaultSkillTexts(this.options.env, this.options.home)));
    }
    return this.source.read(approval, file);
  }

  /**
   * Judges every approval of these servers against what they serve now, as a mount would: one a
   * later entry changed is revoked in the approvals file (so its entries go at this sync). Resolves
   * whether any approval was revoked.
   */
  async recheck(): Promise<boolean> {
    const { core, ledger } = await this.started();
    const revoked = () => ledger.all().filter((approval) => approval.revokedAt !== null).length;
    const before = revoked();
    // Reading the approved view judges every label's approvals (approved-view.ts stateOf), and each revocation is written.
    await readWhole(core.filesystem, `/${APPROVED_DIR}/${SKILLS_JSON}`);
    await ledger.idle();
    return revoked() !== before;
  }

  /** The servers' core (started now if not yet), with the approvals its approved view reads. */
  started(): Promise<{ core: ServerCore; ledger: ApprovalLedger }> {
    this.core ??= (async () => {
      const ledger = await ApprovalLedger.open(defaultApprovalsPath(this.options.env, this.options.home), this.options.log);
      this.options.log(`reading approved skills of ${this.servers.map((server) => server.label).join(', ')} from the server${this.servers.length === 1 ? '' : 's'} (${this.origin})`);
      const core = await startServerCore({ servers: this.servers, timeoutMs: this.options.timeoutMs, protocolVersion: undefined, verbose: false, hideDynamic: false, log: this.options.log, approvals: ledger });
      return { core, ledger };
    })();
    return this.core;
  }

  async close(): Promise<void> {
    if (this.core === undefined) return;
    const { core, ledger } = await this.core;
    ledger.close();
    await core.close();
  }
}

/** Takes the harnesses' roots away: exactly the entries link made, and a root it made once empty. */
export async function runUnlink(options: Pick<LinkOptions, 'harnesses' | 'projectDir'>, io: LinkIo): Promise<number> {
  const requests = await rootRequests(options, io);
  const store = defaultLinkStore(io.env, io.home);
  const known = new Set((await readLinkState(store)).roots.map((root) => root.root));
  const approvals = (await ApprovalStore.load(defaultApprovalsPath(io.env, io.home))).list();
  await syncLinks({ store, approvals, content: noContent, log: io.log, unlink: requests });
  for (const request of requests) {
    io.out(known.has(request.root) ? `unlinked ${request.harness} (${request.scope}): ${request.root}\n` : `${request.harness} (${request.scope}) was not linked: ${request.root}\n`);
  }
  return 0;
}

/**
 * After approvals changed (approve, revoke): every linked root brought up to date from the
 * running mounts (and, for a command given --config or --server, those servers), before it returns. Nothing to do, and nothing read, when nothing is linked.
 */
export async function syncAfterApprovalChange(io: LinkIo, selection?: ServerSelection): Promise<RootReport[]> {
  const store = defaultLinkStore(io.env, io.home);
  if ((await readLinkState(store)).roots.length === 0) return [];
  const approvals = (await ApprovalStore.load(defaultApprovalsPath(io.env, io.home))).list();
  const { content, servers } = await linkContent(approvals, selection, false, io);
  try {
    const policy = await loadPolicy({ env: io.env, home: io.home });
    const given = selection ?? { configPath: undefined, serverFlags: [], only: [] };
    const config = await configuredServers(given);
    return await syncLinks({ store, approvals: permittedApprovals(approvals, config, policy).approvals, lockedApprovals: lockReader(configurationOf(given, io), config, policy), content, log: io.log });
  } finally {
    await servers?.close();
  }
}

/** `verify --links`: the report as text (or JSON), exit 0 when every entry is what its approval allows, 1 otherwise. */
export async function runVerifyLinks(json: boolean, io: LinkIo): Promise<{ text: string; exitCode: number }> {
  const approvals = (await ApprovalStore.load(defaultApprovalsPath(io.env, io.home))).list();
  const report = await verifyLinks(defaultLinkStore(io.env, io.home), approvals);
  const exitCode = report.problems.length === 0 ? 0 : 1;
  if (json) return { text: `${JSON.stringify(report, null, 2)}\n`, exitCode };
  const lines = report.problems.map((problem) => `${escapeForLog(path.join(problem.root, problem.entry))}: ${escapeForLog(problem.detail)}`);
  lines.push(`${report.entries} linked entr${report.entries === 1 ? 'y' : 'ies'} in ${report.roots} root${report.roots === 1 ? '' : 's'}, ${report.files} files: ${exitCode === 0 ? 'verified' : `${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}`}`);
  return { text: `${lines.join('\n')}\n`, exitCode };
}

/** The linked roots as status shows them. */
export async function linkedRoots(env: NodeJS.ProcessEnv, home: string): Promise<LinkedRoot[]> {
  return (await readLinkState(defaultLinkStore(env, home))).roots;
}

async function rootRequests(options: Pick<LinkOptions, 'harnesses' | 'projectDir'>, io: LinkIo, locked?: { lockfile: string; configuration: string }): Promise<RootRequest[]> {
  const scope: Scope = options.projectDir === undefined ? 'user' : 'project';
  const requests: RootRequest[] = [];
  for (const name of options.harnesses) {
    const root = harnessRoot(harnessNamed(name), scope, { home: io.home, env: io.env, projectDir: options.projectDir });
    // A skills root inside a mount would be the mount's own (read-only) tree.
    const inside = (await skillsMounts().catch(() => [])).find((mount) => root === mount.mountpoint || root.startsWith(`${mount.mountpoint}${path.sep}`));
    if (inside) throw new ConfigError(`${name}: ${root} is inside the skills-mount mount ${inside.mountpoint}; link puts approved skills in a harness's own folder, never in the mount`);
    requests.push({ root, harness: name, scope, ...locked });
  }
  return requests;
}

/**
 * --watch: a sync whenever approvals, the servers' skills or a project's lockfile change (a `git
 * pull` replaces it: the keeper watches its folder), until SIGINT or SIGTERM.
 */
async function keepLinked(store: string, content: ContentSource, servers: { core: ServerCore; ledger: ApprovalLedger }, io: LinkIo, team: { configuration: string; config: readonly LabelledServer[] | { problem: string }; policy: Policy }): Promise<void> {
  const { core, ledger } = servers;
  const said = new Map<string, string>();
  const keeper = new LinkKeeper({
    store,
    approvals: () => permittedApprovals(ledger.all(), team.config, team.policy).approvals,
    lockedApprovals: lockReader(team.configuration, team.config, team.policy),
    content,
    log: io.log,
    // A root's problems are said when they change (a pulled lockfile that cannot be used, a skill refused), not at every sync.
    onSynced: (reports) => {
      for (const report of reports) {
        const now = report.problems.join('\n');
        if (said.get(report.root) === now) continue;
        said.set(report.root, now);
        for (const problem of report.problems) io.log(`${report.root}: ${problem}`);
      }
    },
  });
  await ledger.watch();
  ledger.onChange(() => keeper.changed());
  for (const catalog of core.catalogs) catalog.onChange(() => keeper.changed());
  keeper.start();
  io.log('keeping the linked skills roots current (Ctrl-C to stop)');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  keeper.close();
  await keeper.idle();
}

/**
 * `verify --project DIR`: what link put in the project's harness folders equals the lock exactly;
 * with `againstServer`, the servers still serve the locked bytes too. Writes nothing.
 */
export async function runVerifyProject(request: { projectDir: string; json: boolean; againstServer: ServerSelection | undefined }, io: LinkIo): Promise<{ text: string; exitCode: number }> {
  const file = lockfilePath(request.projectDir);
  const lock = await readLockfile(file);
  if (lock === undefined) throw new ConfigError(`${file}: no lockfile to verify against`);
  const projectRoot = path.resolve(request.projectDir);
  const store = defaultLinkStore(io.env, io.home);
  const approvals = lock.skills.map(approvalOfLocked);
  const inProject = (root: LinkedRoot) => root.scope === 'project' && (root.root === projectRoot || root.root.startsWith(`${projectRoot}${path.sep}`));
  const report = await verifyLinks(store, approvals, { roots: inProject, source: 'locked', complete: true });
  const problems = report.problems.map((problem) => ({ where: problem.entry === '' ? problem.root : path.join(problem.root, problem.entry), detail: problem.detail }));
  if (report.roots === 0) problems.push({ where: projectRoot, detail: `nothing is linked for this project on this machine: run skills-mount link HARNESS --project ${request.projectDir}` });
  if (request.againstServer !== undefined) {
    const outdated = await compareWithServers(request.projectDir, request.againstServer, io);
    problems.push(...outdated);
  }
  const exitCode = problems.length === 0 ? 0 : 1;
  if (request.json) return { text: `${JSON.stringify({ lockfile: file, skills: lock.skills.length, roots: report.roots, entries: report.entries, files: report.files, problems }, null, 2)}\n`, exitCode };
  const lines = problems.map((problem) => `${escapeForLog(problem.where)}: ${escapeForLog(problem.detail)}`);
  lines.push(`${lock.skills.length} locked skill${lock.skills.length === 1 ? '' : 's'}, ${report.entries} entr${report.entries === 1 ? 'y' : 'ies'} in ${report.roots} root${report.roots === 1 ? '' : 's'}, ${report.files} files: ${exitCode === 0 ? 'as locked' : `${problems.length} difference${problems.length === 1 ? '' : 's'}`}`);
  return { text: `${lines.join('\n')}\n`, exitCode };
}

/** --against-server: each locked skill its server no longer serves as locked, as a problem. */
async function compareWithServers(projectDir: string, selection: ServerSelection, io: LinkIo): Promise<Array<{ where: string; detail: string }>> {
  const { comparisons } = await compareProject(projectDir, selection, { out: () => {}, ask: undefined, env: io.env, log: io.log });
  return comparisons.flatMap((comparison) => {
    const detail = comparisonProblem(comparison);
    return detail === undefined ? [] : [{ where: lockedKey(comparison.skill), detail }];
  });
}

/** The MCP request deadline when the command has no --timeout (approve, revoke). */
const DEFAULT_TIMEOUT_MS = 10_000;

const noContent: ContentSource = { serves: () => false, missing: () => 'unlinking', read: async () => undefined };

/** A qualified name is worth saying, not a failure. */
function isNotice(problem: string): boolean {
  return / is linked as /.test(problem);
}

function renderReports(reports: RootReport[]): string {
  const lines: string[] = [];
  for (const report of reports) {
    lines.push(`${report.harnesses.join(', ')}: ${report.root}: ${report.entries} skill${report.entries === 1 ? '' : 's'} linked${describeChanges(report)}`);
    for (const problem of report.problems) lines.push(`  ${problem}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Up to 8 names, then how many more. */
function someNames(names: readonly string[]): string {
  const shown = names.slice(0, 8).map(escapeForLog).join(', ');
  return names.length > 8 ? `${shown} and ${names.length - 8} more` : shown;
}

function describeChanges(report: RootReport): string {
  const parts = [
    report.added.length ? `added ${someNames(report.added)}` : '',
    report.replaced.length ? `replaced ${someNames(report.replaced)}` : '',
    report.removed.length ? `removed ${someNames(report.removed)}` : '',
  ].filter(Boolean);
  return parts.length ? ` (${parts.join('; ')})` : '';
}

