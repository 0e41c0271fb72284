// The policy in force (docs/policy.md): the machine-wide and the user's policy files together,
// answering whether a server may be mounted, approved, locked or linked, which skills, and which
// grants are never given. An action is allowed only when every file in force allows it, and a
// file that cannot be honoured refuses everything. Knows rules and server configs, not commands.
import type { ServerConfig } from '../config/server-config.js';
import { SkillsMountError } from '../errors.js';
import { escapeForLog } from '../format/escape.js';
import type { UserDirsWhere } from '../user-dirs.js';
import { POLICY_ACTIONS, type PolicyAction, type PolicyDocument, type PolicyGrant, type ServerRule, type SkillRule } from './policy-document.js';
import { MACHINE_POLICY_PATH, readMachinePolicy, readUserPolicy, userPolicyPath, type OwnerUidOf, type PolicySource } from './policy-files.js';
import { commandCovers, serverUrl, shownUrl, urlCovers, type NormalUrl } from './server-match.js';

export { MACHINE_POLICY_PATH, userPolicyPath, type OwnerUidOf, type PolicySource } from './policy-files.js';
export { MAX_POLICY_BYTES, parsePolicyText, POLICY_ACTIONS, POLICY_GRANTS, POLICY_VERSION, PolicyFormatError, type PolicyAction, type PolicyDocument, type PolicyGrant } from './policy-document.js';

/** A server as the policy judges it: its label (for messages) and how it is reached (what rules match). */
export interface PolicyServer {
  label: string;
  config: ServerConfig;
}

/** A skill as the policy judges it: its folder path under its server ("billing/refunds") and its digests where known. */
export interface PolicySkill {
  path: string;
  /** The SKILL.md digest, `sha256:<64 hex>`. */
  skillDigest?: string | null | undefined;
  /** resourcesDigest() of the skill's resources set. */
  resourcesDigest?: string | null | undefined;
}

/** The grants a person or a lock asks for a skill. */
export interface PolicyGrants {
  allowedTools: boolean;
  exec: boolean;
}

/** A policy file's state as `status` and `doctor` show it. */
export type PolicyFileState = 'in force' | 'absent' | `not honoured: ${string}`;

/** What `status` and `doctor` show: each file and its state, and the rules in force as lines. */
export interface PolicyDescription {
  inForce: boolean;
  files: Array<{ path: string; state: PolicyFileState }>;
  lines: string[];
}

/** The policy does not allow it: names the file and the rule ("servers[2]", "neverGrant", "servers: no rule matches", "not honoured: why"). */
export class PolicyRefusal extends SkillsMountError {
  override name = 'PolicyRefusal';
  readonly code = 'POLICY';

  constructor(
    readonly file: string,
    readonly rule: string,
    /** What was refused: 'server "acme" (https://…) may not be linked'. */
    what: string,
    label?: string,
  ) {
    super(`refused by policy ${file} (${rule}): ${what}`, { server: label });
  }
}

const PAST: Readonly<Record<PolicyAction, string>> = { mount: 'mounted', approve: 'approved', lock: 'locked', link: 'linked' };
const GRANT_OF: ReadonlyArray<{ grant: PolicyGrant; asked: keyof PolicyGrants }> = [
  { grant: 'allowed-tools', asked: 'allowedTools' },
  { grant: 'exec', asked: 'exec' },
];

/** The policy files in force, machine first (its refusal is the one named when both refuse). */
export class Policy {
  readonly #platform: NodeJS.Platform;

  constructor(
    readonly sources: readonly PolicySource[],
    options: { platform?: NodeJS.Platform | undefined } = {},
  ) {
    this.#platform = options.platform ?? process.platform;
  }

  /** Whether some file applies (in force, or refusing everything because it cannot be honoured). */
  get inForce(): boolean {
    return this.sources.some((source) => source.state !== 'absent');
  }

  /** undefined when every policy lets `server` do `action`; else the first refusal (machine policy first). */
  checkServer(server: PolicyServer, action: PolicyAction): PolicyRefusal | undefined {
    for (const source of this.sources) {
      const refusal = this.#serverRefusal(source, server, action);
      if (refusal !== undefined) return refusal;
    }
    return undefined;
  }

