// The skills-mount side of the link tests through real harnesses: a small skills folder for
// skills-serve (a probe with a reference and a nested skill, a skill left unapproved, one whose
// name a user's own skill takes, two with allowed-tools and hooks, one approved late), the
// skills-mount CLI run with a HOME and XDG folders of the test's, and approvals made without a
// mount: from the configured server started in this process, as `approve` records them.
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { approvalInputFor } from '../../../src/approvals/approval-check.js';
import { ApprovalLedger } from '../../../src/approvals/approval-ledger.js';
import { ApprovalStore, defaultApprovalsPath, type ApprovalInput } from '../../../src/approvals/approval-store.js';
import { loadMountConfig } from '../../../src/config/config.js';
import { startServerCore } from '../../../src/in-process/server-core.js';
import { exitOf } from '../children.js';
import { SKILLS_MOUNT } from '../mount-harness.js';
import { writeTree } from '../skill-builder.js';

/** The skills the test server serves, by name (each in a folder of its name). */
export const SKILL = {
  probe: 'link-probe',
  /** Inside the probe's folder: a skill of its own, never approved; left out of the probe's entry. */
  nested: 'link-nested',
  unapproved: 'link-unapproved',
  /** The user has a skill of this name in the root already. */
  collide: 'link-collide',
  granted: 'link-tools-granted',
  plain: 'link-tools-plain',
  /** Approved while a session runs. */
  late: 'link-late',
} as const;

/** Text that appears in exactly one place, per run of the file (nothing left by an earlier run matches). */
export interface Markers {
  tag: string;
  probeDescription: string;
  probeBody: string;
  reference: string;
  nested: string;
  unapproved: string;
  collideServed: string;
  collideOwn: string;
  lateDescription: string;
  /** The body command of the tools skills: `git init -q <repo> && echo <marker>` (Claude Code runs it when the skill loads). */
  granted: { repo: string; marker: string };
  plain: { repo: string; marker: string };
}

export function makeMarkers(): Markers {
  const tag = Math.random().toString(36).slice(2, 8);
  return {
    tag,
    probeDescription: `probe-desc-${tag}`,
    probeBody: `probe-body-${tag}`,
    reference: `probe-reference-${tag}`,
    nested: `nested-desc-${tag}`,
    unapproved: `unapproved-desc-${tag}`,
    collideServed: `collide-served-${tag}`,
    collideOwn: `collide-own-${tag}`,
    lateDescription: `late-desc-${tag}`,
    granted: { repo: `repo-granted-${tag}`, marker: `ran-granted-${tag}` },
    plain: { repo: `repo-plain-${tag}`, marker: `ran-plain-${tag}` },
  };
}

const md = (name: string, description: string, body: string, extra = '') => `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}`;

/** A hook in the frontmatter: an approval never grants it, so no entry may carry it. */
const HOOKS = 'hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: touch hook-ran\n';

function toolsSkill(name: string, command: { repo: string; marker: string }): string {
  return md(name, `Tools skill ${name}. Use when asked for ${name}.`, `# ${name}\n\nRepo: !\`git init -q ${command.repo} && echo ${command.marker}\`\n`, `allowed-tools: Bash(git:*)\n${HOOKS}`);
}