  /**
   * The server check, then (for approve, lock and link) the "skills" rules: a skill none of them
   * matches is refused. Mounting is not limited by "skills": the plain mount shows every skill.
   */
  checkSkill(server: PolicyServer, skill: PolicySkill, action: PolicyAction): PolicyRefusal | undefined {
    for (const source of this.sources) {
      const refusal = this.#serverRefusal(source, server, action, skill) ?? (action === 'mount' ? undefined : skillRefusal(source, server, skill, action));
      if (refusal !== undefined) return refusal;
    }
    return undefined;
  }

  /** Whether the mount's `_approved` view may show an approved skill: its server may be mounted and the skill approved. */
  checkApprovedView(server: PolicyServer, skill: PolicySkill): PolicyRefusal | undefined {
    return this.checkServer(server, 'mount') ?? this.checkSkill(server, skill, 'approve');
  }

  /** undefined when no policy withholds a grant asked for; else the refusal naming the grant ("neverGrant"). */
  checkGrants(server: PolicyServer, grants: PolicyGrants): PolicyRefusal | undefined {
    const asked = GRANT_OF.filter(({ asked }) => grants[asked]);
    if (asked.length === 0) return undefined;
    for (const source of this.sources) {
      if (source.state === 'absent') continue;
      if (source.state === 'not honoured') return new PolicyRefusal(source.file, `not honoured: ${source.why}`, `${describeServer(server)} may not be granted ${asked.map(({ grant }) => grant).join(' or ')}`, server.label);
      const withheld = asked.find(({ grant }) => source.document.neverGrant.includes(grant));
      if (withheld !== undefined) return new PolicyRefusal(source.file, 'neverGrant', `${describeServer(server)} may not be granted ${withheld.grant}: it is never given`, server.label);
    }
    return undefined;
  }

  /** The grants asked for, less those a policy never gives (and none at all while a file is not honoured). */
  allowedGrants(grants: PolicyGrants): PolicyGrants {
    const given = { ...grants };
    for (const source of this.sources) {
      if (source.state === 'not honoured') return { allowedTools: false, exec: false };
      if (source.state !== 'in force') continue;
      for (const { grant, asked } of GRANT_OF) if (source.document.neverGrant.includes(grant)) given[asked] = false;
    }
    return given;
  }

  /** The actions every policy allows `server`, in the order mount, approve, lock, link. */
  allowedActions(server: PolicyServer): PolicyAction[] {
    return POLICY_ACTIONS.filter((action) => this.checkServer(server, action) === undefined);
  }

  /** Each file's state and the rules in force, as lines for `status` and `doctor`. */
  describe(): PolicyDescription {
    const files = this.sources.map((source) => ({ path: source.file, state: stateOf(source) }));
    const lines: string[] = [];
    for (const source of this.sources) {
      if (source.state === 'absent') {
        lines.push(`policy ${source.file}: absent`);
      } else if (source.state === 'not honoured') {
        lines.push(`policy ${source.file}: not honoured, so every mount, approval, lock and link is refused: ${escapeForLog(source.why)}`);
      } else {
        lines.push(`policy ${source.file}: in force`, ...documentLines(source.document).map((line) => `  ${line}`));
      }
    }
    if (!this.inForce) lines.push('no policy in force: every server may be mounted, approved, locked and linked');
    return { inForce: this.inForce, files, lines };
  }

  #serverRefusal(source: PolicySource, server: PolicyServer, action: PolicyAction, skill?: PolicySkill): PolicyRefusal | undefined {
    const what = `${skill === undefined ? '' : `skill "${escapeForLog(skill.path)}" of `}${describeServer(server)} may not be ${PAST[action]}`;
    if (source.state === 'absent') return undefined;
    if (source.state === 'not honoured') return new PolicyRefusal(source.file, `not honoured: ${source.why}`, what, server.label);
    const { servers } = source.document;
    if (servers === undefined) return undefined;
    const index = servers.findIndex((rule) => ruleMatches(rule, server.config, this.#platform));
    if (index < 0) return new PolicyRefusal(source.file, 'servers: no rule matches', what, server.label);
    return servers[index]!.may.includes(action) ? undefined : new PolicyRefusal(source.file, `servers[${index}]`, what, server.label);
  }
}

/** The policy of a machine with no policy files: everything allowed. */
export const NO_POLICY = new Policy([]);

/** Where loadPolicy looks, and the seams tests use. */
export interface LoadPolicyOptions extends UserDirsWhere {
  /** The machine-wide policy; null: none. Default /etc/skills-mount/policy.json (none on Windows). */
  machinePath?: string | null | undefined;
  /** The user's policy; default policy.json in the user's skills-mount config folder. */
  userPath?: string | undefined;
  /** The owner of each entry on the way to the machine policy; default its real owner. Tests stand in for root here. */
  ownerUidOf?: OwnerUidOf | undefined;
}

/** Reads both policy files (never throws for a file's sake: a file that cannot be honoured makes the policy refuse everything). */
export async function loadPolicy(options: LoadPolicyOptions): Promise<Policy> {
  const platform = options.platform ?? process.platform;
  const machinePath = options.machinePath === undefined ? (platform === 'win32' ? null : MACHINE_POLICY_PATH) : options.machinePath;
  const userPath = options.userPath ?? userPolicyPath({ env: options.env, home: options.home, platform });
  const sources: PolicySource[] = [];
  if (machinePath !== null) sources.push(await readMachinePolicy(machinePath, options.ownerUidOf));
  sources.push(await readUserPolicy(userPath));
  return new Policy(sources, { platform });
}

// A server's URL in normal form, once per config (the approved view asks for every skill).
const normalUrls = new WeakMap<ServerConfig, NormalUrl | undefined>();

function ruleMatches(rule: ServerRule, config: ServerConfig, platform: NodeJS.Platform): boolean {
  if (rule.kind === 'command') return commandCovers(rule, config, platform);
  if (!normalUrls.has(config)) normalUrls.set(config, serverUrl(config));
  const url = normalUrls.get(config);
  return url !== undefined && urlCovers(rule.normal, url);
}

function skillRefusal(source: PolicySource, server: PolicyServer, skill: PolicySkill, action: PolicyAction): PolicyRefusal | undefined {
  if (source.state !== 'in force' || source.document.skills === undefined) return undefined;
  if (source.document.skills.some((rule) => skillRuleMatches(rule, skill))) return undefined;
  return new PolicyRefusal(source.file, 'skills: no rule matches', `skill "${escapeForLog(skill.path)}" of ${describeServer(server)} may not be ${PAST[action]}`, server.label);
}

function skillRuleMatches(rule: SkillRule, skill: PolicySkill): boolean {
  if (rule.kind === 'path') return rule.glob.matches(skill.path);
  return [skill.skillDigest, skill.resourcesDigest].some((digest) => typeof digest === 'string' && digest.toLowerCase() === rule.digest);
}

/** 'server "acme" (https://host/path)' or 'server "local" (command skills-serve)': never a query or the arguments (either may hold a secret). */
function describeServer(server: PolicyServer): string {
  const { config } = server;
  const where = config.kind === 'stdio' ? `command ${config.command}` : shownUrl(config.url);
  return `server "${escapeForLog(server.label)}" (${escapeForLog(where)})`;
}

function stateOf(source: PolicySource): PolicyFileState {
  return source.state === 'not honoured' ? `not honoured: ${escapeForLog(source.why)}` : source.state;
}

function documentLines(document: PolicyDocument): string[] {
  const lines: string[] = [];
  if (document.servers === undefined) {
    lines.push('servers: any server may be mounted, approved, locked and linked');
  } else {
    document.servers.forEach((rule, index) => {
      const names = rule.kind === 'url' ? `url ${rule.url}` : `command ${[rule.command, ...(rule.args ?? [])].join(' ')}${rule.args === undefined ? ' (any arguments)' : ''}`;
      lines.push(`servers[${index}]: ${escapeForLog(names)} may ${rule.may.length === 0 ? 'do nothing' : rule.may.join(', ')}`);
    });
    lines.push('any other server may do nothing');
  }
  if (document.skills !== undefined) {
    const names = document.skills.map((rule) => (rule.kind === 'path' ? `path ${rule.glob.pattern}` : `digest ${rule.digest}`));
    lines.push(document.skills.length === 0 ? 'skills: none may be approved, locked or linked' : `skills: only those matching ${escapeForLog(names.join(', '))} may be approved, locked or linked`);
  }
  if (document.neverGrant.length > 0) lines.push(`never granted: ${document.neverGrant.join(', ')}`);
  return lines;
}