/** Writes the served skills under `dir`. */
export async function writeServedSkills(dir: string, markers: Markers): Promise<void> {
  await writeTree(dir, {
    [`${SKILL.probe}/SKILL.md`]: md(SKILL.probe, `Link probe skill (${markers.probeDescription}). Use when asked for the link probe.`, `# Link probe\n\n${markers.probeBody}\n\nRead references/x.md for the details.\n`),
    [`${SKILL.probe}/references/x.md`]: `# Details\n\n${markers.reference}\n`,
    [`${SKILL.probe}/${SKILL.nested}/SKILL.md`]: md(SKILL.nested, `Nested skill (${markers.nested}).`, '# Nested\n'),
    [`${SKILL.unapproved}/SKILL.md`]: md(SKILL.unapproved, `Never approved (${markers.unapproved}).`, '# Unapproved\n'),
    [`${SKILL.collide}/SKILL.md`]: md(SKILL.collide, `The server's collide skill (${markers.collideServed}).`, '# Collide (served)\n'),
    [`${SKILL.granted}/SKILL.md`]: toolsSkill(SKILL.granted, markers.granted),
    [`${SKILL.plain}/SKILL.md`]: toolsSkill(SKILL.plain, markers.plain),
    [`${SKILL.late}/SKILL.md`]: md(SKILL.late, `Approved late (${markers.lateDescription}).`, '# Late\n'),
  });
}

/** The user's own skill named like a served one, as a person would have it in the root. */
export function ownCollideSkill(markers: Markers): string {
  return md(SKILL.collide, `The user's own collide skill (${markers.collideOwn}).`, '# Collide (own)\n');
}

/** HOME and the XDG folders under `home`, as the harness descriptors give the harnesses. */
export function homeEnv(home: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    ...base,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_STATE_HOME: path.join(home, '.local/state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

/** Runs `skills-mount ARGS` (this Node, the built CLI) with `env`; killed after `timeoutMs`. */
export async function skillsMount(env: NodeJS.ProcessEnv, args: readonly string[], timeoutMs = 60_000): Promise<CliResult> {
  const started = Date.now();
  const child = spawn(process.execPath, [SKILLS_MOUNT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    const exit = await exitOf(child);
    return { code: exit.code, stdout, stderr, durationMs: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** What the configured server advertises, as `approve` would record it: per skill name, the approval without and (where it has allowed-tools) with the grant. */
export interface ServedApprovals {
  names: string[];
  input(name: string, grantAllowedTools?: boolean): ApprovalInput;
}

/**
 * Lists `label` of the config file once, in this process (no FUSE), and returns the approvals its
 * skills would get. Stands in for `skills-mount approve LABEL/SKILL --config FILE --yes` until that lands.
 */
export async function servedApprovals(configPath: string, label: string, scratchHome: string): Promise<ServedApprovals> {
  const config = await loadMountConfig({ configPath });
  const servers = config.servers.filter((server) => server.label === label);
  if (servers.length !== 1) throw new Error(`${configPath} has no server labelled ${label}`);
  const log = (line: string) => void line;
  // The ledger only feeds the core's approved view, unused here: an empty approvals file of its own.
  const ledger = await ApprovalLedger.open(path.join(scratchHome, 'approvals.json'), log);
  const core = await startServerCore({ servers, timeoutMs: 20_000, protocolVersion: undefined, verbose: false, hideDynamic: false, log, approvals: ledger });
  try {
    const records = [...core.catalogs[0]!.skillRecords()];
    const byName = new Map(records.map((record) => [record.name, record]));
    return {
      names: records.map((record) => record.name).sort(),
      input(name, grantAllowedTools = false) {
        const record = byName.get(name);
        if (record === undefined) throw new Error(`${label} serves no skill named ${name}`);
        return approvalInputFor(label, record, { allowedToolsApproved: grantAllowedTools });
      },
    };
  } finally {
    ledger.close();
    await core.close();
  }
}

/** Records approvals in the approvals file the CLI run with `env` reads. */
export async function recordApprovals(env: NodeJS.ProcessEnv, inputs: readonly ApprovalInput[]): Promise<void> {
  const file = defaultApprovalsPath(env, env['HOME']!);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const store = await ApprovalStore.load(file);
  for (const input of inputs) await store.approve(input);
}

/** A config file with one stdio skills-serve server on `skillsDir`. */
export async function writeServeConfig(file: string, label: string, skillsDir: string, serveBin: string): Promise<void> {
  await writeFile(file, JSON.stringify({ mcpServers: { [label]: { command: process.execPath, args: [serveBin, skillsDir] } } }));
}
